package rules

import "strings"

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
