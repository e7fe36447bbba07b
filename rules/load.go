package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/yamlerr"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// Set is the contents of a rule file.
type Set struct {
	Path string
	// Hash is a content hash of the canonical codes and rules (sha256, 12
	// hex digits): comments, layout and defaults spelt out do not change it.
	Hash  string
	Codes []Code
	Rules []*Rule
}

// Rule is one rule of a file, compiled.
type Rule struct {
	Spec
	Line int
	// Detector runs the rule: Name is the rule's name, Mode its code,
	// Version the hash of its canonical spec.
	Detector *detect.Detector
	// tools are the tool names its matchers require, where they are
	// written, for Lint.
	tools []toolRef
	prog  *program
}

type toolRef struct {
	name string
	line int
}

var (
	namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	codePattern = regexp.MustCompile(`^[A-Z][A-Z0-9]*-[0-9A-Za-z.]+$`)
)

// Load reads a rule file; "" gives an empty set.
func Load(path string) (*Set, error) {
	if path == "" {
		return Parse("", nil)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	return Parse(path, data)
}

// LoadSettings reads the codes and rules sections of the settings file
// (faultline.yaml), whose other sections belong to other commands and are
// left to them; "" gives an empty set.
func LoadSettings(path string) (*Set, error) {
	if path == "" {
		return Parse("", nil)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	return parseRules(path, data)
}

// Parse reads a rule file from data, naming path in its errors, which read
// path:line: what is wrong.
func Parse(path string, data []byte) (*Set, error) {
	return parse(&parser{path: path}, data)
}

func parse(p *parser, data []byte) (*Set, error) {
	path := p.path
	s := &Set{Path: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlerr.Located(path, err)
	}
	if len(doc.Content) > 0 {
		if err := s.parseTop(p, doc.Content[0]); err != nil {
			return nil, err
		}
	}
	if err := s.compile(); err != nil {
		return nil, err
	}
	s.Hash = s.hash()
	return s, nil
}

type parser struct {
	path string
	// settings: the file is faultline.yaml, whose sections other than
	// codes and rules are other commands'.
	settings bool
}

func (p *parser) fail(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.path, n.Line, fmt.Sprintf(format, args...))
}

func (s *Set) parseTop(p *parser, top *yaml.Node) error {
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return nil // a file of comments only
	}
	var codes, rules *yaml.Node
	err := p.fields(top, "the file", func(key string, k, v *yaml.Node) error {
		switch key {
		case "codes":
			codes = v
		case "rules":
			rules = v
		case "models", "judge":
			// Other commands' sections of faultline.yaml.
		default:
			if !p.settings {
				return p.fail(k, "unknown section %q (codes, rules; models and judge are read by other commands)", key)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if codes != nil {
		if err := s.parseCodes(p, codes); err != nil {
			return err
		}
	}
	if rules != nil {
		return s.parseRules(p, rules)
	}
	return nil
}

func (s *Set) parseCodes(p *parser, n *yaml.Node) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return p.fail(n, "codes: a list of codes")
	}
	seen := map[string]int{}
	for _, item := range n.Content {
		c := Code{Line: item.Line}
		err := p.fields(item, "a code", func(key string, k, v *yaml.Node) error {
			switch key {
			case "code":
				return p.str(v, key, &c.Code)
			case "name":
				return p.str(v, key, &c.Name)
			case "doc":
				return p.str(v, key, &c.Doc)
			}
			return p.fail(k, "unknown field %q of a code (code, name, doc)", key)
		})
		if err != nil {
			return err
		}
		switch {
		case c.Code == "":
			return p.fail(item, "a code needs code")
		case reservedCode(c.Code) || isKnownCode(c.Code):
			return p.fail(item, "code %s: FM- and SYS- codes belong to MAST and the system codes; choose a prefix of your own (OPS-1)", c.Code)
		case !codePattern.MatchString(c.Code):
			return p.fail(item, "code %q: write it as PREFIX-ID, e.g. OPS-1 (capitals, a dash, then letters, digits or dots)", c.Code)
		case c.Name == "":
			return p.fail(item, "code %s needs a name", c.Code)
		}
		if first, ok := seen[c.Code]; ok {
			return p.fail(item, "code %s is declared twice (first on line %d)", c.Code, first)
		}
		seen[c.Code] = c.Line
		s.Codes = append(s.Codes, c)
	}
	return nil
}

func isKnownCode(code string) bool {
	_, _, ok := taxonomy.Lookup(code)
	return ok
}

func (s *Set) parseRules(p *parser, n *yaml.Node) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return p.fail(n, "rules: a list of rules")
	}
	seen := map[string]int{}
	for _, item := range n.Content {
		r, err := s.parseRule(p, item)
		if err != nil {
			return err
		}
		if first, ok := seen[r.Name]; ok {
			return p.fail(item, "rule %s is given twice (first on line %d)", r.Name, first)
		}
		seen[r.Name] = r.Line
		s.Rules = append(s.Rules, r)
	}
	return nil
}

var shapeNames = []string{"match", "sequence", "never_followed", "repeat", "count", "budget"}

func (s *Set) parseRule(p *parser, n *yaml.Node) (*Rule, error) {
	r := &Rule{Line: n.Line}
	sp := &r.Spec
	var shapes []string
	var modeAt, nameAt *yaml.Node
	err := p.fields(n, "a rule", func(key string, k, v *yaml.Node) error {
		if slices.Contains(shapeNames, key) {
			shapes = append(shapes, key)
		}
		var err error
		switch key {
		case "name":
			nameAt = v
			return p.str(v, key, &sp.Name)
		case "mode":
			modeAt = v
			return p.str(v, key, &sp.Mode)
		case "doc":
			return p.str(v, key, &sp.Doc)
		case "severity":
			if err := p.str(v, key, &sp.Severity); err != nil {
				return err
			}
			if !slices.Contains(Severities, sp.Severity) {
				return p.fail(v, "severity: low, medium or high, not %q", sp.Severity)
			}
			return nil
		case "confidence":
			f, err := strconv.ParseFloat(v.Value, 64)
			if v.Kind != yaml.ScalarNode || err != nil || !(f > 0 && f <= 1) {
				return p.fail(v, "confidence: a number above 0 and at most 1")
			}
			sp.Confidence = f
			return nil
		case "match":
			sp.Match, err = p.matcher(k, v, key, &r.tools)
		case "sequence":
			sp.Sequence, err = p.sequence(k, v, &r.tools)
		case "never_followed":
			sp.NeverFollowed, err = p.neverFollowed(k, v, &r.tools)
		case "repeat":
			sp.Repeat, err = p.repeat(k, v, &r.tools)
		case "count":
			sp.Count, err = p.count(k, v, &r.tools)
		case "budget":
			sp.Budget, err = p.budget(k, v)
		default:
			return p.fail(k, "unknown field %q of a rule (name, mode, doc, severity, confidence, and one of %s)", key, strings.Join(shapeNames, ", "))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case sp.Name == "":
		return nil, p.fail(n, "a rule needs a name")
	case !namePattern.MatchString(sp.Name):
		return nil, p.fail(nameAt, "rule name %q: lower-case letters, digits and dashes, starting with a letter or digit", sp.Name)
	}
	if _, builtin := detect.Lookup(sp.Name); builtin {
		return nil, p.fail(nameAt, "rule %s: the name of a built-in detector; choose another", sp.Name)
	}
	switch {
	case sp.Mode == "":
		return nil, p.fail(n, "rule %s needs a mode (a MAST code such as FM-1.3, a SYS- code, or a code declared under codes)", sp.Name)
	case !isKnownCode(sp.Mode) && !s.declared(sp.Mode):
		return nil, p.fail(modeAt, "rule %s: unknown mode %q (a MAST code such as FM-1.3, a SYS- code, or a code declared under codes)", sp.Name, sp.Mode)
	case strings.TrimSpace(sp.Doc) == "":
		return nil, p.fail(n, "rule %s needs a doc: a first sentence saying what it finds", sp.Name)
	case len(shapes) == 0:
		return nil, p.fail(n, "rule %s has no shape: give one of %s", sp.Name, strings.Join(shapeNames, ", "))
	case len(shapes) > 1:
		return nil, p.fail(n, "rule %s gives %s and %s: give exactly one shape", sp.Name, shapes[0], shapes[1])
	}
	return r, nil
}

func (s *Set) declared(code string) bool {
	_, ok := s.Code(code)
	return ok
}

// Code returns a code declared in the file, with its name and doc.
func (s *Set) Code(code string) (Code, bool) {
	for _, c := range s.Codes {
		if c.Code == code {
			return c, true
		}
	}
	return Code{}, false
}

func (p *parser) sequence(at, n *yaml.Node, tools *[]toolRef) (*Sequence, error) {
	q := &Sequence{}
	var withinAt *yaml.Node
	err := p.fields(n, "sequence", func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "first":
			q.First, err = p.matcher(k, v, "sequence.first", tools)
		case "then":
			q.Then, err = p.matcher(k, v, "sequence.then", tools)
		case "within":
			withinAt = v
			err = p.atLeast(v, "sequence.within", 1, &q.Within)
		default:
			err = p.fail(k, "unknown field %q of sequence (first, then, within)", key)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case q.First == nil:
		return nil, p.fail(at, "sequence needs first")
	case q.Then == nil:
		return nil, p.fail(at, "sequence needs then")
	case withinAt == nil:
		return nil, p.fail(at, "sequence needs within: how many steps may separate first and then")
	}
	return q, nil
}

func (p *parser) neverFollowed(at, n *yaml.Node, tools *[]toolRef) (*NeverFollowed, error) {
	q := &NeverFollowed{}
	err := p.fields(n, "never_followed", func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "first":
			q.First, err = p.matcher(k, v, "never_followed.first", tools)
		case "by":
			q.By, err = p.matcher(k, v, "never_followed.by", tools)
		case "within":
			err = p.atLeast(v, "never_followed.within", 1, &q.Within)
		default:
			err = p.fail(k, "unknown field %q of never_followed (first, by, within)", key)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case q.First == nil:
		return nil, p.fail(at, "never_followed needs first")
	case q.By == nil:
		return nil, p.fail(at, "never_followed needs by")
	}
	return q, nil
}

var sameFields = []string{"tool", "args", "text"}

func (p *parser) repeat(at, n *yaml.Node, tools *[]toolRef) (*Repeat, error) {
	q := &Repeat{}
	var timesAt *yaml.Node
	err := p.fields(n, "repeat", func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "match":
			q.Match, err = p.matcher(k, v, "repeat.match", tools)
		case "same":
			if err = p.list(v, "repeat.same", &q.Same); err != nil {
				return err
			}
			for i, f := range q.Same {
				if !slices.Contains(sameFields, f) {
					return p.fail(v, "repeat.same: %q is not one of tool, args, text", f)
				}
				if slices.Contains(q.Same[:i], f) {
					return p.fail(v, "repeat.same: %s is given twice", f)
				}
			}
		case "times":
			timesAt = v
			err = p.atLeast(v, "repeat.times", 2, &q.Times)
		default:
			err = p.fail(k, "unknown field %q of repeat (match, same, times)", key)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case q.Match == nil:
		return nil, p.fail(at, "repeat needs match")
	case len(q.Same) == 0:
		return nil, p.fail(at, "repeat needs same: the fields that must be identical (tool, args, text)")
	case timesAt == nil:
		return nil, p.fail(at, "repeat needs times (2 or more)")
	}
	return q, nil
}

func (p *parser) count(at, n *yaml.Node, tools *[]toolRef) (*Count, error) {
	q := &Count{}
	var atLeastAt *yaml.Node
	err := p.fields(n, "count", func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "match":
			q.Match, err = p.matcher(k, v, "count.match", tools)
		case "at_least":
			atLeastAt = v
			err = p.atLeast(v, "count.at_least", 1, &q.AtLeast)
		default:
			err = p.fail(k, "unknown field %q of count (match, at_least)", key)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case q.Match == nil:
		return nil, p.fail(at, "count needs match")
	case atLeastAt == nil:
		return nil, p.fail(at, "count needs at_least (1 or more)")
	}
	return q, nil
}

func (p *parser) budget(at, n *yaml.Node) (*Budget, error) {
	q := &Budget{}
	err := p.fields(n, "budget", func(key string, k, v *yaml.Node) error {
		switch key {
		case "steps":
			return p.atLeast(v, "budget.steps", 1, &q.Steps)
		case "tokens":
			return p.atLeast(v, "budget.tokens", 1, &q.Tokens)
		}
		return p.fail(k, "unknown field %q of budget (steps, tokens)", key)
	})
	if err != nil {
		return nil, err
	}
	if q.Steps == 0 && q.Tokens == 0 {
		return nil, p.fail(at, "budget: give steps, tokens or both")
	}
	return q, nil
}

// matcher reads a matcher and checks that it can hold. what names it in
// errors; tools collects the tool names it requires.
func (p *parser) matcher(at, n *yaml.Node, what string, tools *[]toolRef) (*Matcher, error) {
	m := &Matcher{}
	given := 0
	err := p.fields(n, what, func(key string, k, v *yaml.Node) error {
		given++
		switch key {
		case "kind":
			if err := p.list(v, what+".kind", &m.Kind); err != nil {
				return err
			}
			for _, kind := range m.Kind {
				if !trace.Kind(kind).Valid() {
					return p.fail(v, "%s.kind: unknown kind %q (%s)", what, kind, kindNames())
				}
			}
			return nil
		case "role":
			return p.list(v, what+".role", &m.Role)
		case "agent":
			return p.list(v, what+".agent", &m.Agent)
		case "tool":
			if err := p.list(v, what+".tool", &m.Tool); err != nil {
				return err
			}
			if tools != nil {
				for i, name := range m.Tool {
					at := v
					if v.Kind == yaml.SequenceNode {
						at = v.Content[i]
					}
					*tools = append(*tools, toolRef{name: name, line: at.Line})
				}
			}
			return nil
		case "exit":
			e, err := parseExit(v)
			if err != nil {
				return p.fail(v, "%s.%v", what, err)
			}
			m.Exit = &e
			return nil
		case "error":
			return p.boolean(v, what+".error", &m.Error)
		case "by_agent":
			return p.boolean(v, what+".by_agent", &m.ByAgent)
		case "text":
			return p.regex(v, what+".text", &m.Text)
		case "args":
			return p.regex(v, what+".args", &m.Args)
		case "any":
			return p.regex(v, what+".any", &m.Any)
		case "not":
			// A step a not excludes is not one the rule requires, so its
			// tool names are not linted.
			var err error
			m.Not, err = p.matcher(k, v, what+".not", nil)
			return err
		}
		return p.fail(k, "unknown field %q of a matcher (kind, role, agent, tool, exit, error, by_agent, text, args, any, not)", key)
	})
	if err != nil {
		return nil, err
	}
	switch {
	case given == 0:
		return nil, p.fail(at, "%s: an empty matcher matches every step; give at least one field", what)
	case m.Exit != nil && len(m.Kind) > 0 && !slices.Contains(m.Kind, string(trace.KindToolResult)):
		return nil, p.fail(at, "%s cannot hold: exit codes live on tool_result steps, and kind is %s", what, strings.Join(m.Kind, ", "))
	case m.Not != nil && implies(m, m.Not):
		return nil, p.fail(at, "%s cannot hold: every step it matches is excluded by its not", what)
	}
	return m, nil
}

// implies reports whether every step m matches also matches not: when
// each field not gives is given alike by m. A not without fields always
// holds.
func implies(m, not *Matcher) bool {
	same := func(a, b List) bool { return len(b) == 0 || slices.Equal(a, b) }
	switch {
	case !same(m.Kind, not.Kind), !same(m.Role, not.Role), !same(m.Agent, not.Agent), !same(m.Tool, not.Tool):
		return false
	case not.Exit != nil && (m.Exit == nil || m.Exit.String() != not.Exit.String()):
		return false
	case not.Error != nil && (m.Error == nil || *m.Error != *not.Error):
		return false
	case not.ByAgent != nil && (m.ByAgent == nil || *m.ByAgent != *not.ByAgent):
		return false
	case not.Text != "" && m.Text != not.Text, not.Args != "" && m.Args != not.Args, not.Any != "" && m.Any != not.Any:
		return false
	case not.Not != nil && (m.Not == nil || !implies(not.Not, m.Not) || !implies(m.Not, not.Not)):
		return false
	}
	return true
}

func kindNames() string {
	names := make([]string, len(trace.Kinds))
	for i, k := range trace.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// regex reads an RE2 expression, refusing one that cannot select anything:
// one that matches only the empty string matches every step.
func (p *parser) regex(v *yaml.Node, key string, out *string) error {
	if err := p.str(v, key, out); err != nil {
		return err
	}
	if _, err := regexp.Compile(*out); err != nil {
		return p.fail(v, "%s: bad regular expression: %v", key, err)
	}
	re, err := syntax.Parse(*out, syntax.Perl)
	if err != nil {
		return p.fail(v, "%s: bad regular expression: %v", key, err)
	}
	switch onlyEmpty(re.Simplify()) {
	case matchesNothing:
		return p.fail(v, "%s: the regular expression %q can never match", key, *out)
	case matchesEmpty:
		return p.fail(v, "%s: the regular expression %q can match only the empty string, so it matches every step", key, *out)
	}
	return nil
}

type emptiness int

const (
	matchesText    emptiness = iota // can match some non-empty text
	matchesEmpty                    // matches only the empty string
	matchesNothing                  // matches nothing at all
)

// onlyEmpty classifies what a parsed expression can match.
func onlyEmpty(re *syntax.Regexp) emptiness {
	switch re.Op {
	case syntax.OpNoMatch:
		return matchesNothing
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return matchesEmpty
	case syntax.OpCapture, syntax.OpPlus:
		return onlyEmpty(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		if onlyEmpty(re.Sub[0]) == matchesText {
			return matchesText
		}
		return matchesEmpty
	case syntax.OpRepeat:
		if re.Max == 0 {
			return matchesEmpty
		}
		if sub := onlyEmpty(re.Sub[0]); sub != matchesNothing || re.Min > 0 {
			return sub
		}
		return matchesEmpty
	case syntax.OpConcat:
		worst := matchesEmpty
		for _, sub := range re.Sub {
			switch onlyEmpty(sub) {
			case matchesNothing:
				return matchesNothing
			case matchesText:
				worst = matchesText
			}
		}
		return worst
	case syntax.OpAlternate:
		best := matchesNothing
		for _, sub := range re.Sub {
			best = min(best, onlyEmpty(sub)) // the constants run from most to least
		}
		return best
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return matchesNothing
		}
	}
	return matchesText
}

// fields calls fn with each key of a mapping node, its key node and its
// value, refusing a key given twice.
func (p *parser) fields(n *yaml.Node, what string, fn func(key string, k, v *yaml.Node) error) error {
	return yamlerr.Fields(n, what, p.fail, fn)
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func (p *parser) str(v *yaml.Node, key string, out *string) error {
	if v.Kind != yaml.ScalarNode || isNull(v) {
		return p.fail(v, "%s: a string", key)
	}
	*out = v.Value
	return nil
}

// list reads one string or a list of them, none empty.
func (p *parser) list(v *yaml.Node, key string, out *List) error {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
		if len(items) == 0 {
			return p.fail(v, "%s: an empty list holds for no step", key)
		}
	}
	for _, item := range items {
		var s string
		if err := p.str(item, key, &s); err != nil {
			return err
		}
		if s == "" {
			return p.fail(item, "%s: an empty name", key)
		}
		*out = append(*out, s)
	}
	return nil
}

func (p *parser) boolean(v *yaml.Node, key string, out **bool) error {
	b, err := strconv.ParseBool(v.Value)
	if v.Kind != yaml.ScalarNode || isNull(v) || err != nil {
		return p.fail(v, "%s: true or false", key)
	}
	*out = &b
	return nil
}

func (p *parser) atLeast(v *yaml.Node, key string, least int, out *int) error {
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || n < least || n > maxCount {
		return p.fail(v, "%s: a whole number from %d to %d", key, least, maxCount)
	}
	*out = n
	return nil
}

// maxCount bounds the numbers a rule gives (within, times, at_least,
// budgets), far above any run's length.
const maxCount = 1_000_000_000

// canonical is a rule as hashed: its spec with the defaults filled in, so
// that spelling a default out does not change the hash.
func canonical(sp Spec) Spec {
	if sp.Severity == "" {
		sp.Severity = DefaultSeverity
	}
	if sp.Confidence == 0 {
		sp.Confidence = DefaultConfidence
	}
	return sp
}

func digest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// A Spec holds strings, numbers and lists only; it always encodes.
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:12]
}

func (s *Set) hash() string {
	specs := make([]Spec, len(s.Rules))
	for i, r := range s.Rules {
		specs[i] = canonical(r.Spec)
	}
	return digest(struct {
		Codes []Code
		Rules []Spec
	}{s.Codes, specs})
}
