package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// MAD decodes the Multi-Agent Dataset released with MAST: JSON records of
// multi-agent runs with their failure-mode labels. Three shapes of record
// are read:
//
//   - the human-labelled file: {round, mas_name, benchmark_name, trace_id,
//     trace (the raw trajectory as a string), annotations: [{"failure
//     mode": "<draft code> <name>\n\n<description>", "annotator_1": bool,
//     ...}]}, where unanswered cells are bare NaN;
//   - the full dataset: {mas_name, llm_name, benchmark_name, trace_id,
//     trace: {key, index, trajectory}, mast_annotation: {"1.1": 0|1, ...}},
//     labelled by an LLM judge with final codes;
//   - the AG2 envelope: {trace_id, mas_name, benchmark_name, round, trace}.
//
// A file is a JSON array of records, one record, or one record per line.
// Records are decoded one at a time, so memory stays flat on the 200 MB
// full dataset; a record of the wrong shape is reported and skipped.
type MAD struct{}

// Name implements Format.
func (MAD) Name() string { return "mad" }

// Sniff accepts a JSON array or object whose first record has mas_name and
// trace keys. The head may end anywhere, even inside the first trajectory,
// and may hold NaN.
func (MAD) Sniff(head []byte) bool {
	keys := headKeys(head, 0)
	_, hasName := keys["mas_name"]
	_, hasTrace := keys["trace"]
	return hasName && hasTrace
}

// madRecord is one record in any of the three shapes. The fields whose
// type varies between shapes stay raw and are read by hand.
type madRecord struct {
	MASName        string                       `json:"mas_name"`
	LLMName        string                       `json:"llm_name"`
	BenchmarkName  string                       `json:"benchmark_name"`
	Round          json.RawMessage              `json:"round"`
	TraceID        json.RawMessage              `json:"trace_id"`
	Trace          json.RawMessage              `json:"trace"`
	Annotations    []map[string]json.RawMessage `json:"annotations"`
	MASTAnnotation json.RawMessage              `json:"mast_annotation"`
}

// madTraceObject is the full dataset's trace field.
type madTraceObject struct {
	Key        json.RawMessage `json:"key"`
	Index      json.RawMessage `json:"index"`
	Trajectory json.RawMessage `json:"trajectory"`
}

// madTrajectoryScale is how many text limits of a MAD trajectory are kept:
// a whole run is one string, split into steps after it is read, each step
// then cut to the limit. The largest in the MAST datasets is about 645 KB.
const madTrajectoryScale = 16

// Decode implements Format.
func (MAD) Decode(ctx context.Context, in *Input, emit func(*trace.Trace) error) error {
	emit = in.limited(emit)
	ids := map[string]bool{}
	// A trajectory is one string split into many steps: it is cut at
	// madTrajectoryScale times the text limit, its steps at the limit.
	return eachRecordScaled(ctx, in, madTrajectoryScale, func(raw json.RawMessage, rec *record) error {
		r := &madReader{rec}
		if t := r.trace(raw, ids); t != nil {
			return emit(t)
		}
		return nil
	})
}

// madReader reads one MAD record, reporting its problems with its place.
type madReader struct{ *record }

// trace turns a record into a trace, or reports why it cannot and returns nil.
func (r *madReader) trace(raw json.RawMessage, ids map[string]bool) *trace.Trace {
	var rec madRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		r.skip(raw, err)
		return nil
	}
	round, ok := r.scalar("round", rec.Round)
	if !ok {
		return nil
	}
	traceID, ok := r.scalar("trace_id", rec.TraceID)
	if !ok {
		return nil
	}
	t := &trace.Trace{
		Format: "mad",
		Source: fmt.Sprintf("%s#%d", r.in.Path, r.n),
		System: rec.MASName,
		Model:  rec.LLMName,
	}
	t.SetMeta("benchmark", rec.BenchmarkName)
	t.SetMeta("round", round)
	t.SetMeta("mad_trace_id", traceID)

	var split madSplit
	switch FirstByte(rec.Trace) {
	case '"':
		split = splitMADTrajectory(rec.Trace, rec.MASName, rec.BenchmarkName)
	case '{':
		var obj madTraceObject
		_ = json.Unmarshal(rec.Trace, &obj) // a valid object whose members are all kept raw
		key, _ := jsontext.LooseText(obj.Key)
		index, _ := jsontext.LooseText(obj.Index)
		t.SetMeta("mad_key", key)
		t.SetMeta("mad_index", index)
		split = splitMADTrajectory(obj.Trajectory, rec.MASName, rec.BenchmarkName)
	case 0, 'n':
		r.report(r.line, Error, "no trace; record skipped")
		return nil
	default:
		r.report(r.line, Error, `field "trace" should be a string or an object, found %s; record skipped`, JSONKind(rec.Trace))
		return nil
	}
	t.Task = split.task
	t.SetMeta("framework", split.framework)
	t.SetMeta("instance_id", split.instanceID)
	t.SetMeta("note", split.note)
	for _, s := range split.steps {
		t.Append(s)
	}
	if len(t.Steps) == 0 {
		r.report(r.line, Notice, "the trajectory is empty")
	}

	labels := newMADLabels()
	r.humanLabels(rec.Annotations, labels)
	r.judgeLabels(rec.MASTAnnotation, labels)
	t.Findings = labels.findings()
	if len(labels.unmapped) > 0 {
		r.report(r.line, Notice, "%d label(s) not mapped to a %s mode, kept with an empty mode: %s",
			len(labels.unmapped), taxonomy.Version, strings.Join(labels.unmapped, ", "))
	}

	t.ID = uniqueMADID(ids, rec.MASName, traceID, round, r.n)
	return t
}

// scalar reads a field that is a string in some records and a number in
// others (trace_id, round); null and absence read as "".
func (r *madReader) scalar(field string, raw json.RawMessage) (string, bool) {
	if s, ok := jsontext.TextOf(raw); ok && FirstByte(raw) != '[' {
		return s, true
	}
	r.report(r.line, Error, "field %q should be a string or a number, found %s; record skipped", field, JSONKind(raw))
	return "", false
}

// uniqueMADID names a trace mad:<mas_name>:<trace_id>. Trace ids repeat
// across rounds and frameworks in some files, so a repeated id takes the
// round, then the record's position, to stay unique and deterministic.
func uniqueMADID(ids map[string]bool, mas, traceID, round string, n int) string {
	if mas == "" {
		mas = "unknown"
	}
	if traceID == "" {
		traceID = "record" + strconv.Itoa(n)
	}
	id := "mad:" + mas + ":" + traceID
	if ids[id] && round != "" {
		id += ":" + round
	}
	if ids[id] {
		id += "#" + strconv.Itoa(n)
	}
	ids[id] = true
	return id
}

// humanLabels reads the per-annotator rows of the human-labelled file. The
// rows come from three drafts of the taxonomy with different numberings,
// so a row is mapped by its name alone.
func (r *madReader) humanLabels(rows []map[string]json.RawMessage, labels *madLabels) {
	var ignored []string
	for i, row := range rows {
		label, ok := jsontext.LooseText(row["failure mode"])
		if !ok || strings.TrimSpace(label) == "" {
			r.report(r.line, Error, `annotation %d has no "failure mode" label; row skipped`, i)
			continue
		}
		first, _, _ := strings.Cut(strings.TrimSpace(label), "\n")
		first = strings.TrimSpace(first)
		remap := taxonomy.MAST.MapLabel(label)
		if remap.Code == "" {
			labels.unmappable(first, remap.Dropped)
		}
		annotators := make([]string, 0, len(row))
		for key := range row {
			switch {
			case strings.HasPrefix(key, "annotator"):
				annotators = append(annotators, key)
			case key != "failure mode" && !containsString(ignored, key):
				ignored = append(ignored, key)
			}
		}
		sort.Strings(annotators)
		for _, a := range annotators {
			v, answered, err := madVerdict(row[a])
			if err != nil {
				r.report(r.line, Error, "annotation %d (%q): %s value %v; ignored", i, first, a, err)
				continue
			}
			if answered {
				labels.add("mad:"+a, remap.Code, first, v)
			}
		}
	}
	if len(ignored) > 0 {
		sort.Strings(ignored)
		r.report(r.line, Notice, "annotation fields %s are not labels; ignored", strings.Join(ignored, ", "))
	}
}

// judgeLabels reads mast_annotation, the LLM judge's labels keyed by final
// code ("1.1"). Some exports store the object as a JSON string.
func (r *madReader) judgeLabels(raw json.RawMessage, labels *madLabels) {
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	if s, ok := jsontext.LooseText(raw); ok && FirstByte(raw) == '"' {
		raw = sanitizeJSON([]byte(s))
	}
	var codes map[string]json.RawMessage
	if err := json.Unmarshal(raw, &codes); err != nil {
		r.report(r.line, Error, `field "mast_annotation" should be an object of codes, found %s; labels skipped`, JSONKind(raw))
		return
	}
	// Taxonomy order first, so findings come out the same on every run.
	keys := make([]string, 0, len(codes))
	for k := range codes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ci, cj := madCodeRank(keys[i]), madCodeRank(keys[j])
		if ci != cj {
			return ci < cj
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		if strings.TrimSpace(k) == "" {
			r.report(r.line, Error, "mast_annotation has a blank code; ignored")
			continue
		}
		if _, known := taxonomy.MAST.Mode(taxonomy.CanonicalCode(k)); !known {
			labels.unmappable(k, false)
		}
		v, answered, err := madVerdict(codes[k])
		if err != nil {
			r.report(r.line, Error, "mast_annotation %q: %v; ignored", k, err)
			continue
		}
		if !answered {
			continue
		}
		code := taxonomy.CanonicalCode(k)
		if _, known := taxonomy.MAST.Mode(code); known {
			labels.add("mad:llm", code, "", v)
		} else {
			labels.add("mad:llm", "", k, v)
		}
	}
}

// madCodeRank orders mast_annotation keys by the taxonomy's order of modes;
// unknown keys come last.
func madCodeRank(key string) int {
	code := taxonomy.CanonicalCode(key)
	for i, m := range taxonomy.MAST.Modes {
		if m.Code == code {
			return i
		}
	}
	return len(taxonomy.MAST.Modes)
}

// madVerdict reads a label cell: true or 1 is present, false or 0 absent,
// null (NaN in the file) unanswered. The same literals quoted are accepted,
// as spreadsheet exports write them.
func madVerdict(raw json.RawMessage) (v trace.Verdict, answered bool, err error) {
	text := strings.TrimSpace(string(raw))
	if s, ok := jsontext.LooseText(raw); ok && FirstByte(raw) == '"' {
		text = strings.TrimSpace(s)
	}
	switch strings.ToLower(text) {
	case "", "null":
		return "", false, nil
	case "true":
		return trace.Present, true, nil
	case "false":
		return trace.Absent, true, nil
	}
	if f, perr := strconv.ParseFloat(text, 64); perr == nil && (f == 0 || f == 1) {
		if f == 1 {
			return trace.Present, true, nil
		}
		return trace.Absent, true, nil
	}
	return "", false, fmt.Errorf("%s is not a verdict (true/false, 1/0 or null)", trace.Clip(string(raw), 40))
}

// madLabels gathers the findings of one record. Rows that map to the same
// mode for the same source are one finding: a draft mode merged into a
// final one is present if any of its rows is.
type madLabels struct {
	groups   []*madLabelGroup
	byKey    map[string]*madLabelGroup
	unmapped []string // each unmappable label once, described
	seen     map[string]bool
}

type madLabelGroup struct {
	source, mode    string
	present         bool
	presentRaw, all []string // the labels behind a present verdict, and all of them
}

func newMADLabels() *madLabels {
	return &madLabels{byKey: map[string]*madLabelGroup{}, seen: map[string]bool{}}
}

// add records one answered cell for mode (or "" when the label cannot be
// mapped). raw is the label as written, kept on the finding; it is "" for
// labels that are already final codes.
func (l *madLabels) add(source, mode, raw string, v trace.Verdict) {
	key := source + "\x00" + mode
	if mode == "" {
		key += "\x00" + strings.ToLower(raw)
	}
	g := l.byKey[key]
	if g == nil {
		g = &madLabelGroup{source: source, mode: mode}
		l.byKey[key] = g
		l.groups = append(l.groups, g)
	}
	g.all = appendUnique(g.all, raw)
	if v == trace.Present {
		g.present = true
		g.presentRaw = appendUnique(g.presentRaw, raw)
	}
}

// unmappable notes a label that maps to no mode, once per record.
func (l *madLabels) unmappable(raw string, dropped bool) {
	if l.seen[raw] {
		return
	}
	l.seen[raw] = true
	what := "unknown label"
	if dropped {
		what = "a draft mode dropped from the final taxonomy"
	}
	l.unmapped = append(l.unmapped, fmt.Sprintf("%q (%s)", raw, what))
}

func (l *madLabels) findings() []trace.Finding {
	var out []trace.Finding
	for _, g := range l.groups {
		f := trace.Finding{Mode: g.mode, Source: g.source, Verdict: trace.Absent}
		raws := g.all
		if g.present {
			f.Verdict, raws = trace.Present, g.presentRaw
		}
		if g.mode != "" {
			f.Taxonomy = taxonomy.Version
		}
		f.RawLabel = strings.Join(raws, "; ")
		out = append(out, f)
	}
	return out
}

func appendUnique(list []string, s string) []string {
	if s == "" || containsString(list, s) {
		return list
	}
	return append(list, s)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// recordErrorText words an error decoding a record: which field has the
// wrong type, in JSON's terms rather than Go's.
func recordErrorText(err error) string {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if typ.Field == "" {
			return fmt.Sprintf("a record should be an object, found %s", jsonValueKind(typ.Value))
		}
		return fmt.Sprintf("field %q should be %s, found %s", typ.Field, goTypeKind(typ.Type), jsonValueKind(typ.Value))
	}
	return jsonErrorText(err)
}

// errorLineInRecord counts the lines of raw before a type error, so the
// report points at the offending field rather than the record's start.
func errorLineInRecord(raw json.RawMessage, err error) int {
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &typ) || typ.Offset <= 0 || typ.Offset > int64(len(raw)) {
		return 0
	}
	return bytes.Count(raw[:typ.Offset], []byte{'\n'})
}

// jsonValueKind names the kind UnmarshalTypeError.Value describes
// ("string", "number 3", "array").
func jsonValueKind(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	switch kind {
	case "array", "object":
		return "an " + kind
	case "bool":
		return "a boolean"
	case "string", "number":
		return "a " + kind
	}
	return v
}

// goTypeKind names the JSON kind a Go type decodes from.
func goTypeKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return goTypeKind(t.Elem())
	}
	return "a number"
}
