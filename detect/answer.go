package detect

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/faultline/faultline/internal/itbench"
	"github.com/faultline/faultline/internal/jsonscan"
	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
)

// answerFacts is what became of the output file the task requires (see
// taskSpec.Output): which calls wrote it, which validated it, whether it
// exists at the end, and its final content when the trace shows it whole.
type answerFacts struct {
	File        string
	Writes      []int // calls that try to write the file, in order, whether or not they succeeded
	Good        []int // those of Writes that succeeded
	Validations []int // calls that run the task's validator on it, in order
	// Exists is true when some step shows the file was there: a write, a read
	// or a validation of it succeeded, or the run directory holds it.
	Exists bool
	// Content is the final version of the file, when known: the file from the
	// run directory, or what toolcall.Final reads from the trace (a printed
	// copy after the last write, or the last write that showed it whole).
	Content      string
	ContentKnown bool
	ContentStep  int // the step Content was seen at; -1 when it came from the run directory
}

// LastWrite returns the last call that wrote the file, or -1.
func (a *answerFacts) LastWrite() int {
	if len(a.Writes) == 0 {
		return -1
	}
	return a.Writes[len(a.Writes)-1]
}

// answerFile returns the facts about the task's output file, or nil when the
// task names none.
func (f *facts) answerFile() *answerFacts {
	if f.answer != nil || f.task().Output == "" {
		return f.answer
	}
	spec := f.task()
	final := toolcall.FinalOf(f.t, spec.Output, func(i int) toolcall.Call { return f.call(i).Call })
	a := &answerFacts{File: spec.Output, Writes: final.Attempts, Good: final.Writes, Exists: final.Exists,
		Content: final.Content, ContentKnown: final.Known, ContentStep: final.At}
	f.answer = a
	if spec.Validator != "" {
		for i := range f.t.Steps {
			s := &f.t.Steps[i]
			if s.Kind != trace.KindToolCall || isPlanTool(s.Tool) || !strings.Contains(s.Args, a.File) {
				continue
			}
			if toolcall.Runs(f.command(i), spec.Validator) {
				a.Validations = append(a.Validations, i)
				a.Exists = a.Exists || f.succeeded(i)
			}
		}
	}
	if t := f.t; t.Diagnosis != nil && t.Diagnosis.Body != "" {
		a.Exists, a.ContentKnown, a.Content, a.ContentStep = true, true, t.Diagnosis.Body, -1
	}
	return a
}

// validationOK reports whether a validation call passed.
func (f *facts) validationOK(call int) bool {
	return f.succeeded(call) && !strings.Contains(strings.ToLower(f.output(call)), "parse error")
}

// zeroSections decodes an answer in ITBench Zero's diagnosis schema
// (itbench.AnswerFile: entities, propagations, alerts_explained) into its
// top-level fields, kept raw so that a wrong type can be told from an absent
// field; nil when text is not a JSON object.
func zeroSections(text string) map[string]json.RawMessage {
	top, err := jsonscan.RawObject([]byte(text))
	if err != nil {
		return nil
	}
	return top
}

// zeroAnswer is an answer text decoded in Zero's schema, once per trace for
// the several detectors that read it: its top-level fields, and each
// section decoded as a list of objects when first asked for. What it hands
// out is shared, to be read, not changed.
type zeroAnswer struct {
	text     string
	top      map[string]json.RawMessage // nil: not a JSON object
	sections map[string]zeroSection
}

type zeroSection struct {
	list []map[string]any
	ok   bool
}

// zeroAnswer decodes text, or returns it as already decoded.
func (f *facts) zeroAnswer(text string) *zeroAnswer {
	if f.zero == nil || f.zero.text != text {
		f.zero = &zeroAnswer{text: text, top: zeroSections(text), sections: map[string]zeroSection{}}
	}
	return f.zero
}

// objects is the section decoded as a list of JSON objects; ok is false
// when it is absent or anything else.
func (z *zeroAnswer) objects(section string) ([]map[string]any, bool) {
	s, done := z.sections[section]
	if !done {
		s.list, s.ok = objects(z.top[section])
		z.sections[section] = s
	}
	return s.list, s.ok
}

// objects decodes a raw field as a list of JSON objects; ok is false when it
// is absent or anything else.
func objects(raw json.RawMessage) (list []map[string]any, ok bool) {
	if raw == nil {
		return nil, false
	}
	// As json.Unmarshal into a []map[string]any would take it: a list whose
	// every element is an object or null.
	v, err := jsonscan.Any(raw)
	elems, isList := v.([]any)
	if err != nil || !isList {
		return nil, false
	}
	list = make([]map[string]any, len(elems))
	for i, e := range elems {
		switch e := e.(type) {
		case map[string]any:
			list[i] = e
		case nil:
		default:
			return nil, false
		}
	}
	return list, true
}

// diagnosisText returns the run's answer in Zero's schema when it has one:
// the final content of the answer file, or else a JSON object with an
// "entities" list in the agent's final message (runs that print the
// diagnosis instead of writing it). step is where it was seen (-1: the run
// directory).
func (f *facts) diagnosisText() (text string, step int, ok bool) {
	if f.task().Output == itbench.AnswerFile {
		if a := f.answerFile(); a.ContentKnown {
			return a.Content, a.ContentStep, true
		}
	}
	for i := len(f.t.Steps) - 1; i >= 0; i-- {
		s := &f.t.Steps[i]
		if s.Kind != trace.KindFinal {
			continue
		}
		open, end := strings.Index(s.Text, "{"), strings.LastIndex(s.Text, "}")
		if open < 0 || end < open {
			return "", 0, false
		}
		body := s.Text[open : end+1]
		if strings.Contains(body, `"entities"`) && json.Valid([]byte(body)) {
			return body, i, true
		}
		return "", 0, false
	}
	return "", 0, false
}

// contentSteps returns the steps that show the answer file's final content,
// for a finding about it to cite: the call that wrote it, or the call that
// printed it with its result (where the printed copy is); when the content came from the run
// directory, the last successful write; nil when there is none.
func (f *facts) contentSteps(a *answerFacts) []int {
	at := a.ContentStep
	if at < 0 {
		at = f.lastGoodWrite(a)
	}
	if at < 0 {
		return nil
	}
	if r := f.t.Steps[at].Pair; r != nil && !slices.Contains(a.Writes, at) {
		return []int{at, *r} // a read: the content is in its output
	}
	return []int{at}
}

// lastGoodWrite returns the last write of the answer file that succeeded, or -1.
func (f *facts) lastGoodWrite(a *answerFacts) int {
	if len(a.Good) == 0 {
		return -1
	}
	return a.Good[len(a.Good)-1]
}

// passedValidationAfter returns the first validation of the answer file at
// or after step from that passed, or -1.
func (f *facts) passedValidationAfter(a *answerFacts, from int) int {
	for _, v := range a.Validations {
		if v >= from && f.validationOK(v) {
			return v
		}
	}
	return -1
}
