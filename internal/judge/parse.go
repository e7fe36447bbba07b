package judge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// rawAnswer is an answer as the model wrote it, before validation. Fields
// that models spell in several ways are kept raw and read by validate.
type rawAnswer struct {
	// System is the system failure verdict; nil when the reply has none
	// (or null, or false), which claims none.
	System      *rawMode
	Modes       map[string]rawMode
	Summary     string
	TaskSuccess string
}

type rawMode struct {
	Present     json.RawMessage   `json:"present"`
	Confidence  json.RawMessage   `json:"confidence"`
	Steps       []json.RawMessage `json:"steps"`
	Quote       string            `json:"quote"`
	Explanation string            `json:"explanation"`
	// Mode names the mode when modes came as a list rather than an object.
	Mode string `json:"mode"`
	// Code is the SYS code of a system failure verdict.
	Code string `json:"code"`
}

// parseAnswer extracts the answer object from a reply: the whole reply when
// it is JSON, else a fenced code block, else the last balanced {...} that
// has a "modes" key (replies may open with reasoning that contains braces).
// The error says what is wrong in words a corrective message can repeat.
func parseAnswer(content string) (*rawAnswer, error) {
	obj, err := extractObject(content)
	if err != nil {
		return nil, err
	}
	var doc struct {
		System      json.RawMessage `json:"system_failure"`
		Modes       json.RawMessage `json:"modes"`
		Summary     *string         `json:"summary"`
		TaskSuccess *string         `json:"task_success"`
	}
	if err := json.Unmarshal(obj, &doc); err != nil {
		return nil, fmt.Errorf("the JSON object does not have the expected shape: %s", jsonProblem(err))
	}
	if len(doc.Modes) == 0 || string(doc.Modes) == "null" {
		return nil, errors.New(`the JSON object has no "modes"`)
	}
	a := &rawAnswer{Modes: map[string]rawMode{}}
	if doc.Summary != nil {
		a.Summary = *doc.Summary
	}
	if doc.TaskSuccess != nil {
		a.TaskSuccess = *doc.TaskSuccess
	}
	// A reply without the verdict claims no system failure: the MAST
	// verdicts it must give all the same are what is checked.
	switch sys := strings.TrimSpace(string(doc.System)); sys {
	case "", "null", "false":
	default:
		a.System = &rawMode{}
		if err := json.Unmarshal(doc.System, a.System); err != nil {
			return nil, fmt.Errorf(`"system_failure" must be an object such as {"present": false, "code": "", ...}: %s`, jsonProblem(err))
		}
	}
	// "modes" is asked for as an object keyed by code; a list of entries
	// that each name their mode is read too.
	if err := json.Unmarshal(doc.Modes, &a.Modes); err != nil {
		var list []rawMode
		if json.Unmarshal(doc.Modes, &list) != nil {
			return nil, fmt.Errorf(`"modes" must be an object with one entry per mode code: %s`, jsonProblem(err))
		}
		for i, m := range list {
			if m.Mode == "" {
				return nil, fmt.Errorf(`"modes" entry %d does not say which mode it is`, i+1)
			}
			if _, dup := a.Modes[m.Mode]; dup {
				return nil, fmt.Errorf(`"modes" lists %s twice`, m.Mode)
			}
			a.Modes[m.Mode] = m
		}
	}
	return a, nil
}

var fence = regexp.MustCompile("(?s)```[a-zA-Z]*\\s*\\n(.*?)```")

// extractObject finds the JSON object in a reply.
func extractObject(content string) ([]byte, error) {
	trimmed := strings.TrimSpace(content)
	if trimmed == "" {
		return nil, errors.New("the reply is empty")
	}
	if json.Valid([]byte(trimmed)) && strings.HasPrefix(trimmed, "{") {
		return []byte(trimmed), nil
	}
	for _, m := range fence.FindAllStringSubmatch(content, -1) {
		block := strings.TrimSpace(m[1])
		if strings.HasPrefix(block, "{") && json.Valid([]byte(block)) {
			return []byte(block), nil
		}
	}
	objects := balancedObjects(content)
	for i := len(objects) - 1; i >= 0; i-- {
		if json.Valid(objects[i]) && bytes.Contains(objects[i], []byte(`"modes"`)) {
			return objects[i], nil
		}
	}
	// Nothing usable: report the defect of the largest candidate, which is
	// most likely the intended answer.
	var largest []byte
	for _, o := range objects {
		if len(o) > len(largest) {
			largest = o
		}
	}
	if largest == nil {
		if i := strings.IndexByte(content, '{'); i >= 0 {
			return nil, fmt.Errorf("the JSON object starting at character %d is never closed (was the reply cut off?)", i)
		}
		return nil, errors.New("the reply holds no JSON object")
	}
	var v any
	return nil, fmt.Errorf("the JSON object is malformed: %s", jsonProblem(json.Unmarshal(largest, &v)))
}

// balancedObjects returns every top-level {...} span of s, matching braces
// outside JSON strings.
func balancedObjects(s string) [][]byte {
	var out [][]byte
	depth, start := 0, -1
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"' && depth > 0:
			inString = true
		case c == '{':
			if depth == 0 {
				start = i
			}
			depth++
		case c == '}' && depth > 0:
			depth--
			if depth == 0 {
				out = append(out, []byte(s[start:i+1]))
			}
		}
	}
	return out
}

// jsonProblem words a decoding error with its position.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%v (at character %d)", syn, syn.Offset)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Sprintf("field %q holds a %s where a %s belongs", typ.Field, typ.Value, typ.Type)
	}
	return err.Error()
}
