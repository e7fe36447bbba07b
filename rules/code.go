package rules

// IsCode reports whether s is written as a failure code (FM-1.3, SYS-2, a
// rule file's OPS-1): what a filter by mode may name, whether or not any
// rule file in reach declares it.
func IsCode(s string) bool { return codePattern.MatchString(s) }
