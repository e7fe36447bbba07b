package text

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"sync"
)

// Regexp returns a function that compiles pattern on its first call and
// hands back the same expression after. Compiling a counted repetition
// ({15,200}) or a large Unicode class costs milliseconds, and a package's
// expressions compiled at start were half of the time of a command that
// never used them (faultline version, report, serve). The pattern is
// parsed at once, so a pattern that cannot compile still fails when the
// program starts, not at its first use: what parses, compiles.
func Regexp(pattern string) func() *regexp.Regexp {
	if _, err := syntax.Parse(pattern, syntax.Perl); err != nil {
		panic(fmt.Sprintf("regexp: Compile(%q): %v", pattern, err))
	}
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
