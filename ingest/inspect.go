package ingest

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/faultline/faultline/ingest/internal/chat"
	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/trace"
)

// InspectAI decodes Inspect AI evaluation logs in both forms Inspect
// writes: the .eval archive, a zip holding header.json (or, while a run is
// in progress, _journal/start.json) with the eval's spec and plan, and one
// samples/<id>_epoch_<n>.json per sample; and the .json log, one object
// {version, status, eval, plan, results, stats, error, samples,
// reductions}. Each sample (one epoch of one dataset item) is one trace:
// its messages as steps (see chat.Message), its error and the limit that
// stopped it as error steps, the first score as the outcome, its events
// for the times only.
type InspectAI struct{}

// Name implements Format.
func (InspectAI) Name() string { return "inspect" }

// zipMagic starts every local file header of a zip archive.
var zipMagic = []byte("PK\x03\x04")

// Sniff accepts a zip archive with Inspect's members, recognised from the
// names in the local file headers the head holds, or a JSON log, whose
// object has an eval spec beside Inspect's other fields.
func (InspectAI) Sniff(head []byte) bool {
	if bytes.HasPrefix(head, zipMagic) {
		for _, name := range zipNames(head) {
			if name == "header.json" || name == "_journal/start.json" || inspectSampleEntry(name) {
				return true
			}
		}
		return false
	}
	keys := headKeys(head, 0)
	return FirstByte(head) == '{' && hasAny(keys, "eval") && hasAny(keys, "version", "status", "plan", "samples")
}

// zipNames returns the member names of the local file headers in head.
func zipNames(head []byte) []string {
	var names []string
	for rest := head; ; {
		i := bytes.Index(rest, zipMagic)
		if i < 0 || len(rest) < i+30 {
			return names
		}
		h := rest[i:]
		n := int(binary.LittleEndian.Uint16(h[26:28]))
		if len(h) >= 30+n {
			names = append(names, string(h[30:30+n]))
		}
		rest = h[4:]
	}
}

func inspectSampleEntry(name string) bool {
	return strings.HasPrefix(name, "samples/") && path.Ext(name) == ".json"
}

// inspectHeader is what a log says about the eval as a whole.
type inspectHeader struct {
	Status string `json:"status"`
	Eval   struct {
		EvalID  string `json:"eval_id"`
		RunID   string `json:"run_id"`
		Task    string `json:"task"`
		Model   string `json:"model"`
		Solver  string `json:"solver"`
		Created string `json:"created"`
		Dataset struct {
			Name string `json:"name"`
		} `json:"dataset"`
		Scorers []struct {
			Name string `json:"name"`
		} `json:"scorers"`
	} `json:"eval"`
	Plan struct {
		Steps []struct {
			Solver string `json:"solver"`
		} `json:"steps"`
	} `json:"plan"`
}

// system names the solver: the eval's, or its plan's steps.
func (h *inspectHeader) system() string {
	if h.Eval.Solver != "" {
		return h.Eval.Solver
	}
	var solvers []string
	for _, s := range h.Plan.Steps {
		solvers = append(solvers, s.Solver)
	}
	return strings.Join(solvers, "+")
}

// maxInspectEntry bounds what is read of an archive member, so that a
// corrupt or hostile archive cannot inflate without end. Samples are read
// as they stream, their long texts cut (see DefaultTextLimit), so memory
// does not grow with a sample's size; this bounds the time only.
const maxInspectEntry = 16 << 30

// Decode implements Format.
func (InspectAI) Decode(ctx context.Context, in *Input, emit func(*trace.Trace) error) error {
	emit = in.limited(emit)
	br := bufio.NewReader(in.R)
	magic, _ := br.Peek(len(zipMagic)) // a shorter file is no archive
	if !bytes.Equal(magic, zipMagic) {
		return inspectJSON(ctx, in, newJSONRecords(newClipReader(br, in.textLimit(), true)), emit)
	}
	// An archive is read by its central directory, at the end: files are
	// read in place, anything else (standard input, tests) in memory.
	ra, ok := readerAt(in.R)
	var size int64
	if ok {
		end, err := ra.Seek(0, io.SeekEnd)
		if err != nil {
			return err
		}
		size = end
	} else {
		data, err := io.ReadAll(br)
		if err != nil {
			return err
		}
		ra, size = bytes.NewReader(data), int64(len(data))
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		in.Report(0, Error, "not a readable zip archive: %v", err)
		return nil
	}
	return inspectArchive(ctx, in, zr, emit)
}

// seekReaderAt is a file read in place.
type seekReaderAt interface {
	io.ReaderAt
	io.Seeker
}

// readerAt returns r as a file that can be read in place, when it is one:
// itself, or the file a positionReader counts the reads of.
func readerAt(r io.Reader) (seekReaderAt, bool) {
	if p, ok := r.(*positionReader); ok {
		r = p.r
	}
	ra, ok := r.(seekReaderAt)
	return ra, ok
}

func inspectArchive(ctx context.Context, in *Input, zr *zip.Reader, emit func(*trace.Trace) error) error {
	var h inspectHeader
	for _, name := range []string{"header.json", "_journal/start.json"} {
		raw, err := zipEntry(zr, name, in.textLimit())
		if errors.Is(err, errNoEntry) {
			continue
		}
		if err == nil {
			err = json.Unmarshal(raw, &h)
		}
		if err != nil {
			in.Report(0, Error, "%s: %s; samples read without the eval's model and task", name, recordErrorText(err))
		}
		break
	}
	ids := uniqueIDs{}
	n := 0
	for _, f := range zr.File {
		if !inspectSampleEntry(f.Name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		r := &record{in: in, n: n, line: 1, entry: f.Name}
		n++
		t, err := inspectArchiveSample(f, r, &h, ids)
		if err != nil {
			return err
		}
		if t != nil {
			if err := emit(t); err != nil {
				return err
			}
		}
	}
	if n == 0 {
		in.Report(0, Notice, "the log holds no samples")
	}
	return nil
}

// inspectArchiveSample reads one sample member as it inflates. A member
// that cannot be read is reported and skipped; only the context's end
// stops the archive.
func inspectArchiveSample(f *zip.File, r *record, h *inspectHeader, ids uniqueIDs) (*trace.Trace, error) {
	if f.UncompressedSize64 > maxInspectEntry {
		r.in.Report(0, Error, "%s: %d bytes, more than the %d a sample may have; sample skipped", f.Name, f.UncompressedSize64, int64(maxInspectEntry))
		return nil, nil
	}
	rc, err := f.Open()
	if err != nil {
		r.in.Report(0, Error, "%s: %v; sample skipped", f.Name, err)
		return nil, nil
	}
	defer rc.Close()
	// The size in the header is the archive's word; the reader's limit is ours.
	s := newJSONRecords(newClipReader(io.LimitReader(rc, maxInspectEntry), r.in.textLimit(), true))
	smp, err := readInspectSample(s, r)
	if err == nil {
		// A member is one sample: anything after it is a defect.
		end := s.base + s.dec.InputOffset()
		if _, terr := s.dec.Token(); !errors.Is(terr, io.EOF) {
			err = s.fail(terr)
			if terr == nil {
				err = &jsonStreamError{Line: s.lines.Line(end), Offset: end, Msg: "invalid JSON: more after the sample"}
			}
		}
	}
	var broken *jsonStreamError
	switch {
	case errors.As(err, &broken):
		msg := strings.TrimPrefix(broken.Msg, "invalid JSON: ")
		if broken.Truncated {
			msg = "unexpected end of JSON input"
		}
		r.report(broken.Line, Error, "invalid JSON at byte %d: %s; sample skipped%s", broken.Offset, msg, endsIn(broken, "member"))
		return nil, nil
	case err != nil:
		r.in.Report(0, Error, "%s: %v; sample skipped", f.Name, err)
		return nil, nil
	}
	return smp.trace(h, ids), nil
}

// endsIn names where a truncated document ended, for a report: " (the
// member ends in samples[0].messages)", or "".
func endsIn(e *jsonStreamError, what string) string {
	if !e.Truncated || e.Where == "" {
		return ""
	}
	return fmt.Sprintf(" (the %s ends in %s, at byte %d)", what, e.Where, e.Offset)
}

var errNoEntry = errors.New("no such member")

// zipEntry reads the archive member called name, its long texts cut.
func zipEntry(zr *zip.Reader, name string, limit int) ([]byte, error) {
	for _, f := range zr.File {
		if f.Name == name {
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			return io.ReadAll(newClipReader(io.LimitReader(rc, maxInspectEntry), limit, false))
		}
	}
	return nil, errNoEntry
}

// inspectJSON reads a .json log, streaming its samples one at a time.
// Inspect writes the eval's spec before the samples; samples written
// before it are read without the model and task it gives.
func inspectJSON(ctx context.Context, in *Input, s *jsonRecords, emit func(*trace.Trace) error) error {
	var h inspectHeader
	ids := uniqueIDs{}
	n, read := 0, 0 // samples begun, and read whole
	err := s.members("samples", func(key string, raw json.RawMessage, line int) error {
		var err error
		switch key {
		case "status":
			err = json.Unmarshal(raw, &h.Status)
		case "eval":
			err = json.Unmarshal(raw, &h.Eval)
		case "plan":
			err = json.Unmarshal(raw, &h.Plan)
		}
		if err != nil {
			in.Report(line+errorLineInRecord(raw, err), Error, "field %q: %s; ignored", key, recordErrorText(err))
		}
		return nil
	}, func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := &record{in: in, n: n}
		n++
		smp, err := readInspectSample(s, r)
		if err != nil {
			return err
		}
		read++
		if t := smp.trace(&h, ids); t != nil {
			return emit(t)
		}
		return nil
	})
	if err == nil {
		// The log is one object: anything after it is not read.
		end := s.base + s.dec.InputOffset()
		if _, terr := s.dec.Token(); !errors.Is(terr, io.EOF) {
			in.Report(s.lines.Line(end), Error, "more after the log's object, which ends at byte %d; not read", end)
		}
	}
	var broken *jsonStreamError
	if errors.As(err, &broken) {
		in.Report(broken.Line, Error, "%s; reading stopped after %d samples%s", broken.Msg, read, endsIn(broken, "log"))
		return nil
	}
	if err == nil && n == 0 {
		in.Report(0, Notice, "the log holds no samples")
	}
	return err
}

// members walks the members of a top-level object, passing each member's
// value to fn with the line it starts on, except that the elements of the
// array under the key each are read one at a time by elem, which must read
// exactly one value from s, so that a log's samples are never all in
// memory. A defect of the document, or a top-level value that is not an
// object, is a *jsonStreamError.
func (s *jsonRecords) members(each string, fn func(key string, raw json.RawMessage, line int) error, elem func() error) error {
	tok, err := s.dec.Token()
	if err != nil {
		return s.tokenError(err)
	}
	if tok != json.Delim('{') {
		return &jsonStreamError{Line: 1, Msg: "the log should be an object"}
	}
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return s.tokenError(err)
		}
		key, _ := tok.(string) // inside an object, Token returns keys as strings
		if key == each {
			if err := s.elements(key, elem); err != nil {
				return err
			}
			continue
		}
		raw, line, err := s.value()
		if err != nil {
			return err
		}
		if err := fn(key, raw, line); err != nil {
			return err
		}
	}
	if _, err := s.dec.Token(); err != nil {
		return s.tokenError(err)
	}
	return nil
}

// tokenError stops the walk on an error reading a token: the end of the
// input, where a token was due, is a truncated document.
func (s *jsonRecords) tokenError(err error) error {
	if errors.Is(err, io.EOF) {
		return s.truncated("the file ends inside the log")
	}
	return s.fail(err)
}

// recordTokenError is tokenError inside a sample.
func (s *jsonRecords) recordTokenError(err error) error {
	if errors.Is(err, io.EOF) {
		return s.truncated("the file ends inside a record")
	}
	return s.fail(err)
}

// elements calls elem for each element of the array a member holds; null
// holds none. A member of another kind stops the walk, as a defect of the
// document: reading past it would need the value whole.
func (s *jsonRecords) elements(key string, elem func() error) error {
	tok, err := s.dec.Token()
	if err != nil {
		return s.tokenError(err)
	}
	switch {
	case tok == nil:
		return nil // null: no elements
	case tok != json.Delim('['):
		return &jsonStreamError{Line: s.lines.Line(s.base + s.dec.InputOffset()), Msg: fmt.Sprintf("field %q should be an array", key)}
	}
	for s.dec.More() {
		if err := elem(); err != nil {
			return err
		}
	}
	if _, err := s.dec.Token(); err != nil {
		return s.tokenError(err)
	}
	return nil
}

// tokenLine returns the line of the token Token has just read, when it
// was a delimiter.
func (s *jsonRecords) tokenLine() int {
	return s.lines.Line(s.base + s.dec.InputOffset() - 1)
}

// skipRest reads past the rest of a value whose first depth containers
// Token has opened.
func (s *jsonRecords) skipRest(depth int) error {
	for depth > 0 {
		tok, err := s.dec.Token()
		if err != nil {
			return s.recordTokenError(err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// scalarOrSkip stands for a value that is not the container wanted, whose
// first token Token has read: the value itself when it is a scalar, or an
// empty container of its kind once it is read past, which is enough to say
// what it was.
func (s *jsonRecords) scalarOrSkip(tok json.Token) (json.RawMessage, error) {
	switch tok {
	case json.Delim('{'):
		return json.RawMessage("{}"), s.skipRest(1)
	case json.Delim('['):
		return json.RawMessage("[]"), s.skipRest(1)
	}
	if n, ok := tok.(json.Number); ok {
		return json.RawMessage(n), nil
	}
	raw, err := json.Marshal(tok)
	return raw, err
}

// inspectRead is a sample as read: the members inspectTrace reads, joined
// in one object (its events left out, its attachments those its messages
// use), with where each came from in the file; or a stand-in for the value
// (see scalarOrSkip), when it is not an object.
type inspectRead struct {
	r       *record
	raw     json.RawMessage
	members []inspectMember
	object  bool
	// first and last are the earliest and latest times of the events.
	first, last time.Time
}

// inspectMember places a member in inspectRead.raw: it starts at offset
// off there and on line in the file.
type inspectMember struct {
	key  string
	off  int
	line int
}

// readInspectSample reads the next value of s as a sample, member by
// member, so that what a sample holds beyond its messages (its events, a
// model call's whole history each) is never held: events are read one at a
// time for their times, and only the attachments the messages use are kept.
func readInspectSample(s *jsonRecords, r *record) (*inspectRead, error) {
	smp := &inspectRead{r: r}
	tok, err := s.dec.Token()
	if err != nil {
		return nil, s.recordTokenError(err)
	}
	if tok != json.Delim('{') {
		r.line = s.lines.Line(s.base + s.dec.InputOffset())
		smp.raw, err = s.scalarOrSkip(tok)
		return smp, err
	}
	r.line = s.tokenLine()
	smp.object = true
	buf := []byte{'{'}
	var refs map[string]bool // the attachments the messages and input use, once read
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return nil, s.recordTokenError(err)
		}
		key, _ := tok.(string) // inside an object, Token returns keys as strings
		var raw json.RawMessage
		line := 0
		switch {
		case strings.EqualFold(key, "events"):
			if err := smp.events(s); err != nil {
				return nil, err
			}
			continue
		case strings.EqualFold(key, "attachments"):
			raw, line, err = inspectAttachments(s, refs)
		default:
			raw, line, err = s.value()
		}
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(key, "messages") || strings.EqualFold(key, "input") {
			if refs == nil {
				refs = map[string]bool{}
			}
			for _, m := range inspectAttachment.FindAllSubmatch(raw, -1) {
				refs[string(m[1])] = true
			}
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendQuote(buf, key)
		buf = append(buf, ':')
		smp.members = append(smp.members, inspectMember{key: key, off: len(buf), line: line})
		buf = append(buf, raw...)
	}
	if _, err := s.dec.Token(); err != nil {
		return nil, s.recordTokenError(err)
	}
	smp.raw = append(buf, '}')
	return smp, nil
}

// events reads a sample's events one at a time for their times. Events of
// another shape give none.
func (smp *inspectRead) events(s *jsonRecords) error {
	tok, err := s.dec.Token()
	if err != nil {
		return s.recordTokenError(err)
	}
	if tok != json.Delim('[') {
		_, err := s.scalarOrSkip(tok)
		return err
	}
	for s.dec.More() {
		var ev struct {
			Timestamp string `json:"timestamp"`
		}
		err := s.dec.Decode(&ev)
		var typ *json.UnmarshalTypeError
		if err != nil && !errors.As(err, &typ) {
			return s.fail(err)
		}
		ts := parseTime(ev.Timestamp)
		if ts.IsZero() {
			continue
		}
		if smp.first.IsZero() || ts.Before(smp.first) {
			smp.first = ts
		}
		if ts.After(smp.last) {
			smp.last = ts
		}
	}
	if _, err := s.dec.Token(); err != nil {
		return s.recordTokenError(err)
	}
	return nil
}

// inspectAttachments reads a sample's attachments, keeping those in refs
// (all of them when refs is nil: the messages are not read yet).
func inspectAttachments(s *jsonRecords, refs map[string]bool) (json.RawMessage, int, error) {
	tok, err := s.dec.Token()
	if err != nil {
		return nil, 0, s.recordTokenError(err)
	}
	line := s.tokenLine()
	if tok != json.Delim('{') {
		raw, err := s.scalarOrSkip(tok)
		return raw, line, err
	}
	buf := []byte{'{'}
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return nil, 0, s.recordTokenError(err)
		}
		key, _ := tok.(string) // inside an object, Token returns keys as strings
		raw, _, err := s.value()
		if err != nil {
			return nil, 0, err
		}
		if refs != nil && !refs[key] {
			continue
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendQuote(buf, key)
		buf = append(append(buf, ':'), raw...)
	}
	if _, err := s.dec.Token(); err != nil {
		return nil, 0, s.recordTokenError(err)
	}
	return append(buf, '}'), line, nil
}

// lineOf returns the file line of an offset in raw.
func (smp *inspectRead) lineOf(off int64) int {
	line := smp.r.line
	for _, m := range smp.members {
		if int64(m.off) > off {
			break
		}
		line = m.line + bytes.Count(smp.raw[m.off:off], []byte{'\n'})
	}
	return line
}

// fieldLines gives, as decodeRecord does, how many lines into the sample
// each member starts.
func (smp *inspectRead) fieldLines() map[string]int {
	lines := make(map[string]int, len(smp.members))
	for _, m := range smp.members {
		lines[m.key] = m.line - smp.r.line
	}
	return lines
}

// trace decodes the sample and makes its trace, or reports why it cannot
// and returns nil.
func (smp *inspectRead) trace(h *inspectHeader, ids uniqueIDs) *trace.Trace {
	r := smp.r
	if !smp.object {
		r.skipPart(0, smp.raw, decodeObject(smp.raw, new(inspectSample)), "", "sample")
		return nil
	}
	var s inspectSample
	if err := json.Unmarshal(smp.raw, &s); err != nil {
		line := r.line
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			line = smp.lineOf(typ.Offset)
		}
		r.report(line, Error, "%s; sample skipped", recordErrorText(err))
		return nil
	}
	return inspectTrace(&s, smp.raw, smp.fieldLines(), smp.first, smp.last, r, h, ids)
}

// inspectSample is one sample, the fields read.
type inspectSample struct {
	ID       json.RawMessage `json:"id"`
	Epoch    json.RawMessage `json:"epoch"`
	Input    json.RawMessage `json:"input"`
	Target   json.RawMessage `json:"target"`
	Messages json.RawMessage `json:"messages"`
	Output   struct {
		Model string `json:"model"`
	} `json:"output"`
	Scores     json.RawMessage `json:"scores"`
	ModelUsage map[string]struct {
		Input     int `json:"input_tokens"`
		Output    int `json:"output_tokens"`
		Total     int `json:"total_tokens"`
		CacheRead int `json:"input_tokens_cache_read"`
		Reasoning int `json:"reasoning_tokens"`
	} `json:"model_usage"`
	Error *struct {
		Message   string `json:"message"`
		Traceback string `json:"traceback"`
	} `json:"error"`
	Limit *struct {
		Type  string          `json:"type"`
		Limit json.RawMessage `json:"limit"`
	} `json:"limit"`
	StartedAt   string            `json:"started_at"`
	CompletedAt string            `json:"completed_at"`
	UUID        string            `json:"uuid"`
	Attachments map[string]string `json:"attachments"`
}

// inspectAttachment is a reference Inspect writes in place of a long text,
// kept once in the sample's attachments.
var inspectAttachment = regexp.MustCompile(`"attachment://([0-9a-fA-F]+)"`)

// inspectTrace turns a decoded sample into a trace. raw is the sample
// as read, lines how many lines into it each field starts, first and last
// the times of its events.
func inspectTrace(smp *inspectSample, raw json.RawMessage, lines map[string]int, first, last time.Time, r *record, h *inspectHeader, ids uniqueIDs) *trace.Trace {
	if len(smp.Attachments) > 0 {
		// Attachments are strings without newlines once quoted, so lines
		// into the messages stay where they were.
		resolve := func(ref []byte) []byte {
			text, ok := smp.Attachments[string(inspectAttachment.FindSubmatch(ref)[1])]
			if !ok {
				return ref
			}
			b, _ := json.Marshal(text) // a string always marshals
			return b
		}
		smp.Messages = inspectAttachment.ReplaceAllFunc(smp.Messages, resolve)
		smp.Input = inspectAttachment.ReplaceAllFunc(smp.Input, resolve)
	}
	id, _ := jsontext.TextOf(smp.ID)
	epoch, _ := jsontext.TextOf(smp.Epoch)
	t := &trace.Trace{Format: "inspect", Source: r.in.Path + "#" + jsontext.FirstNonEmpty(r.entry, strconv.Itoa(r.n)),
		System: h.system(), Model: jsontext.FirstNonEmpty(h.Eval.Model, smp.Output.Model), Scenario: id, Trial: epoch,
		Started: parseTime(smp.StartedAt), Ended: parseTime(smp.CompletedAt)}
	t.SetMeta("task", h.Eval.Task)
	t.SetMeta("dataset", h.Eval.Dataset.Name)
	t.SetMeta("eval_id", h.Eval.EvalID)
	t.SetMeta("run_id", h.Eval.RunID)
	t.SetMeta("status", h.Status)
	t.SetMeta("sample_uuid", smp.UUID)
	if target, ok := jsontext.TextOf(smp.Target); ok {
		t.SetMeta("target", target)
	}
	if task, ok := jsontext.TextOf(smp.Input); ok {
		t.Task = task
	} else {
		t.Task = inspectInput(smp.Input)
	}
	c := &chatLog{t: t, r: r}
	c.messages(smp.Messages, lines["messages"], "messages")
	if e := smp.Error; e != nil {
		t.Append(trace.Step{Kind: trace.KindError, Role: trace.RoleHarness, Type: "error", Text: jsontext.JoinNonEmpty(e.Message, e.Traceback)})
	}
	if l := smp.Limit; l != nil {
		t.Append(trace.Step{Kind: trace.KindError, Role: trace.RoleHarness, Type: "limit", Text: fmt.Sprintf("%s limit reached (%s)", l.Type, jsontext.Compact(l.Limit))})
	}
	inspectTimes(t, first, last)
	for _, u := range smp.ModelUsage {
		t.Usage.InputTokens += u.Input
		t.Usage.CachedInputTokens += u.CacheRead
		t.Usage.OutputTokens += u.Output
		t.Usage.ReasoningTokens += u.Reasoning
		t.Usage.TotalTokens += u.Total
	}
	inspectScores(t, r, h, smp.Scores, lines["scores"])
	evalID := jsontext.FirstNonEmpty(h.Eval.EvalID, h.Eval.RunID, smp.UUID)
	if evalID == "" {
		evalID = shortHash(string(raw))
	}
	t.ID = ids.of(fmt.Sprintf("inspect:%s:%s:%s", evalID, id, epoch), r.n)
	finishTrace(t, r)
	return t
}

// inspectInput reads a sample's input given as messages: the text of its
// user messages.
func inspectInput(raw json.RawMessage) string {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(raw, &msgs) // an input of another shape leaves the task empty
	var texts []string
	for _, m := range msgs {
		if m.Role == "user" {
			text, _ := chat.Parts(m.Content)
			texts = append(texts, text)
		}
	}
	return jsontext.JoinNonEmpty(texts...)
}

// inspectTimes takes a sample's start and end from its events' earliest
// and latest times when the sample does not say (logs before Inspect
// 0.3.100 do not).
func inspectTimes(t *trace.Trace, first, last time.Time) {
	if !t.Started.IsZero() && !t.Ended.IsZero() || first.IsZero() {
		return
	}
	if t.Started.IsZero() || first.Before(t.Started) {
		t.Started = first
	}
	if last.After(t.Ended) {
		t.Ended = last
	}
}

// inspectScores takes the outcome from the first scorer the eval declares
// (or, without a header, the first in the sample) whose value reads as a
// score; every scorer's value goes in the detail.
func inspectScores(t *trace.Trace, r *record, h *inspectHeader, raw json.RawMessage, lines int) {
	scores, err := jsonFields(raw)
	if err != nil {
		r.report(r.at(lines), Error, `field "scores" %v; no outcome`, err)
		return
	}
	rank := func(name string) int {
		for i, s := range h.Eval.Scorers {
			if s.Name == name {
				return i
			}
		}
		return len(h.Eval.Scorers)
	}
	var best *trace.Outcome
	bestRank := 0
	var all []string
	for _, s := range scores {
		var sc struct {
			Value  json.RawMessage `json:"value"`
			Answer string          `json:"answer"`
		}
		if json.Unmarshal(s.raw, &sc) != nil {
			r.report(r.at(lines+s.lines), Error, "score %q should be an object with a value; ignored", s.key)
			continue
		}
		all = append(all, s.key+"="+jsontext.Compact(sc.Value))
		o, ok := scoreOutcome(s.key, sc.Value)
		if ok && (best == nil || rank(s.key) < bestRank) {
			o.Detail = prefixed("answer: ", trace.Clip(sc.Answer, 200))
			best, bestRank = &o, rank(s.key)
		}
	}
	if best == nil {
		return
	}
	if len(all) > 1 {
		best.Detail = jsontext.JoinNonEmpty(strings.Join(all, " "), best.Detail)
	}
	t.Outcomes = []trace.Outcome{*best}
}
