package jsontext

import "strings"

// JoinNonEmpty joins the texts that are not empty, one a line.
func JoinNonEmpty(texts ...string) string {
	var out []string
	for _, t := range texts {
		if strings.TrimSpace(t) != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

// FirstNonEmpty returns the first of s that is not empty, or "".
func FirstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
