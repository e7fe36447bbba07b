package discover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/taxonomy"
)

// Completer is a chat model: judge.OpenAI, on any OpenAI-compatible
// endpoint.
type Completer interface {
	Complete(ctx context.Context, req judge.Request) (*judge.Response, error)
}

// Naming is what a model made of a pattern: a short name, a sentence
// describing it, and the MAST mode it is an instance of, or "new".
// Status is "named", or "failed" with Error saying why (an endpoint
// that failed, or two answers that did not validate): a pattern the model
// could not name is reported as such, never left silently unnamed.
type Naming struct {
	Status      string `json:"status"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Code        string `json:"code,omitempty"`
	Error       string `json:"error,omitempty"`
	Calls       int    `json:"calls"`
}

// Naming statuses.
const (
	Named       = "named"
	NamingError = "failed"
)

// NewCode is the code of a pattern that is no MAST mode.
const NewCode = "new"

// Limits of an answer.
const (
	maxNameLength        = 80
	maxDescriptionLength = 400
)

// NameOptions say how patterns are named.
type NameOptions struct {
	Model       string
	Temperature *float64
	MaxTokens   int
}

// NamePatterns asks the model to name each pattern, one call each (and one
// more when an answer does not validate), and sets its Naming.
func NamePatterns(ctx context.Context, c Completer, patterns []*Pattern, opt NameOptions) error {
	for _, p := range patterns {
		if err := ctx.Err(); err != nil {
			return err
		}
		p.Naming = namePattern(ctx, c, p, opt)
	}
	return nil
}

func namePattern(ctx context.Context, c Completer, p *Pattern, opt NameOptions) *Naming {
	msgs := []judge.Message{{Role: "system", Content: namingSystem()}, {Role: "user", Content: namingPrompt(p)}}
	n := &Naming{}
	for attempt := 0; attempt < 2; attempt++ {
		n.Calls++
		resp, err := c.Complete(ctx, judge.Request{Model: opt.Model, Messages: msgs, Temperature: opt.Temperature, MaxTokens: opt.MaxTokens})
		if err != nil {
			// The client has retried what can be retried.
			return &Naming{Status: NamingError, Error: err.Error(), Calls: n.Calls}
		}
		name, problem := parseNaming(resp.Content)
		if problem == "" {
			name.Status, name.Calls = Named, n.Calls
			return name
		}
		n.Error = "the answer " + problem
		msgs = append(msgs, judge.Message{Role: "assistant", Content: resp.Content},
			judge.Message{Role: "user", Content: "That answer " + problem + ". Answer again with only the JSON object: " + namingShape})
	}
	n.Status = NamingError
	n.Error = "two answers did not validate; the last " + strings.TrimPrefix(n.Error, "the answer ")
	return n
}

const namingShape = `{"name": "...", "description": "...", "code": "FM-x.y or new"}`

// namingSystem is the instructions: what a pattern is, and the MAST modes
// to choose from.
func namingSystem() string {
	var b strings.Builder
	b.WriteString("You name recurring failure patterns found in the traces of LLM agents. A pattern is a signature that many failed runs share: " +
		"an error a tool returned, the way runs ended, or the place where a detector found a failure mode; variable parts are masked as <num>, <path>, <id> and the like.\n" +
		"Answer with one JSON object and nothing else: " + namingShape + "\n" +
		"- name: a few words naming the failure, at most 80 characters.\n" +
		"- description: one sentence saying what goes wrong in these runs.\n" +
		"- code: the MAST failure mode the pattern is an instance of, or \"new\" when it is none of them.\n\nThe MAST modes:\n")
	for _, m := range taxonomy.MAST.Modes {
		fmt.Fprintf(&b, "%s %s: %s\n", m.Code, m.Name, m.Definition)
	}
	return b.String()
}

// namingPrompt shows the model one pattern: its signature, its figures,
// the merged variants and quotes from the runs.
func namingPrompt(p *Pattern) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Kind: %s\nSignature: %s\n", p.Kind, p.Title())
	fmt.Fprintf(&b, "In %d of %d failed runs and %d of %d successful runs.\n", p.Failed.K, p.Failed.N, p.Succeeded.K, p.Succeeded.N)
	for _, v := range p.Variants {
		fmt.Fprintf(&b, "Similar signature: %s\n", v)
	}
	for _, q := range p.Quotes {
		fmt.Fprintf(&b, "Quote from a run: %s\n", q.Text)
	}
	return b.String()
}

// parseNaming reads and checks an answer: one JSON object (in a code
// fence or not) with a name, a description and a code that is a MAST mode
// or "new". problem says what is wrong, "" when nothing is.
func parseNaming(content string) (*Naming, string) {
	text := strings.TrimSpace(content)
	if strings.HasPrefix(text, "```") {
		text = strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```")
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text), "```"))
	}
	var raw map[string]any
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&raw); err != nil {
		return nil, "is not a JSON object"
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, "has text after the JSON object"
	}
	field := func(key string) (string, bool) {
		s, ok := raw[key].(string)
		return strings.TrimSpace(s), ok
	}
	name, ok := field("name")
	if !ok || name == "" {
		return nil, `has no "name" string`
	}
	if utf8.RuneCountInString(name) > maxNameLength {
		return nil, fmt.Sprintf(`has a "name" longer than %d characters`, maxNameLength)
	}
	desc, ok := field("description")
	if !ok || desc == "" {
		return nil, `has no "description" string`
	}
	if utf8.RuneCountInString(desc) > maxDescriptionLength {
		return nil, fmt.Sprintf(`has a "description" longer than %d characters`, maxDescriptionLength)
	}
	code, ok := field("code")
	if !ok {
		return nil, `has no "code" string`
	}
	if !strings.EqualFold(code, NewCode) {
		m, _, known := taxonomy.Lookup(code)
		if !known || !strings.HasPrefix(m.Code, "FM-") {
			return nil, fmt.Sprintf(`has "code" %q, which is neither a MAST mode (FM-1.1 … FM-3.3) nor "new"`, code)
		}
		code = m.Code
	} else {
		code = NewCode
	}
	for key := range raw {
		if key != "name" && key != "description" && key != "code" {
			return nil, fmt.Sprintf("has a field %q besides name, description and code", key)
		}
	}
	return &Naming{Name: name, Description: desc, Code: code}, ""
}
