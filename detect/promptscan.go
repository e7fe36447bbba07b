package detect

import (
	"regexp"

	"slices"
	"strings"

	"github.com/faultline/faultline/internal/text"
)

// Reading a prompt's requirements with regular expressions tried at every
// position cost more than all the detectors together on many small runs:
// Go's engine has no literal to look for in a case-insensitive rule that
// opens with a word boundary and alternatives. Each rule below opens with
// one of a few words, so a prompt is searched for those words (in an ASCII
// lower-case copy, as fast as strings.Index) and the rule is tried only
// where one begins, anchored there. The answers are the rule's own: the
// leftmost match is the one at the first such position where the anchored
// rule matches.

// prompt is a text with its ASCII lower-case copy, byte for byte aligned.
type prompt struct {
	text, lower string
	// folded is set when the text holds one of the two characters outside
	// ASCII that (?i) matches to an ASCII letter (ſ to s, the Kelvin sign
	// to k): a word could then begin where the copy shows none, and the
	// rules run as written.
	folded bool
}

func newPrompt(text string) prompt {
	return prompt{
		text:   text,
		lower:  asciiLower(text),
		folded: strings.Contains(text, "ſ") || strings.Contains(text, "\u212a"),
	}
}

// asciiLower lower-cases the ASCII letters of s and nothing else, so that
// every byte keeps its offset.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// wordRule is a case-insensitive rule whose every match begins, at a word
// boundary, with one of words (lower case).
// Both expressions compile on first use (text.Regexp): the rule as written
// mostly never, since it serves only folded texts and sentence scans.
type wordRule struct {
	rule     func() *regexp.Regexp
	anchored func() *regexp.Regexp // rule, matching only at the start of the text
	words    []string
}

func newWordRule(pattern string, words ...string) wordRule {
	return wordRule{
		rule:     text.Regexp(pattern),
		anchored: text.Regexp(`^(?:` + pattern + `)`),
		words:    words,
	}
}

// find returns the leftmost match and its groups, as FindStringSubmatch.
func (r wordRule) find(p prompt) []string {
	if all := r.findAll(p, 1); len(all) > 0 {
		return all[0]
	}
	return nil
}

// findAll returns up to n matches (all when n < 0), as
// FindAllStringSubmatch.
func (r wordRule) findAll(p prompt, n int) [][]string {
	var out [][]string
	r.each(p, n, func(at int, loc []int) {
		m := make([]string, len(loc)/2)
		for i := range m {
			if loc[2*i] >= 0 {
				m[i] = p.text[at+loc[2*i] : at+loc[2*i+1]]
			}
		}
		out = append(out, m)
	})
	return out
}

// index returns where the leftmost match begins, or -1.
func (r wordRule) index(p prompt) int {
	start := -1
	r.each(p, 1, func(at int, loc []int) { start = at + loc[0] })
	return start
}

// each gives up to n matches (all when n < 0) in order, each as the offset
// its submatch indexes (FindStringSubmatchIndex's) count from.
func (r wordRule) each(p prompt, n int, match func(at int, loc []int)) {
	if p.folded {
		for _, loc := range r.rule().FindAllStringSubmatchIndex(p.text, n) {
			match(0, loc)
		}
		return
	}
	found, end := 0, 0 // matches do not overlap
	for _, at := range wordStarts(p.lower, r.words) {
		if at < end || (at > 0 && isWordByte(p.text[at-1])) { // no \b there
			continue
		}
		loc := r.anchored().FindStringSubmatchIndex(p.text[at:])
		if loc == nil {
			continue
		}
		match(at, loc)
		end = at + loc[1]
		if found++; n >= 0 && found == n {
			return
		}
	}
}

// wordStarts returns, in order, every offset of lower at which one of
// words begins.
func wordStarts(lower string, words []string) []int {
	var at []int
	for _, w := range words {
		for i := 0; ; {
			j := strings.Index(lower[i:], w)
			if j < 0 {
				break
			}
			at = append(at, i+j)
			i += j + 1
		}
	}
	slices.Sort(at)
	return slices.Compact(at)
}

// phraseRule is a case-insensitive rule whose matches hold neither a full
// stop nor a line break and contain a phrase (lower case): it is tried only
// on the stretches between those that contain the phrase.
type phraseRule struct {
	rule   func() *regexp.Regexp // compiled on first use (text.Regexp)
	phrase string
}

// find returns the leftmost match and its groups, as FindStringSubmatch.
func (r phraseRule) find(p prompt) []string {
	if p.folded {
		return r.rule().FindStringSubmatch(p.text)
	}
	from := 0
	for {
		i := strings.Index(p.lower[from:], r.phrase)
		if i < 0 {
			return nil
		}
		i += from
		start := strings.LastIndexAny(p.text[:i], ".\n") + 1
		stop := len(p.text)
		if j := strings.IndexAny(p.text[i:], ".\n"); j >= 0 {
			stop = i + j
		}
		if m := r.rule().FindStringSubmatch(p.text[start:stop]); m != nil {
			return m
		}
		from = stop
	}
}

// lineRule is a case-insensitive rule matched within one line, which it
// matches only when the line holds one of words (lower case).
type lineRule struct {
	rule  func() *regexp.Regexp // compiled on first use (text.Regexp)
	words []string
}

// matches reports whether the rule matches line, whose lower-case copy is
// lower (see prompt).
func (r lineRule) matches(line, lower string, folded bool) bool {
	if !folded && !slices.ContainsFunc(r.words, func(w string) bool { return strings.Contains(lower, w) }) {
		return false
	}
	return r.rule().MatchString(line)
}
