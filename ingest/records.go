package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/internal/jsonscan"
	"github.com/faultline/faultline/trace"
)

// Helpers shared by the formats whose files hold JSON records (one record,
// an array of them, or one a line): walking the records with their places in
// the file, reporting a record's problems there, reading arrays and objects
// member by member with their lines, sniffing a record's keys from a head,
// and reading the scores formats record.

// record is one record of a file, located for reports.
type record struct {
	in   *Input
	n    int // 0-based position of the record in the file
	line int // line the record starts on
	// entry names the archive member the record is, in formats that are
	// archives; lines then count within the member.
	entry string
}

// report records a problem of the record at a line of the file, naming the
// record so that a problem deep inside a long one can be placed.
func (r *record) report(line int, severity Severity, format string, args ...any) {
	if r.entry != "" {
		r.in.Report(0, severity, "%s:%d: %s", r.entry, line, fmt.Sprintf(format, args...))
		return
	}
	r.in.Report(line, severity, "record %d (line %d): %s", r.n, r.line, fmt.Sprintf(format, args...))
}

// at returns the file line of something that starts offset lines into the
// record.
func (r *record) at(offset int) int { return r.line + offset }

// eachRecord calls fn with each record of the JSON document in in (see
// jsonRecords). A broken document is reported where it breaks, and what
// was read before it is kept; fn's error stops the walk.
func eachRecord(ctx context.Context, in *Input, fn func(raw json.RawMessage, r *record) error) error {
	return eachRecordScaled(ctx, in, 1, fn)
}

// eachRecordScaled is eachRecord with strings cut at scale times the text
// limit, for a format whose long strings are split into many steps.
func eachRecordScaled(ctx context.Context, in *Input, scale int, fn func(raw json.RawMessage, r *record) error) error {
	records := newJSONRecords(in.jsonText(scale))
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, line, err := records.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var broken *jsonStreamError
		if errors.As(err, &broken) {
			in.Report(broken.Line, Error, "%s; reading stopped after %d records", broken.Msg, n)
			return nil
		}
		if err != nil {
			return err // a read error, which the caller places
		}
		if err := fn(raw, &record{in: in, n: n, line: line}); err != nil {
			return err
		}
	}
}

// decodeRecord decodes a record that should be an object into v, and
// returns how many lines into the record each of its fields starts, to
// place reports about their content. A type error comes back as it is, for
// recordErrorText and errorLineInRecord.
func decodeRecord(raw json.RawMessage, v any) (map[string]int, error) {
	if err := decodeObject(raw, v); err != nil {
		return nil, err
	}
	return fieldLines(raw), nil
}

// decodeObject decodes a record that must be a JSON object into v.
func decodeObject(raw json.RawMessage, v any) error {
	if FirstByte(raw) != '{' {
		return fmt.Errorf("a record should be an object, found %s", JSONKind(raw))
	}
	return json.Unmarshal(raw, v)
}

// fieldLines gives the line, within a decoded object, at which each of its
// fields starts.
func fieldLines(raw json.RawMessage) map[string]int {
	ms, _ := jsonFields(raw) // raw has decoded, so it splits
	lines := make(map[string]int, len(ms))
	for _, m := range ms {
		lines[m.key] = m.lines
	}
	return lines
}

// skip reports a record that could not be decoded, at the line of the
// offending field when the error says which.
func (r *record) skip(raw json.RawMessage, err error) { r.skipPart(0, raw, err, "", "record") }

// skipPart reports a part of the record (what: a step, a message) that
// could not be decoded: raw starts lines into the record, and label, when
// given, names the part ("step 3").
func (r *record) skipPart(lines int, raw json.RawMessage, err error, label, what string) {
	if label != "" {
		label += ": "
	}
	r.report(r.at(lines+errorLineInRecord(raw, err)), Error, "%s%s; %s skipped", label, recordErrorText(err), what)
}

// headKeys reads, as jsonKeys does, the keys of the records at the start of
// head: those of a top-level object (the first, in JSON Lines), or of the
// objects in a top-level array, or (below > 0) of the objects that many
// levels further down. The head may be cut anywhere and may hold NaN.
//
// The map is shared with later calls on the same head and is not to be
// changed: every format's sniffer asks of the same head in turn, and
// tokenizing it each time was a tenth of an ingest of many small files.
func headKeys(head []byte, below int) map[string]string {
	sniffed.Lock()
	defer sniffed.Unlock()
	// The files of a walk are sniffed by several workers at once: a few
	// heads are kept, the oldest replaced.
	var h *sniffedHead
	for i := range sniffed.heads {
		if c := &sniffed.heads[i]; c.keys != nil && bytes.Equal(c.head, head) {
			h = c
			break
		}
	}
	if h == nil {
		h = &sniffed.heads[sniffed.next]
		sniffed.next = (sniffed.next + 1) % len(sniffed.heads)
		h.head, h.keys = append(h.head[:0:0], head...), map[int]map[string]string{}
	}
	keys, ok := h.keys[below]
	if !ok {
		keys = readHeadKeys(head, below)
		h.keys[below] = keys
	}
	return keys
}

// sniffedHead is a head headKeys read, with its keys by below.
type sniffedHead struct {
	head []byte
	keys map[int]map[string]string
}

// sniffed holds the last heads headKeys read.
var sniffed struct {
	sync.Mutex
	heads [4]sniffedHead
	next  int
}

func readHeadKeys(head []byte, below int) map[string]string {
	depth := 0
	switch FirstByte(head) {
	case '[':
		depth = 2
	case '{':
		depth = 1
	default:
		return nil
	}
	head = head[bytes.IndexAny(head, "[{"):] // past the white space and byte-order mark FirstByte skipped
	return jsonKeys(closeCutString(sanitizeJSON(head)), depth+below)
}

// hasAny reports whether keys holds any of names.
func hasAny(keys map[string]string, names ...string) bool {
	for _, n := range names {
		if _, ok := keys[n]; ok {
			return true
		}
	}
	return false
}

// member is one value inside a record: an element of an array or the value
// of an object's key, with the number of lines before it in the record.
type member struct {
	key   string // "" for array elements
	raw   json.RawMessage
	lines int
}

// jsonElements returns the elements of a JSON array. Null is an empty array;
// anything else that is not an array is an error naming what it is.
func jsonElements(raw json.RawMessage) ([]member, error) {
	return splitJSON(raw, '[')
}

// jsonFields returns the members of a JSON object in the order they are
// written, which a map would lose. Null is an empty object.
func jsonFields(raw json.RawMessage) ([]member, error) {
	return splitJSON(raw, '{')
}

func splitJSON(raw json.RawMessage, open byte) ([]member, error) {
	switch FirstByte(raw) {
	case 'n', 0:
		return nil, nil
	case open:
	default:
		want := "an array"
		if open == '{' {
			want = "an object"
		}
		return nil, fmt.Errorf("should be %s, found %s", want, JSONKind(raw))
	}
	if json.Valid(raw) {
		return scanMembers(raw, open), nil
	}
	// Invalid JSON: the decoder says what is wrong, keeping the members
	// before it.
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, errors.New(jsonErrorText(err))
	}
	var out []member
	prev, lines := 0, 0 // newlines are counted from the last member on, not from the start each time
	for dec.More() {
		var m member
		if open == '{' {
			tok, err := dec.Token()
			if err != nil {
				return out, errors.New(jsonErrorText(err))
			}
			m.key, _ = tok.(string) // a key is always a string
		}
		if err := dec.Decode(&m.raw); err != nil {
			return out, errors.New(jsonErrorText(err))
		}
		start := int(dec.InputOffset()) - len(m.raw)
		lines += bytes.Count(raw[prev:start], []byte{'\n'})
		prev, m.lines = start, lines
		out = append(out, m)
	}
	return out, nil
}

// scanMembers splits valid JSON, an array or object opened by open, into
// its members, each a slice of raw: a record of many members is not copied
// member by member, nor its lines counted from its start for each.
func scanMembers(raw []byte, open byte) []member {
	i := bytes.IndexByte(raw, open) + 1 // past the byte-order mark and space FirstByte skipped
	var out []member
	prev, lines := 0, 0
	for {
		i = skipJSONSpace(raw, i)
		if raw[i] == ']' || raw[i] == '}' {
			return out
		}
		var m member
		if open == '{' {
			end := skipJSONValue(raw, i)
			if k := raw[i+1 : end-1]; bytes.IndexByte(k, '\\') < 0 && utf8.Valid(k) {
				m.key = string(k)
			} else {
				_ = json.Unmarshal(raw[i:end], &m.key) // valid JSON: a key is a string (with its escapes read)
			}
			i = skipJSONSpace(raw, end) + 1 // the colon
			i = skipJSONSpace(raw, i)
		}
		end := skipJSONValue(raw, i)
		m.raw = raw[i:end:end]
		lines += bytes.Count(raw[prev:i], []byte{'\n'})
		prev, m.lines = i, lines
		out = append(out, m)
		i = skipJSONSpace(raw, end)
		if raw[i] == ',' {
			i++
		}
	}
}

func skipJSONSpace(raw []byte, i int) int {
	for i < len(raw) && jsonscan.IsSpace(raw[i]) {
		i++
	}
	return i
}

// skipJSONValue returns the end of the value of valid JSON that starts at i.
func skipJSONValue(raw []byte, i int) int {
	depth := 0
	for ; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			i++
			for raw[i] != '"' {
				if raw[i] == '\\' {
					i++
				}
				i++
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
			if depth < 0 {
				return i
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// boolOf reads a boolean written as JSON or as a string ("True", "false").
func boolOf(raw json.RawMessage) (value, ok bool) {
	s, isText := jsontext.TextOf(raw)
	if !isText {
		s = string(bytes.TrimSpace(raw))
	}
	v, err := strconv.ParseBool(strings.TrimSpace(s))
	return v, err == nil
}

// runHash names a run that gives no id of its own by a hash of its
// records (as shortHash does one record's), so that the same run has the
// same id wherever its file lies.
type runHash struct{ h hash.Hash }

func newRunHash() runHash { return runHash{sha256.New()} }

func (r runHash) add(raw []byte) { r.h.Write(raw) }

func (r runHash) id(prefix string) string { return prefix + hex.EncodeToString(r.h.Sum(nil)[:6]) }

// uniqueIDs keeps the trace ids of one file distinct: a repeated id takes
// "#<record>" (records repeat in concatenated files).
type uniqueIDs map[string]bool

func (u uniqueIDs) of(id string, n int) string {
	if u[id] {
		id += "#" + strconv.Itoa(n)
	}
	u[id] = true
	return id
}

// scoreWords are the verdicts formats write as words, read as scores:
// Inspect's C, I, P and N (correct, incorrect, partial, no answer), and the
// words people use for the same.
var scoreWords = map[string]float64{
	"c": 1, "correct": 1, "yes": 1, "true": 1, "pass": 1, "passed": 1, "success": 1, "resolved": 1,
	"i": 0, "incorrect": 0, "no": 0, "false": 0, "fail": 0, "failed": 0, "failure": 0, "n": 0,
	"p": 0.5, "partial": 0.5,
}

// scoreOutcome reads one score as the format's outcome: a boolean, a number
// or a verdict word (see scoreWords). The rule, the same in every format:
// full marks (1, true, C) is a success, a score from 0 up to but excluding 1
// a failure, and a number outside [0, 1] (a scale the format does not
// explain) is kept as the score with the outcome undecided. ok is false when
// raw is no score at all (an object, a list, text that is no verdict).
func scoreOutcome(metric string, raw json.RawMessage) (trace.Outcome, bool) {
	o := trace.Outcome{Source: trace.FormatOutcomeSource, Metric: metric}
	var v float64
	switch FirstByte(raw) {
	case 't', 'f':
		b, ok := boolOf(raw)
		if !ok {
			return o, false
		}
		if b {
			v = 1
		}
	case '"':
		s, _ := jsontext.TextOf(raw)
		w, ok := scoreWords[strings.ToLower(strings.TrimSpace(s))]
		if !ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil {
				return o, false
			}
			w = f
		}
		v = w
	case 0, 'n', '{', '[':
		return o, false
	default:
		if err := json.Unmarshal(raw, &v); err != nil {
			return o, false
		}
	}
	o.Score = &v
	if v >= 0 && v <= 1 {
		success := v == 1
		o.Success = &success
	}
	return o, true
}
