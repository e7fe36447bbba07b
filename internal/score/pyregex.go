package score

import (
	"fmt"
	"regexp"
	"strings"
)

// PythonRegexp compiles a Python regular expression as Go's RE2 would run it
// with re.search semantics (unanchored). Constructs RE2 lacks are refused
// rather than approximated: look-around, backreferences, conditionals and
// possessive or atomic groups. \Z becomes \z, and Python's $ (end, or before
// a final newline) becomes its RE2 equivalent.
func PythonRegexp(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			next := pattern[i+1]
			i++
			switch {
			case next == 'Z' && !inClass:
				b.WriteString(`\z`)
			case next >= '1' && next <= '9' && !inClass:
				return nil, fmt.Errorf("backreference \\%c is not supported", next)
			default:
				b.WriteByte('\\')
				b.WriteByte(next)
			}
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
			// A ] right after [ or [^ is a literal in both dialects.
			if strings.HasPrefix(pattern[i+1:], "^]") {
				b.WriteString("^]")
				i += 2
			} else if strings.HasPrefix(pattern[i+1:], "]") {
				b.WriteString("]")
				i++
			}
		case c == '(' && strings.HasPrefix(pattern[i:], "(?"):
			rest := pattern[i+2:]
			for _, bad := range []string{"=", "!", "<=", "<!", "P=", "(", ">"} {
				if strings.HasPrefix(rest, bad) {
					return nil, fmt.Errorf("(?%s…) is not supported by RE2", bad)
				}
			}
			b.WriteByte(c)
		case c == '$':
			b.WriteString(`(?:\n?\z)`)
		case (c == '+' || c == '*' || c == '?' || c == '}') && i+1 < len(pattern) && pattern[i+1] == '+':
			return nil, fmt.Errorf("possessive quantifier %c+ is not supported", c)
		default:
			b.WriteByte(c)
		}
	}
	return regexp.Compile(b.String())
}
