// Package labels reads failure-mode labels: which MAST modes a labeller says
// are present on which traces, and where. They are the reference that
// `faultline eval` holds an annotation source (detectors, a judge) against.
// (Outcome labels, which say whether a run succeeded, are another thing and
// live with the scorers.)
//
// Two kinds of file are read: MAD's human-labelled dataset, through the MAD
// trace decoder, taking the annotators' consensus or one annotator; and
// faultline's own label format, JSON (an array of objects, or one object per
// line) or CSV with a header, one label per record:
//
//	{"trace": "mad:AG2:12", "mode": "FM-1.3", "present": true, "steps": [4, 9]}
//
//	trace,mode,present,steps,quote,note
//	mad:AG2:12,FM-1.3,true,4;9,What is the total?,asks the same question twice
//
// The optional quote is the evidence, verbatim from the cited steps, and the
// note free text; both are kept with a label (faultline serve stores and
// exports them) and play no part in comparisons.
//
// A record's problems are reported with its file and line, and the record is
// skipped; the rest of the file is still read.
package labels

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// ModeLabel is one decision about one failure mode on one trace.
type ModeLabel struct {
	Trace   string
	Mode    string        // a MAST code, FM-1.1 … FM-3.3
	Verdict trace.Verdict // present, absent or unsure
	// Steps are where the mode shows, as indices into the trace's steps;
	// only present labels have them, and Quote, the evidence in them.
	Steps []int
	Quote string
	Note  string
	// Implied marks an absence no record states, inferred from silence
	// (see Set).
	Implied bool
	// Line is the line of the file the label was read from, 0 when it did
	// not come from one line of a file.
	Line int
}

// Set is the labels of one label source, at most one per trace and mode,
// ordered by trace and mode.
//
// In faultline's own format, silence is absence: a trace that has any
// label in the file is taken to be labelled for every mode the file labels
// anywhere, and a mode it is not labelled with there is absent. So a file
// may list only the modes present on each trace, and a file about FM-3.3
// alone says nothing about the other modes. MAD files decide every mode
// explicitly, and a cell left empty there stays undecided.
type Set struct {
	Name string // the file (or stored source) the labels come from
	// Detail says how the labels were made, e.g. by consensus.
	Detail string
	// Sources are the annotation sources behind the labels.
	Sources []string
	Labels  []ModeLabel
}

// Fields of faultline's label format, the required ones first.
var (
	fields   = []string{"trace", "mode", "present", "steps", "quote", "note"}
	required = fields[:3]
)

// Consensus picks, from a MAD file, the majority verdict of its human
// annotators rather than one source's labels; it is what an empty pick means.
const Consensus = "consensus"

// ReadFile reads the labels in the file at path, recognising its format by
// its content: a MAD dataset, JSON (array or JSON Lines) or CSV. From a MAD
// file it takes pick: Consensus (or "") for the annotators' majority, or
// one of the file's sources, such as mad:annotator_1 or mad:llm; pick must
// be empty for the other formats. The error is for a file that cannot be
// read at all; problems with single records are returned as issues.
func ReadFile(ctx context.Context, path, pick string) (*Set, []ingest.Issue, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil {
		return nil, nil, err
	} else if info.IsDir() {
		return nil, nil, fmt.Errorf("%s is a directory, not a label file", path)
	}
	head := make([]byte, ingest.SniffSize)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	if (ingest.MAD{}).Sniff(head[:n]) {
		// Read again from the start by the trace decoder, which streams: the
		// full MAD dataset is 200 MB.
		return readMAD(ctx, path, pick)
	}
	if pick != "" {
		return nil, nil, fmt.Errorf("%s is not a MAD dataset: a label source can only be picked from a MAD file's annotators", path)
	}
	rest, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, err
	}
	set, issues := Parse(path, append(head[:n], rest...))
	return set, issues, nil
}

// Parse reads labels in faultline's format, JSON or CSV as its first byte
// says, from data, the content of the file path.
func Parse(path string, data []byte) (*Set, []ingest.Issue) {
	switch ingest.FirstByte(trimBOM(data)) {
	case '[', '{':
		return ParseJSON(path, data)
	}
	return ParseCSV(path, data)
}

func trimBOM(data []byte) []byte { return bytes.TrimPrefix(data, []byte("\ufeff")) }

// record is one label as read, before the file's labels are put together.
type record struct {
	trace, mode string
	verdict     trace.Verdict
	steps       []int
	quote, note string
	line        int
}

// reader collects a file's records and issues.
type reader struct {
	path    string
	records []record
	issues  []ingest.Issue
	ignored []string // unknown fields or columns, each once
}

func (r *reader) errorf(line int, format string, args ...any) {
	r.issues = append(r.issues, ingest.Issue{Path: r.path, Line: line, Severity: ingest.Error, Message: fmt.Sprintf(format, args...)})
}

func (r *reader) noticef(line int, format string, args ...any) {
	r.issues = append(r.issues, ingest.Issue{Path: r.path, Line: line, Severity: ingest.Notice, Message: fmt.Sprintf(format, args...)})
}

func (r *reader) ignore(field string) {
	if !slices.Contains(r.ignored, field) {
		r.ignored = append(r.ignored, field)
	}
}

// ParseJSON reads labels in faultline's JSON format from data, the content
// of the file path: a JSON array of label objects, or JSON Lines (one
// object per line). A syntax error inside an array ends the reading there;
// in JSON Lines it costs only its line.
func ParseJSON(path string, data []byte) (*Set, []ingest.Issue) {
	r := &reader{path: path}
	data = trimBOM(data)
	switch ingest.FirstByte(data) {
	case '[':
		r.jsonArray(data)
	case '{':
		for i, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 {
				r.jsonRecord(line, i+1)
			}
		}
	default:
		r.errorf(1, "not a JSON array of labels or JSON Lines of labels")
	}
	if len(r.ignored) > 0 {
		r.noticef(0, "fields %s are not label fields (%s); ignored", quoteAll(r.ignored), strings.Join(fields, ", "))
	}
	return r.result()
}

func (r *reader) jsonArray(data []byte) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // the '[' firstByte saw
		r.errorf(1, "%v", err)
		return
	}
	n := 0
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			r.errorf(lineAt(data, syntaxOffset(err, dec)), "%s; reading stopped after %d labels", jsonErrorText(err), n)
			return
		}
		end := int(dec.InputOffset())
		r.jsonRecord(raw, lineAt(data, end-len(raw)))
		n++
	}
	if _, err := dec.Token(); err != nil {
		r.errorf(lineAt(data, syntaxOffset(err, dec)), "%s; reading stopped after %d labels", jsonErrorText(err), n)
		return
	}
	if _, err := dec.Token(); err != io.EOF {
		r.errorf(lineAt(data, int(dec.InputOffset())), "unexpected data after the array of labels; ignored")
	}
}

// syntaxOffset is where a decoding error happened.
func syntaxOffset(err error, dec *json.Decoder) int {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return int(syn.Offset)
	}
	return int(dec.InputOffset())
}

// jsonErrorText words a JSON error without Go's package prefix.
func jsonErrorText(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "the JSON ends in the middle of a value"
	}
	return "bad JSON: " + strings.TrimPrefix(err.Error(), "json: ")
}

// lineAt is the 1-based line of a byte offset in data.
func lineAt(data []byte, offset int) int {
	offset = max(0, min(offset, len(data)))
	return 1 + bytes.Count(data[:offset], []byte("\n"))
}

// jsonRecord reads one label object that starts on line.
func (r *reader) jsonRecord(raw []byte, line int) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typ):
			r.errorf(line, "a label should be a JSON object, found %s; skipped", ingest.JSONKind(raw))
		case err != nil:
			r.errorf(line, "%s; label skipped", jsonErrorText(err))
		default:
			r.errorf(line, "a label should be a JSON object, found null; skipped")
		}
		return
	}
	text := func(field string) (string, bool) {
		v, ok := obj[field]
		if !ok || string(v) == "null" {
			r.errorf(line, "label has no %q; skipped", field)
			return "", false
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			r.errorf(line, "field %q should be a string, found %s; label skipped", field, ingest.JSONKind(v))
			return "", false
		}
		return s, true
	}
	rec := record{line: line}
	var ok bool
	if rec.trace, ok = text("trace"); !ok {
		return
	}
	if rec.trace = strings.TrimSpace(rec.trace); rec.trace == "" {
		r.errorf(line, "no trace id; label skipped")
		return
	}
	var mode string
	if mode, ok = text("mode"); !ok {
		return
	}
	present, has := obj["present"]
	if !has {
		r.errorf(line, `label has no "present" (true, false or null for unsure); skipped`)
		return
	}
	cell := string(present)
	switch ingest.FirstByte(present) {
	case '"':
		_ = json.Unmarshal(present, &cell) // a valid string: decoding the object checked it
	case '{', '[':
		r.errorf(line, `field "present" should be true, false or null, found %s; label skipped`, ingest.JSONKind(present))
		return
	}
	var steps []int
	if v, ok := obj["steps"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &steps); err != nil {
			r.errorf(line, `field "steps" should be an array of step indices (whole numbers from 0), found %s; label skipped`, trace.Clip(string(v), 40))
			return
		}
	}
	for _, field := range []struct {
		name string
		dst  *string
	}{{"quote", &rec.quote}, {"note", &rec.note}} {
		if v, ok := obj[field.name]; ok && string(v) != "null" && json.Unmarshal(v, field.dst) != nil {
			r.errorf(line, "field %q should be a string, found %s; label skipped", field.name, ingest.JSONKind(v))
			return
		}
	}
	for k := range obj {
		if !slices.Contains(fields, k) {
			r.ignore(k)
		}
	}
	r.add(rec, mode, cell, steps)
}

// ParseCSV reads labels in faultline's CSV format from data, the content of
// the file path: comma-separated, quoted as RFC 4180 says, with a header
// naming the columns trace, mode and present, and optionally steps and note,
// in any order.
func ParseCSV(path string, data []byte) (*Set, []ingest.Issue) {
	r := &reader{path: path}
	cr := csv.NewReader(bytes.NewReader(trimBOM(data)))
	cr.FieldsPerRecord = -1 // checked here, so that the message can say more
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			r.errorf(0, "empty file: no header, no labels")
		} else {
			r.errorf(csvErrorLine(err), "header: %s", csvErrorText(err))
		}
		return r.result()
	}
	col := map[string]int{}
	for i, name := range header {
		name = strings.ToLower(strings.TrimSpace(name))
		if _, dup := col[name]; dup {
			r.errorf(1, "column %q appears twice in the header; no labels read", name)
			return r.result()
		}
		col[name] = i
		if !slices.Contains(fields, name) {
			r.ignore(name)
		}
	}
	for _, need := range required {
		if _, ok := col[need]; !ok {
			r.errorf(1, "the header should name the columns trace, mode and present (steps and note are optional), found %s; no labels read", trace.Clip(quoteAll(header), 80))
			return r.result()
		}
	}
	if len(r.ignored) > 0 {
		r.noticef(1, "columns %s are not label fields (%s); ignored", quoteAll(r.ignored), strings.Join(fields, ", "))
	}
	cell := func(row []string, name string) string {
		if i, ok := col[name]; ok && i < len(row) {
			return strings.TrimSpace(row[i])
		}
		return ""
	}
	lastErrLine := 0
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// csv.Reader goes on after a malformed record; a second error on
			// the same line would mean it is stuck, so stop there.
			line := csvErrorLine(err)
			if line <= lastErrLine {
				break
			}
			lastErrLine = line
			r.errorf(line, "%s; row skipped", csvErrorText(err))
			continue
		}
		line, _ := cr.FieldPos(0)
		if len(row) != len(header) {
			r.errorf(line, "row has %d fields, the header %d; skipped", len(row), len(header))
			continue
		}
		rec := record{line: line, trace: cell(row, "trace"), quote: cell(row, "quote"), note: cell(row, "note")}
		if rec.trace == "" {
			r.errorf(line, "no trace id; row skipped")
			continue
		}
		steps, err := ParseSteps(cell(row, "steps"))
		if err != nil {
			r.errorf(line, "steps: %v; row skipped", err)
			continue
		}
		r.add(rec, cell(row, "mode"), cell(row, "present"), steps)
	}
	return r.result()
}

func csvErrorLine(err error) int {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.StartLine
	}
	return 0
}

func csvErrorText(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return "bad CSV: " + pe.Err.Error()
	}
	return err.Error()
}

// ParseSteps reads a list of step indices separated by semicolons, commas or
// spaces, as the label format's CSV writes them.
func ParseSteps(s string) ([]int, error) {
	var steps []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' || r == ' ' || r == '\t' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a step index (a whole number from 0)", f)
		}
		steps = append(steps, n)
	}
	return steps, nil
}

// add checks the mode and present cells and steps common to both formats
// and keeps the record.
func (r *reader) add(rec record, mode, present string, steps []int) {
	code, err := parseMode(mode)
	if err != nil {
		r.errorf(rec.line, "%v; label skipped", err)
		return
	}
	v, ok := parseVerdict(present)
	if !ok {
		r.errorf(rec.line, "present is %q; write true, false or unsure; label skipped", trace.Clip(present, 20))
		return
	}
	for _, s := range steps {
		if s < 0 {
			r.errorf(rec.line, "step %d: steps are numbered from 0; label skipped", s)
			return
		}
	}
	if (len(steps) > 0 || rec.quote != "") && v != trace.Present {
		r.noticef(rec.line, "steps and quotes say where a mode is; on a label that is not present they are ignored")
		steps, rec.quote = nil, ""
	}
	rec.mode, rec.verdict, rec.steps = code, v, steps
	r.records = append(r.records, rec)
}

// parseMode reads a mode as a MAST code (FM-1.3 or 1.3), a mode's name
// ("Step repetition", or an older draft's name for it), or both; code and
// name must then agree, since the 3.2 and 3.3 names are easily swapped.
func parseMode(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", errors.New("no mode")
	}
	first, rest, _ := strings.Cut(s, " ")
	if m, ok := taxonomy.MAST.Mode(first); ok {
		if strings.TrimSpace(rest) == "" {
			return m.Code, nil
		}
		named := taxonomy.MAST.MapLabel(s).Code
		if named != m.Code {
			return "", fmt.Errorf("mode %q: the code says %s and the name %s; write the code or the name alone", trace.Clip(s, 60), m.Code, nameOf(named))
		}
		return m.Code, nil
	}
	if code := taxonomy.MAST.MapLabel(s).Code; code != "" {
		return code, nil
	}
	// faultline's own system codes (SYS-1 …) label harness and
	// infrastructure failures, which reference label sets mark too.
	if m, ok := taxonomy.System.Mode(s); ok {
		return m.Code, nil
	}
	return "", fmt.Errorf("unknown mode %q (write a MAST code, FM-1.1 to FM-3.3, a mode's name, or a system code, SYS-1 to SYS-%d)", trace.Clip(s, 60), len(taxonomy.System.Modes))
}

func nameOf(code string) string {
	if code == "" {
		return "no known mode"
	}
	return code
}

// parseVerdict reads a present cell. An empty cell (null in JSON) is
// unsure: the labeller looked and could not decide.
func parseVerdict(s string) (trace.Verdict, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "y", "1", "present":
		return trace.Present, true
	case "false", "no", "n", "0", "absent":
		return trace.Absent, true
	case "", "null", "unsure", "?":
		return trace.Unsure, true
	}
	return "", false
}

// result is the file's labels and its issues in the order of lines (those
// about the whole file first).
func (r *reader) result() (*Set, []ingest.Issue) {
	set := r.set()
	sortIssues(r.issues)
	return set, r.issues
}

func sortIssues(issues []ingest.Issue) {
	slices.SortStableFunc(issues, func(a, b ingest.Issue) int { return cmp.Compare(a.Line, b.Line) })
}

// set puts the records together: one label per trace and mode (a pair
// labelled twice the same way is merged, a contradiction left unsure), and
// the absences silence implies (see Set).
func (r *reader) set() *Set {
	type key struct{ trace, mode string }
	byKey := map[key]int{}
	contradicted := map[key]bool{}
	var out []ModeLabel
	traces, modes := map[string]bool{}, map[string]bool{}
	for _, rec := range r.records {
		traces[rec.trace], modes[rec.mode] = true, true
		k := key{rec.trace, rec.mode}
		i, seen := byKey[k]
		switch {
		case !seen:
			byKey[k] = len(out)
			out = append(out, ModeLabel{Trace: rec.trace, Mode: rec.mode, Verdict: rec.verdict, Steps: rec.steps, Quote: rec.quote, Note: rec.note, Line: rec.line})
		case contradicted[k]:
			// Already unsure, and already reported.
		case out[i].Verdict == rec.verdict:
			out[i].Steps = append(out[i].Steps, rec.steps...)
			out[i].Quote, out[i].Note = cmp.Or(out[i].Quote, rec.quote), cmp.Or(out[i].Note, rec.note)
		default:
			r.errorf(rec.line, "trace %q, %s: labelled %s here and %s on line %d; counted as unsure", rec.trace, rec.mode, rec.verdict, out[i].Verdict, out[i].Line)
			contradicted[k] = true
			out[i].Verdict, out[i].Steps, out[i].Quote = trace.Unsure, nil, ""
		}
	}
	for t := range traces {
		for m := range modes {
			if _, ok := byKey[key{t, m}]; !ok {
				out = append(out, ModeLabel{Trace: t, Mode: m, Verdict: trace.Absent, Implied: true})
			}
		}
	}
	for i := range out {
		slices.Sort(out[i].Steps)
		out[i].Steps = slices.Compact(out[i].Steps)
	}
	sortLabels(out)
	return &Set{Name: r.path, Labels: out}
}

func sortLabels(ls []ModeLabel) {
	slices.SortFunc(ls, func(a, b ModeLabel) int {
		return cmp.Or(strings.Compare(a.Trace, b.Trace), strings.Compare(a.Mode, b.Mode))
	})
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// Check keeps the labels of the traces in stepCounts (trace id → number of
// steps, the traces there are to compare on) and drops the others, and
// drops steps a trace does not have, reporting each trace and step once.
func (s *Set) Check(stepCounts map[string]int) []ingest.Issue {
	var issues []ingest.Issue
	report := func(l ModeLabel, format string, args ...any) {
		issues = append(issues, ingest.Issue{Path: s.Name, Line: l.Line, Severity: ingest.Error, Message: fmt.Sprintf(format, args...)})
	}
	kept := s.Labels[:0]
	missing := map[string]bool{}
	for _, l := range s.Labels {
		n, ok := stepCounts[l.Trace]
		if !ok {
			if !missing[l.Trace] {
				missing[l.Trace] = true
				report(l, "trace %q is not in the database; its labels are skipped", l.Trace)
			}
			continue
		}
		var bad []int
		l.Steps = slices.DeleteFunc(l.Steps, func(i int) bool {
			if i >= n {
				bad = append(bad, i)
			}
			return i >= n
		})
		if len(bad) > 0 {
			report(l, "%s: trace %q has %d steps (0 to %d); steps %v ignored", l.Mode, l.Trace, n, n-1, bad)
		}
		kept = append(kept, l)
	}
	s.Labels = kept
	sortIssues(issues)
	return issues
}
