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
// of the whole trace): a verdict on every mode of the taxonomy, or a system
// failure.
type Answer struct {
	Modes map[string]ModeAnswer // by mode code, every MAST mode; none when System is set
	// System is set when the judge answered that the harness or the
	// infrastructure, not the agent, made the run fail. MAST describes what
	// the agent did, so its verdicts are then neither checked nor kept;
	// Dropped names the modes the answer had marked present all the same.
	System      *SystemAnswer
	Dropped     []string
	Summary     string
	TaskSuccess string // success, failure or unknown
}

// SystemAnswer is a system failure verdict: its SYS code and evidence.
type SystemAnswer struct {
	Code string
	ModeAnswer
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
// mode that is missing or unreadable is a problem, never an "absent". Only
// the system failure verdict may be left out, which claims none; when it is
// claimed, it is checked like a mode and the modes are not.
func validate(raw *rawAnswer, t *trace.Trace, v *view) (*Answer, []string) {
	var problems, modeProblems []string
	add := func(to *[]string, format string, args ...any) { *to = append(*to, fmt.Sprintf(format, args...)) }
	byCode := map[string]rawMode{}
	for key, m := range raw.Modes {
		code := taxonomy.CanonicalCode(key)
		if _, ok := taxonomy.MAST.Mode(code); !ok {
			add(&modeProblems, "%q is not a mode of the taxonomy (the codes are FM-1.1 to FM-3.3)", key)
			continue
		}
		if _, dup := byCode[code]; dup {
			add(&modeProblems, "%s is answered twice", code)
			continue
		}
		byCode[code] = m
	}
	a := &Answer{Modes: map[string]ModeAnswer{}, Summary: strings.TrimSpace(raw.Summary)}
	claimed := false
	if raw.System != nil {
		a.System, claimed, problems = validateSystem(*raw.System, t, v)
	}
	if claimed {
		// The MAST verdicts beside a system failure are dropped: whatever
		// is wrong with them does not matter.
		a.Dropped = markedPresent(byCode)
	} else {
		problems = append(problems, modeProblems...)
		for _, mode := range taxonomy.MAST.Modes {
			m, ok := byCode[mode.Code]
			if !ok {
				add(&problems, "%s is missing", mode.Code)
				continue
			}
			ma, ps := readEntry(mode.Code, m, t, v)
			problems = append(problems, ps...)
			a.Modes[mode.Code] = ma
		}
	}
	switch ts := strings.ToLower(strings.TrimSpace(raw.TaskSuccess)); {
	case slices.Contains(taskSuccessValues, ts):
		a.TaskSuccess = ts
	case ts == "":
		add(&problems, `"task_success" is missing`)
	default:
		add(&problems, `"task_success" must be "success", "failure" or "unknown", not %q`, raw.TaskSuccess)
	}
	if a.Summary == "" {
		add(&problems, `"summary" is empty`)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return a, nil
}

// systemLabel names the system failure verdict in problems.
const systemLabel = "system_failure"

// validateSystem reads a system failure verdict: nil when it is absent;
// claimed when it is marked present, valid or not (the MAST verdicts given
// beside a claimed system failure are not checked).
func validateSystem(m rawMode, t *trace.Trace, v *view) (sys *SystemAnswer, claimed bool, problems []string) {
	present, err := readBool(m.Present)
	if err != nil {
		return nil, false, []string{fmt.Sprintf("%s: \"present\" %v", systemLabel, err)}
	}
	if !present {
		return nil, false, nil
	}
	ma, problems := readEntry(systemLabel, m, t, v)
	code := strings.ToUpper(strings.TrimSpace(m.Code))
	if _, ok := taxonomy.System.Mode(code); !ok {
		// A model may name the failure rather than give its code.
		code = taxonomy.System.MapLabel(m.Code).Code
	}
	if code == "" {
		codes := make([]string, len(taxonomy.System.Modes))
		for i, sm := range taxonomy.System.Modes {
			codes[i] = sm.Code
		}
		problems = append(problems, fmt.Sprintf("%s: \"code\" must be one of %s, not %q", systemLabel, strings.Join(codes, ", "), m.Code))
	}
	if len(problems) > 0 {
		return nil, true, problems
	}
	return &SystemAnswer{Code: code, ModeAnswer: ma}, true, nil
}

// markedPresent lists, in taxonomy order, the modes an answer marks present.
func markedPresent(byCode map[string]rawMode) []string {
	var codes []string
	for _, mode := range taxonomy.MAST.Modes {
		if present, err := readBool(byCode[mode.Code].Present); err == nil && present {
			codes = append(codes, mode.Code)
		}
	}
	return codes
}

// readEntry reads and checks one verdict, a mode's or the system failure's,
// named label in the problems: present, confidence, and for a present one
// the cited steps, the quote and the explanation.
func readEntry(label string, m rawMode, t *trace.Trace, v *view) (ModeAnswer, []string) {
	var ma ModeAnswer
	var err error
	if ma.Present, err = readBool(m.Present); err != nil {
		return ma, []string{fmt.Sprintf("%s: \"present\" %v", label, err)}
	}
	var problems []string
	if ma.Confidence, err = readConfidence(m.Confidence); err != nil {
		problems = append(problems, fmt.Sprintf("%s: \"confidence\" %v", label, err))
	}
	ma.Explanation = strings.TrimSpace(m.Explanation)
	if !ma.Present {
		return ma, problems
	}
	ma.Quote = strings.TrimSpace(m.Quote)
	problems = append(problems, checkEvidence(label, m.Steps, ma.Quote, t, v, &ma)...)
	if ma.Explanation == "" {
		problems = append(problems, fmt.Sprintf("%s is marked present but has no explanation", label))
	}
	return ma, problems
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
