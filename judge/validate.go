package judge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// Answer is a validated judgement of one view of a trace (or, after merging,
// of the whole trace): a verdict on every mode of the taxonomy.
type Answer struct {
	Modes       map[string]ModeAnswer // by mode code, every MAST mode
	Summary     string
	TaskSuccess string // success, failure or unknown
}

// ModeAnswer is the verdict on one mode. Steps and Quote are set, and
// checked against the trace, only when Present.
type ModeAnswer struct {
	Present     bool
	Confidence  float64
	Steps       []int
	Quote       string
	Explanation string
}

// minQuoteChars is the shortest quote accepted: a shorter one occurs almost
// anywhere and locates nothing.
const minQuoteChars = 8

// validate checks a parsed answer against the trace and the view it was
// asked about, and returns the accepted answer or every problem found, each
// worded for the corrective message. Nothing is filled in by default: a
// mode that is missing or unreadable is a problem, never an "absent".
func validate(raw *rawAnswer, t *trace.Trace, v *view) (*Answer, []string) {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	byCode := map[string]rawMode{}
	for key, m := range raw.Modes {
		code := taxonomy.CanonicalCode(key)
		if _, ok := taxonomy.MAST.Mode(code); !ok {
			add("%q is not a mode of the taxonomy (the codes are FM-1.1 to FM-3.3)", key)
			continue
		}
		if _, dup := byCode[code]; dup {
			add("%s is answered twice", code)
			continue
		}
		byCode[code] = m
	}
	a := &Answer{Modes: map[string]ModeAnswer{}, Summary: strings.TrimSpace(raw.Summary)}
	for _, mode := range taxonomy.MAST.Modes {
		code := mode.Code
		m, ok := byCode[code]
		if !ok {
			add("%s is missing", code)
			continue
		}
		var ma ModeAnswer
		var err error
		if ma.Present, err = readBool(m.Present); err != nil {
			add("%s: \"present\" %v", code, err)
			continue
		}
		if ma.Confidence, err = readConfidence(m.Confidence); err != nil {
			add("%s: \"confidence\" %v", code, err)
		}
		ma.Explanation = strings.TrimSpace(m.Explanation)
		if !ma.Present {
			a.Modes[code] = ma
			continue
		}
		ma.Quote = strings.TrimSpace(m.Quote)
		for _, p := range checkEvidence(code, m.Steps, ma.Quote, t, v, &ma) {
			add("%s", p)
		}
		if ma.Explanation == "" {
			add("%s is marked present but has no explanation", code)
		}
		a.Modes[code] = ma
	}
	switch ts := strings.ToLower(strings.TrimSpace(raw.TaskSuccess)); {
	case slices.Contains(taskSuccessValues, ts):
		a.TaskSuccess = ts
	case ts == "":
		add(`"task_success" is missing`)
	default:
		add(`"task_success" must be "success", "failure" or "unknown", not %q`, raw.TaskSuccess)
	}
	if a.Summary == "" {
		add(`"summary" is empty`)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return a, nil
}

// checkEvidence reads the cited step ids into ma.Steps and checks that each
// exists and was shown, and that the quote occurs in one of them.
func checkEvidence(code string, ids []json.RawMessage, quote string, t *trace.Trace, v *view, ma *ModeAnswer) []string {
	var problems []string
	for _, id := range ids {
		i, err := readStepID(id)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", code, err))
			continue
		case t.Step(i) == nil:
			problems = append(problems, fmt.Sprintf("%s: step S%d does not exist (the trace has S0-S%d)", code, i, len(t.Steps)-1))
			continue
		case !v.visible[i]:
			problems = append(problems, fmt.Sprintf("%s: step S%d is not among the steps shown (%s)", code, i, v.visibleSpan()))
			continue
		}
		if !slices.Contains(ma.Steps, i) {
			ma.Steps = append(ma.Steps, i)
		}
	}
	switch {
	case len(ids) == 0:
		problems = append(problems, fmt.Sprintf("%s is marked present but cites no step", code))
	case quote == "":
		problems = append(problems, fmt.Sprintf("%s is marked present but gives no quote", code))
	case len(trace.NormalizeSpace(quote)) < minQuoteChars:
		problems = append(problems, fmt.Sprintf("%s: the quote %q is too short to locate anything; quote at least a few words", code, quote))
	case len(problems) == 0 && len(ma.Steps) > 0:
		f := trace.Finding{Mode: code, Steps: ma.Steps, Quote: quote}
		if f.CheckEvidence(t) != nil {
			problems = append(problems, fmt.Sprintf("%s: the quote %q does not occur in %s; copy it exactly from one of the cited steps", code, trace.Clip(quote, 80), stepList(ma.Steps)))
		}
	}
	return problems
}

// readBool accepts a JSON boolean, or the words models use for one.
func readBool(raw json.RawMessage) (bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return false, fmt.Errorf("is missing")
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "yes", "present":
			return true, nil
		case "false", "no", "absent":
			return false, nil
		}
	}
	return false, fmt.Errorf("must be true or false, not %s", raw)
}

// readConfidence accepts a number, or a number in a string, from 0 to 1.
func readConfidence(raw json.RawMessage) (float64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, fmt.Errorf("is missing")
	}
	var c float64
	if err := json.Unmarshal(raw, &c); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, fmt.Errorf("must be a number from 0 to 1, not %s", raw)
		}
		if c, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return 0, fmt.Errorf("must be a number from 0 to 1, not %s", raw)
		}
	}
	if c < 0 || c > 1 {
		return 0, fmt.Errorf("must be from 0 to 1, not %v", c)
	}
	return c, nil
}

// readStepID accepts "S12", "s12", "12" or 12.
func readStepID(raw json.RawMessage) (int, error) {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		id := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "S"), "s")
		if n, err := strconv.Atoi(id); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("step id %s is not of the form \"S12\"", raw)
}
