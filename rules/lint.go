package rules

import (
	"fmt"
	"sort"

	"github.com/faultline/faultline/internal/text"
)

// Lint reports the rules that name a tool the corpus never calls: tools
// counts the corpus's steps by tool name. Each warning reads path:line,
// where the name is written, and suggests the nearest name the corpus does
// use when one is close, since a misspelt tool makes a rule silently match
// nothing.
func (s *Set) Lint(tools map[string]int) []error {
	names := make([]string, 0, len(tools))
	for name, n := range tools {
		if n > 0 && name != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []error
	for _, r := range s.Rules {
		for _, ref := range r.tools {
			if tools[ref.name] > 0 {
				continue
			}
			msg := fmt.Sprintf("%s:%d: rule %s: tool %q never occurs in the traces", s.Path, ref.line, r.Name, ref.name)
			if near := nearest(ref.name, names, tools); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			out = append(out, fmt.Errorf("%s", msg))
		}
	}
	return out
}

// nearest returns the name closest to want by edit distance, when it is
// close enough to be a misspelling (at most a third of want's length, and
// at least one edit allowed); ties go to the more frequent name.
func nearest(want string, names []string, counts map[string]int) string {
	limit := max(1, len([]rune(want))/3)
	best, bestD := "", limit+1
	for _, name := range names {
		d := text.Distance(want, name)
		if d < bestD || (d == bestD && best != "" && counts[name] > counts[best]) {
			best, bestD = name, d
		}
	}
	return best
}
