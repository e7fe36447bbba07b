package rules

import (
	"regexp"
	"slices"
	"strings"

	"github.com/faultline/faultline/trace"
)

// matcher is a compiled Matcher.
type matcher struct {
	kinds   []trace.Kind
	roles   []string
	agents  []string
	tools   []string
	exit    *Exit
	isError *bool
	byAgent *bool
	text    *regexp.Regexp
	args    *regexp.Regexp
	any     *regexp.Regexp
	not     *matcher
}

func compileMatcher(m *Matcher) (*matcher, error) {
	c := &matcher{roles: m.Role, agents: m.Agent, tools: m.Tool, exit: m.Exit, isError: m.Error, byAgent: m.ByAgent}
	for _, k := range m.Kind {
		c.kinds = append(c.kinds, trace.Kind(k))
	}
	for _, re := range []struct {
		src string
		out **regexp.Regexp
	}{{m.Text, &c.text}, {m.Args, &c.args}, {m.Any, &c.any}} {
		if re.src == "" {
			continue
		}
		var err error
		if *re.out, err = regexp.Compile(re.src); err != nil {
			return nil, err
		}
	}
	if m.Not != nil {
		var err error
		if c.not, err = compileMatcher(m.Not); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Fields a hit's quote is taken from.
const (
	inNone = iota
	inText
	inArgs
)

// hit is a step a matcher held on, and where a regular expression matched
// in it, if one did: the quote is cut from there.
type hit struct {
	step   int
	field  int
	lo, hi int
}

// test reports whether m holds on step i of t. work counts the matchers
// evaluated, nested ones included, so that tests can bound a shape's work.
func (m *matcher) test(t *trace.Trace, i int, work *int) (hit, bool) {
	*work++
	s := &t.Steps[i]
	h := hit{step: i}
	switch {
	case m.kinds != nil && !slices.Contains(m.kinds, s.Kind),
		m.roles != nil && !slices.Contains(m.roles, s.Role),
		m.agents != nil && !slices.Contains(m.agents, s.Agent),
		m.tools != nil && !slices.Contains(m.tools, s.Tool),
		m.exit != nil && (s.ExitCode == nil || !m.exit.Holds(*s.ExitCode)),
		m.isError != nil && s.IsError != *m.isError,
		m.byAgent != nil && trace.ByAgent(s) != *m.byAgent:
		return h, false
	}
	// The regular expressions come last, as the costliest; the first to
	// match places the quote.
	if m.text != nil && !h.find(m.text, s.Text, inText) {
		return h, false
	}
	if m.args != nil && !h.find(m.args, s.Args, inArgs) {
		return h, false
	}
	if m.any != nil && !h.find(m.any, s.Text, inText) && !h.find(m.any, s.Args, inArgs) {
		return h, false
	}
	if m.not != nil {
		if _, excluded := m.not.test(t, i, work); excluded {
			return h, false
		}
	}
	return h, true
}

// find reports whether re matches in s, placing the hit's quote at the
// first match when none is placed yet.
func (h *hit) find(re *regexp.Regexp, s string, field int) bool {
	loc := re.FindStringIndex(s)
	if loc == nil {
		return false
	}
	if h.field == inNone && strings.TrimSpace(s[loc[0]:loc[1]]) != "" {
		h.field, h.lo, h.hi = field, loc[0], loc[1]
	}
	return true
}

// maxQuote bounds a quote's length in bytes.
const maxQuote = 200

// quote is verbatim evidence from the hit's step: what the regular
// expression matched, else the start of the step's text, arguments or
// tool name.
func (h hit) quote(t *trace.Trace) string {
	s := &t.Steps[h.step]
	switch h.field {
	case inText:
		return clip(s.Text[h.lo:h.hi])
	case inArgs:
		return clip(s.Args[h.lo:h.hi])
	}
	for _, v := range []string{s.Text, s.Args, s.Tool} {
		if q := clip(v); q != "" {
			return q
		}
	}
	return ""
}

// clip trims s and cuts it to at most maxQuote bytes at a rune boundary.
// No ellipsis is added: a quote must occur in the trace as it is.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxQuote {
		return s
	}
	cut := maxQuote
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return strings.TrimSpace(s[:cut])
}
