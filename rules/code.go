package rules

import (
	"strings"

	"github.com/faultline/faultline/taxonomy"
)

// IsCustomCode reports whether s is written as a code of a rule file's own
// (OPS-1): PREFIX-ID, with a prefix other than MAST's and the system
// codes'. A filter by mode may name one whether or not any rule file in
// reach declares it.
func IsCustomCode(s string) bool { return codePattern.MatchString(s) && !reservedCode(s) }

// reservedCode reports whether code has the prefix of MAST's codes or of
// the system codes, which a rule file may report but not declare.
func reservedCode(code string) bool {
	return strings.HasPrefix(code, "FM-") || strings.HasPrefix(code, "SYS-")
}

// CodeNames names the codes the file declares.
func (s *Set) CodeNames() map[string]string {
	names := make(map[string]string, len(s.Codes))
	for _, c := range s.Codes {
		names[c.Code] = c.Name
	}
	return names
}

// ModeName names a MAST or system code, or a code names holds (a rule
// file's own, as CodeNames gives them); "" for a code of none.
func ModeName(code string, names map[string]string) string {
	if name := taxonomy.Name(code); name != "" {
		return name
	}
	return names[code]
}
