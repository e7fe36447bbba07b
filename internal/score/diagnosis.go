package score

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/faultline/faultline/internal/itbench"
	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
)

// Diagnosis is an ITBench answer: the entities blamed, in order, and the
// propagation the agent described.
type Diagnosis struct {
	// Source says where it was found: the run directory's file, a tool call
	// that wrote it, or the final message.
	Source       string
	Entities     []DiagnosedEntity
	Propagations []Propagation
	// Repaired names what was fixed to read it, when it was not valid JSON.
	Repaired string
}

// DiagnosedEntity is one entry of the answer's entities list.
type DiagnosedEntity struct {
	Name string
	// Contributing is false only when the answer says so explicitly.
	Contributing bool
}

// Predictions are the names of the contributing entities, in answer order:
// what ITBench scores.
func (d *Diagnosis) Predictions() []string {
	var out []string
	for _, e := range d.Entities {
		if e.Contributing {
			out = append(out, e.Name)
		}
	}
	return out
}

// ErrNoAnswer means a run produced no diagnosis at all.
var ErrNoAnswer = errors.New("no answer: no agent_output.json and no diagnosis in the trace")

// UnreadableError means the run did write its answer file, but the trace
// does not show what it wrote (a script wrote it, a patch did not apply to
// any version the trace shows) and nothing printed it afterwards: the
// answer exists and cannot be graded, which is not the same as no answer.
type UnreadableError struct {
	Step int    // the write whose content is not shown
	Why  string // what could not be read
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("answer not readable from the trace: %s, and no later step printed %s", e.Why, itbench.AnswerFile)
}

// DiagnosisOf finds a trace's diagnosis: the run directory's
// agent_output.json attached at ingest; else what the run's own successful
// writes of that file left in it, as toolcall.Final reads it (a printed copy
// after the last write is the best evidence; a write whose call failed does
// not count); else a JSON block in its final message. It returns ErrNoAnswer
// when there is none, an *UnreadableError when the run wrote the file in a
// way the trace does not show, and an error naming the location when the
// answer is not readable JSON even after unambiguous repairs.
func DiagnosisOf(t *trace.Trace) (*Diagnosis, error) {
	if t.Diagnosis != nil {
		return ParseDiagnosis([]byte(t.Diagnosis.Body), t.Diagnosis.Source)
	}
	file := toolcall.Final(t, itbench.AnswerFile)
	if len(file.Writes) > 0 {
		if !file.Known {
			return nil, &UnreadableError{Step: file.Blind, Why: file.Why}
		}
		return ParseDiagnosis([]byte(file.Content), fmt.Sprintf("%s %s", itbench.AnswerFile, file.Evidence))
	}
	for i := len(t.Steps) - 1; i >= 0; i-- {
		s := &t.Steps[i]
		if s.Kind != trace.KindFinal {
			continue
		}
		if block := jsonBlock(s.Text); block != "" {
			return ParseDiagnosis([]byte(block), fmt.Sprintf("step %d (JSON in the final message)", i))
		}
		break
	}
	if len(file.Attempts) > 0 {
		return nil, fmt.Errorf("%w: every write of %s failed (steps %s)", ErrNoAnswer, itbench.AnswerFile, joinSteps(file.Attempts))
	}
	return nil, ErrNoAnswer
}

// joinSteps writes step indices as "3, 5, 9".
func joinSteps(steps []int) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = strconv.Itoa(s)
	}
	return strings.Join(parts, ", ")
}

var fencedJSON = regexp.MustCompile("(?s)```(?:json)?\\s*\\n(.*?)```")

// jsonBlock returns the JSON object in a message that holds entities: a
// fenced block, or the text between the first { and the last }.
func jsonBlock(text string) string {
	for _, m := range fencedJSON.FindAllStringSubmatch(text, -1) {
		if strings.Contains(m[1], `"entities"`) {
			return m[1]
		}
	}
	start, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if start >= 0 && end > start && strings.Contains(text[start:end], `"entities"`) {
		return text[start : end+1]
	}
	return ""
}

// answerFile is agent_output.json in both the current schema (names such as
// "ns/Kind/name", propagations by name) and the older one (entity ids,
// propagations by id with source_name and target_name).
type answerFile struct {
	Entities []struct {
		ID           json.RawMessage `json:"id"`
		Name         string          `json:"name"`
		Contributing *bool           `json:"contributing_factor"`
	} `json:"entities"`
	Propagations []struct {
		Source     string `json:"source"`
		Target     string `json:"target"`
		SourceName string `json:"source_name"`
		TargetName string `json:"target_name"`
		Condition  string `json:"condition"`
		Effect     string `json:"effect"`
	} `json:"propagations"`
}

var trailingComma = regexp.MustCompile(`,(\s*[}\]])`)

// ParseDiagnosis reads an answer file. Repairs are made only where the
// intent is unambiguous: a byte-order mark, a Markdown code fence around the
// JSON, prose around a single object, trailing commas.
func ParseDiagnosis(data []byte, source string) (*Diagnosis, error) {
	var af answerFile
	err := json.Unmarshal(data, &af)
	repaired := ""
	if err != nil {
		fixed, how := repairJSON(data)
		if how != "" && json.Unmarshal(fixed, &af) == nil {
			err, repaired = nil, how
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s", source, describeJSONError(data, err))
	}
	d := &Diagnosis{Source: source, Repaired: repaired}
	names := map[string]string{}
	for _, e := range af.Entities {
		d.Entities = append(d.Entities, DiagnosedEntity{Name: e.Name, Contributing: e.Contributing == nil || *e.Contributing})
		if id := idText(e.ID); id != "" {
			names[id] = e.Name
		}
	}
	for _, p := range af.Propagations {
		src, dst := firstNonEmpty(p.SourceName, names[p.Source], p.Source), firstNonEmpty(p.TargetName, names[p.Target], p.Target)
		d.Propagations = append(d.Propagations, Propagation{Source: src, Target: dst, Condition: p.Condition, Effect: p.Effect})
	}
	return d, nil
}

func repairJSON(data []byte) ([]byte, string) {
	var hows []string
	fixed := bytes.TrimPrefix(bytes.TrimSpace(data), []byte("\xef\xbb\xbf"))
	if m := fencedJSON.FindSubmatch(fixed); m != nil {
		fixed, hows = m[1], append(hows, "removed a code fence")
	}
	start, end := bytes.IndexByte(fixed, '{'), bytes.LastIndexByte(fixed, '}')
	if start > 0 || (end >= 0 && end < len(fixed)-1) {
		if start >= 0 && end > start {
			fixed, hows = fixed[start:end+1], append(hows, "removed text around the object")
		}
	}
	if trailingComma.Match(fixed) {
		fixed, hows = trailingComma.ReplaceAll(fixed, []byte("$1")), append(hows, "removed trailing commas")
	}
	return fixed, strings.Join(hows, ", ")
}

// describeJSONError words a decoding error with its line and column.
func describeJSONError(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the offending one included.
		line, col := lineCol(data, max(0, syn.Offset-1))
		return fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		line, col := lineCol(data, typ.Offset)
		return fmt.Sprintf("at line %d, column %d: field %q should be %s, found %s", line, col, typ.Field, typ.Type, typ.Value)
	}
	return err.Error()
}

func lineCol(data []byte, offset int64) (int, int) {
	offset = min(offset, int64(len(data)))
	before := data[:offset]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n') // 1-based: LastIndexByte is -1 on the first line
	return line, col
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
