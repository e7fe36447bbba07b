package rules

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Spec is one rule as written in a rule file. Its yaml tags are the file's
// field names, so a Spec marshals to the rule it describes (AppendRule).
// Exactly one of the shape fields (Match, Sequence, NeverFollowed, Repeat,
// Count, Budget) is set.
type Spec struct {
	Name string `yaml:"name"`
	Mode string `yaml:"mode"`
	// Doc says in its first sentence what the rule finds.
	Doc string `yaml:"doc"`
	// Severity is low, medium or high; "" is medium.
	Severity string `yaml:"severity,omitempty"`
	// Confidence of the rule's findings, in (0, 1]; 0 is the default 0.8.
	Confidence float64 `yaml:"confidence,omitempty"`

	Match         *Matcher       `yaml:"match,omitempty"`
	Sequence      *Sequence      `yaml:"sequence,omitempty"`
	NeverFollowed *NeverFollowed `yaml:"never_followed,omitempty"`
	Repeat        *Repeat        `yaml:"repeat,omitempty"`
	Count         *Count         `yaml:"count,omitempty"`
	Budget        *Budget        `yaml:"budget,omitempty"`
}

// Defaults of a rule's optional fields.
const (
	DefaultSeverity   = "medium"
	DefaultConfidence = 0.8
)

// Severities are the accepted severities, lowest first.
var Severities = []string{"low", "medium", "high"}

// Matcher selects steps. Every field given must hold; a list holds when any
// of its entries does. The regular expressions (RE2) hold when they match
// anywhere in the field; Any matches Text or Args.
type Matcher struct {
	Kind    List   `yaml:"kind,omitempty"` // trace.Kind names
	Role    List   `yaml:"role,omitempty"`
	Agent   List   `yaml:"agent,omitempty"`
	Tool    List   `yaml:"tool,omitempty"`
	Exit    *Exit  `yaml:"exit,omitempty"`     // holds only on steps with an exit code
	Error   *bool  `yaml:"error,omitempty"`    // Step.IsError
	ByAgent *bool  `yaml:"by_agent,omitempty"` // trace.ByAgent
	Text    string `yaml:"text,omitempty"`
	Args    string `yaml:"args,omitempty"`
	Any     string `yaml:"any,omitempty"`
	// Not must not hold on the step.
	Not *Matcher `yaml:"not,omitempty"`
}

// Sequence finds a step matching First followed, within Within steps, by
// the first step after it that matches Then.
type Sequence struct {
	First  *Matcher `yaml:"first"`
	Then   *Matcher `yaml:"then"`
	Within int      `yaml:"within"`
}

// NeverFollowed finds a step matching First that no step matching By
// follows within Within steps, or at all when Within is 0.
type NeverFollowed struct {
	First  *Matcher `yaml:"first"`
	By     *Matcher `yaml:"by"`
	Within int      `yaml:"within,omitempty"`
}

// Repeat finds Times or more matching steps whose Same fields are
// identical (whitespace-normalised).
type Repeat struct {
	Match *Matcher `yaml:"match"`
	Same  List     `yaml:"same"` // tool, args, text
	Times int      `yaml:"times"`
}

// Count finds a run with AtLeast matching steps.
type Count struct {
	Match   *Matcher `yaml:"match"`
	AtLeast int      `yaml:"at_least"`
}

// Budget finds a run longer than Steps steps or than Tokens tokens; 0 is no
// limit on that measure.
type Budget struct {
	Steps  int `yaml:"steps,omitempty"`
	Tokens int `yaml:"tokens,omitempty"`
}

// List is a field that takes one value or a list of them. One value
// marshals as a scalar, several as a flow sequence.
type List []string

// MarshalYAML writes one value as itself and several as [a, b].
func (l List) MarshalYAML() (any, error) {
	if len(l) == 1 {
		return l[0], nil
	}
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, s := range l {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s})
	}
	return n, nil
}

// UnmarshalYAML reads a scalar or a list of scalars.
func (l *List) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = List{n.Value}
		return nil
	}
	var out []string
	if err := n.Decode(&out); err != nil {
		return err
	}
	*l = out
	return nil
}

// Exit is an exit-code condition: nonzero, zero, or any of Codes.
type Exit struct {
	NonZero bool
	Zero    bool
	Codes   []int
}

// String is the condition as a rule file writes it.
func (e Exit) String() string {
	switch {
	case e.NonZero:
		return "nonzero"
	case e.Zero:
		return "zero"
	case len(e.Codes) == 1:
		return strconv.Itoa(e.Codes[0])
	}
	return fmt.Sprint(e.Codes)
}

// Holds reports whether an exit code meets the condition.
func (e Exit) Holds(code int) bool {
	switch {
	case e.NonZero:
		return code != 0
	case e.Zero:
		return code == 0
	}
	for _, c := range e.Codes {
		if c == code {
			return true
		}
	}
	return false
}

// MarshalYAML writes nonzero, zero, a code or a list of codes.
func (e Exit) MarshalYAML() (any, error) {
	switch {
	case e.NonZero:
		return "nonzero", nil
	case e.Zero:
		return "zero", nil
	case len(e.Codes) == 1:
		return e.Codes[0], nil
	}
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, c := range e.Codes {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(c)})
	}
	return n, nil
}

// UnmarshalYAML reads what MarshalYAML writes.
func (e *Exit) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseExit(n)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*e = v
	return nil
}

// parseExit reads an exit condition from its node.
func parseExit(n *yaml.Node) (Exit, error) {
	bad := fmt.Errorf("exit: nonzero, zero, an integer or a list of integers")
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Value {
		case "nonzero":
			return Exit{NonZero: true}, nil
		case "zero":
			return Exit{Zero: true}, nil
		}
		c, err := strconv.Atoi(n.Value)
		if err != nil {
			return Exit{}, bad
		}
		return Exit{Codes: []int{c}}, nil
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return Exit{}, bad
		}
		var e Exit
		for _, item := range n.Content {
			c, err := strconv.Atoi(item.Value)
			if item.Kind != yaml.ScalarNode || err != nil {
				return Exit{}, bad
			}
			e.Codes = append(e.Codes, c)
		}
		return e, nil
	}
	return Exit{}, bad
}

// Code is a failure code of the user's own, declared in the codes section.
type Code struct {
	Code string `yaml:"code"`
	Name string `yaml:"name"`
	Doc  string `yaml:"doc,omitempty"`
	Line int    `yaml:"-" json:"-"`
}

// Shape names the rule's shape: match, sequence, never_followed, repeat,
// count or budget.
func (s *Spec) Shape() string {
	switch {
	case s.Match != nil:
		return "match"
	case s.Sequence != nil:
		return "sequence"
	case s.NeverFollowed != nil:
		return "never_followed"
	case s.Repeat != nil:
		return "repeat"
	case s.Count != nil:
		return "count"
	case s.Budget != nil:
		return "budget"
	}
	return ""
}
