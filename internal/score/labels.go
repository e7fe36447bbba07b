package score

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/faultline/faultline/trace"
)

// LabelsSource is the outcome source of outcomes read from a labels file.
const LabelsSource = "labels"

// OutcomeLabel says how one trace went, as a file of labels records it.
type OutcomeLabel struct {
	TraceID string
	Success *bool
	Score   *float64
	Line    int
}

// Outcome turns a label into a stored outcome; without an explicit success,
// the score decides it against threshold.
func (l OutcomeLabel) Outcome(threshold float64) trace.Outcome {
	o := trace.Outcome{Source: LabelsSource, Score: l.Score, Success: l.Success}
	if l.Score != nil {
		o.Metric = "score"
	}
	if o.Success == nil && l.Score != nil {
		ok := *l.Score >= threshold
		o.Success = &ok
	}
	return o
}

// LoadOutcomeLabels reads outcome labels from CSV (a header naming trace_id
// and success and/or score) or JSON (an array of objects, or one object per
// line, with the same fields). A bad record is reported with its line and
// skipped; the others are kept.
func LoadOutcomeLabels(path string) ([]OutcomeLabel, []error, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return parseOutcomeLabels(path, data)
}

func parseOutcomeLabels(path string, data []byte) ([]OutcomeLabel, []error, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '[' || trimmed[0] == '{') {
		return jsonOutcomeLabels(path, trimmed)
	}
	return csvOutcomeLabels(path, data)
}

type jsonLabel struct {
	TraceID string          `json:"trace_id"`
	ID      string          `json:"id"`
	Success json.RawMessage `json:"success"`
	Score   *float64        `json:"score"`
}

func jsonOutcomeLabels(path string, data []byte) ([]OutcomeLabel, []error, error) {
	var labels []OutcomeLabel
	var problems []error
	add := func(line int, raw []byte) {
		var jl jsonLabel
		if err := json.Unmarshal(raw, &jl); err != nil {
			problems = append(problems, fmt.Errorf("%s:%d: %v", path, line, err))
			return
		}
		l := OutcomeLabel{TraceID: firstNonEmpty(jl.TraceID, jl.ID), Score: jl.Score, Line: line}
		if len(jl.Success) > 0 && string(jl.Success) != "null" {
			var text string
			if json.Unmarshal(jl.Success, &text) != nil {
				text = string(jl.Success)
			}
			ok, err := parseSuccess(text)
			if err != nil {
				problems = append(problems, fmt.Errorf("%s:%d: %v", path, line, err))
				return
			}
			l.Success = &ok
		}
		if err := l.check(); err != nil {
			problems = append(problems, fmt.Errorf("%s:%d: %v", path, line, err))
			return
		}
		labels = append(labels, l)
	}
	if data[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(data))
		if _, err := dec.Token(); err != nil {
			return nil, nil, fmt.Errorf("%s: %v", path, err)
		}
		for dec.More() {
			// The record starts at the first byte after the separator.
			start := int(dec.InputOffset())
			for start < len(data) && bytes.IndexByte([]byte(" \t\r\n,"), data[start]) >= 0 {
				start++
			}
			var r json.RawMessage
			if err := dec.Decode(&r); err != nil {
				return labels, problems, fmt.Errorf("%s:%d: %v", path, bytes.Count(data[:start], []byte{'\n'})+1, err)
			}
			add(bytes.Count(data[:start], []byte{'\n'})+1, r)
		}
		return labels, problems, nil
	}
	for i, line := range bytes.Split(data, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) > 0 {
			add(i+1, line)
		}
	}
	return labels, problems, nil
}

func csvOutcomeLabels(path string, data []byte) ([]OutcomeLabel, []error, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: no header: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	idCol, ok := col["trace_id"]
	if !ok {
		if idCol, ok = col["id"]; !ok {
			return nil, nil, fmt.Errorf("%s:1: the header must name a trace_id column", path)
		}
	}
	successCol, hasSuccess := col["success"]
	scoreCol, hasScore := col["score"]
	if !hasSuccess && !hasScore {
		return nil, nil, fmt.Errorf("%s:1: the header must name a success or a score column", path)
	}
	var labels []OutcomeLabel
	var problems []error
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				problems = append(problems, fmt.Errorf("%s:%d: %v", path, pe.Line, pe.Err))
				continue
			}
			return labels, problems, fmt.Errorf("%s: %v", path, err)
		}
		line, _ := r.FieldPos(0)
		field := func(i int) string {
			if i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		l := OutcomeLabel{TraceID: field(idCol), Line: line}
		if hasSuccess && field(successCol) != "" {
			ok, err := parseSuccess(field(successCol))
			if err != nil {
				problems = append(problems, fmt.Errorf("%s:%d: %v", path, line, err))
				continue
			}
			l.Success = &ok
		}
		if hasScore && field(scoreCol) != "" {
			v, err := strconv.ParseFloat(field(scoreCol), 64)
			if err != nil {
				problems = append(problems, fmt.Errorf("%s:%d: score %q is not a number", path, line, field(scoreCol)))
				continue
			}
			l.Score = &v
		}
		if err := l.check(); err != nil {
			problems = append(problems, fmt.Errorf("%s:%d: %v", path, line, err))
			continue
		}
		labels = append(labels, l)
	}
	return labels, problems, nil
}

func (l OutcomeLabel) check() error {
	if l.TraceID == "" {
		return errors.New("no trace_id")
	}
	if l.Success == nil && l.Score == nil {
		return errors.New("neither success nor score given")
	}
	return nil
}

func parseSuccess(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "pass", "passed", "success", "succeeded":
		return true, nil
	case "false", "0", "no", "fail", "failed", "failure":
		return false, nil
	}
	return false, fmt.Errorf("success %q is not one of true/false, 1/0, yes/no, pass/fail", s)
}
