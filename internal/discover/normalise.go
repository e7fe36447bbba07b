// Package discover finds recurring failure patterns in a cohort of traces
// without a model: the error texts, run endings and finding sites that
// failing runs share, with their parts that vary from run to run (ids,
// numbers, paths, times) masked, grouped, merged when near-identical, and
// ranked by how many failed runs they cover and how much more common they
// are in failures than in successes.
package discover

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/faultline/faultline/internal/text"
)

// Masks: what a variable part of a text becomes. A template is a
// normalised text; its masks are written <name>.
const (
	maskUUID = "<uuid>"
	maskTime = "<time>"
	maskDate = "<date>"
	maskIP   = "<ip>"
	maskURL  = "<url>"
	maskPath = "<path>"
	maskPod  = "<pod>"
	maskRS   = "<rs>"
	maskHex  = "<hex>"
	maskID   = "<id>"
	maskText = "<text>"
	maskNum  = "<num>"
)

// maskPatterns are the regular expressions a mask stands for in a rule
// that matches the verbatim text a template was made from.
var maskPatterns = map[string]string{
	maskUUID: `[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}`,
	maskTime: `[0-9][0-9T:.,+Z -]*`,
	maskDate: `\d{4}[-/]\d{2}[-/]\d{2}`,
	maskIP:   `\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?`,
	maskURL:  `\S+`,
	maskPath: `\S*`,
	maskPod:  `[a-z0-9]+-[a-z0-9]+`,
	maskRS:   `[a-z0-9]+`,
	maskHex:  `(?:0x)?[0-9A-Fa-f]+`,
	maskID:   `\S+`,
	maskText: `[^\n]*?`,
	maskNum:  `\d+(?:\.\d+)*`,
}

// podAlphabet is the alphabet Kubernetes writes generated name suffixes in
// (no vowels, no 0, 1 or 3), so that an English word is rarely taken for
// one.
const podAlphabet = `[bcdfghjklmnpqrstvwxz2456789]`

// The masks are applied in this order: the wider forms first, so that a
// UUID is not read as hex and numbers, or a timestamp as a date and
// numbers.
var (
	reUUID = bounded(`[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}`)
	reTime = bounded(`\d{4}-\d{2}-\d{2}[T ]\d{2}[:-]\d{2}(?:[:-]\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?` +
		`|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?`)
	reDate = bounded(`\d{4}-\d{2}-\d{2}|\d{4}/\d{2}/\d{2}`)
	reIP   = bounded(`\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?`)
	reURL  = text.Regexp(`\b[a-z][a-z0-9+.-]*://[^\s'"<>]+`)
	// A path starts at /, ~/, ./ or ../ and runs to a space, a quote or a
	// separator a message puts after it.
	rePath = text.Regexp(`(^|[\s'"=(\[,:])((?:~|\.\.?)?/[^\s'"(),;\[\]{}<>]*)`)
	// Pod names end in the replica set's hash and a 5-character suffix
	// (checkout-7d9f8c6b5-x2k4q); replica sets in the hash alone.
	rePod    = text.Regexp(`\b([a-z0-9]+(?:-[a-z0-9]+)*?)-` + podAlphabet + `{6,10}-` + podAlphabet + `{5}\b`)
	reRS     = text.Regexp(`\b([a-z0-9]+(?:-[a-z0-9]+)*?)-(` + podAlphabet + `{8,10})\b`)
	reHex    = bounded(`0x[0-9A-Fa-f]+|[0-9a-f]{8,}|[0-9A-F]{8,}`)
	reQuoted = text.Regexp(`(^|[\s=:(\[,])(['"` + "`" + `])`)
	reSpace  = text.Regexp(`\s+`)
)

// Normalise masks the parts of a line of text that vary from run to run
// of the same failure: UUIDs, timestamps and dates, IP addresses, URLs,
// paths, Kubernetes pod and replica-set suffixes, hex ids, quoted ids
// and long quoted texts, and numbers. Whitespace runs become one space.
// The result is deterministic: the same text always gives the same
// template.
//
// A path keeps its last element (masked in turn), and loses the
// directories before it: the directories are where a run worked (a
// workspace, a temporary directory, a user's home), which differ between
// runs of one failure, while the last element is what the failure is
// about (agent_output.json not found, pandas not installed in
// site-packages). Masking the path whole would merge "no such file
// agent_output.json" with "no such file alerts.json".
func Normalise(line string) string {
	line = reSpace().ReplaceAllString(strings.TrimSpace(line), " ")
	line = maskQuoted(line)
	line = reURL().ReplaceAllStringFunc(line, func(m string) string {
		// A URL ends before the punctuation a sentence puts after it.
		return maskURL + m[len(strings.TrimRight(m, ".,:;!?)")):]
	})
	line = rePath().ReplaceAllStringFunc(line, func(m string) string {
		sub := rePath().FindStringSubmatch(m)
		lead, path := sub[1], sub[2]
		trimmed := strings.TrimRight(path, "/")
		last := path[strings.LastIndexByte(trimmed, '/')+1:]
		if n := strings.Count(trimmed, "/"); n == 0 || (n == 1 && trimmed[0] == '/') {
			// The root, or one element under it: no directory to mask.
			return lead + maskInner(path)
		}
		return lead + maskPath + "/" + maskInner(last)
	})
	return maskInner(line)
}

// maskInner applies the masks that apply inside any text: those of
// Normalise but quoted strings, URLs and paths.
func maskInner(s string) string {
	s = replaceBounded(s, reUUID(), func(string) string { return maskUUID })
	s = replaceBounded(s, reTime(), func(string) string { return maskTime })
	s = replaceBounded(s, reDate(), func(string) string { return maskDate })
	s = replaceBounded(s, reIP(), func(string) string { return maskIP })
	s = rePod().ReplaceAllString(s, "${1}-"+maskPod)
	s = reRS().ReplaceAllStringFunc(s, func(m string) string {
		sub := reRS().FindStringSubmatch(m)
		if !strings.ContainsAny(sub[2], "0123456789") {
			return m // a word, not a hash
		}
		return sub[1] + "-" + maskRS
	})
	s = replaceBounded(s, reHex(), func(m string) string {
		if strings.HasPrefix(m, "0x") || (strings.ContainsAny(m, "0123456789") && strings.ContainsAny(m, "abcdefABCDEF")) {
			return maskHex
		}
		return m // all digits (a number, masked below) or all letters (a word)
	})
	return maskNumbers(s)
}

// maskNumbers masks runs of digits (with decimal points) but those that
// go on a word (utf8, x2k4q, gpt4, v0.2), unless they are long enough to be
// an id (tmp12345). Digits a unit follows are masked (30s, 512Mi).
func maskNumbers(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r < '0' || r > '9' {
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		end := i
		for end < len(s) && (isDigit(s[end]) || (s[end] == '.' && end+1 < len(s) && isDigit(s[end+1]) && end > i)) {
			end++
		}
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		if i > 0 && unicode.IsLetter(before) && end-i < 4 {
			b.WriteString(s[i:end])
		} else {
			b.WriteString(maskNum)
		}
		i = end
	}
	return b.String()
}

// bounded is a regular expression, compiled on first use, for a token
// that stands apart from the letters and digits around it; unlike \b, an
// underscore separates (alerts_at_2025-12-15T17-30-49.json holds a time).
func bounded(expr string) func() *regexp.Regexp {
	return text.Regexp(`(?:^|[^0-9A-Za-z])(` + expr + `)`)
}

// replaceBounded replaces each token a bounded expression finds, when no
// letter or digit follows it, by what mask makes of it.
func replaceBounded(s string, re *regexp.Regexp, mask func(string) string) string {
	var b strings.Builder
	at := 0
	for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		start, end := loc[2], loc[3]
		if end < len(s) && isAlnum(s[end]) {
			continue
		}
		b.WriteString(s[at:start])
		b.WriteString(mask(s[start:end]))
		at = end
	}
	b.WriteString(s[at:])
	return b.String()
}

func isAlnum(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// maskQuoted masks the contents of quoted strings that are ids (one word
// with digits, or a long one) as <id>, and of those that are long texts
// (a command or a message quoted whole, which differ between runs) as
// <text>. A quote opens after the start of the line, a space or an
// opening punctuation mark, so that an apostrophe (don't) opens none; one
// never closed runs to the end of the line (the first line of a quoted
// multi-line script).
func maskQuoted(s string) string {
	var b strings.Builder
	rest := s
	for {
		loc := reQuoted().FindStringSubmatchIndex(rest)
		if loc == nil {
			b.WriteString(rest)
			return b.String()
		}
		open := loc[4]
		q := rest[open]
		b.WriteString(rest[:open+1])
		body := rest[open+1:]
		end := strings.IndexByte(body, q)
		closed := end >= 0
		if !closed {
			end = len(body)
		}
		content := body[:end]
		switch {
		case rePod().MatchString(content) || reRS().MatchString(content):
			// A pod or replica set keeps its name: masked below.
			b.WriteString(content)
		case isQuotedID(content):
			b.WriteString(maskID)
		case utf8.RuneCountInString(content) > 40:
			b.WriteString(maskText)
		default:
			b.WriteString(content)
		}
		if !closed {
			return b.String()
		}
		b.WriteByte(q)
		rest = body[end+1:]
	}
}

// isQuotedID says whether a quoted string is an id: one word holding
// digits and letters (a request id, a container id), or one long word.
func isQuotedID(s string) bool {
	if s == "" || strings.ContainsFunc(s, unicode.IsSpace) || strings.ContainsAny(s, "/<>") {
		return false
	}
	hasDigit := strings.ContainsFunc(s, unicode.IsDigit)
	hasLetter := strings.ContainsFunc(s, unicode.IsLetter)
	return (hasDigit && hasLetter && len(s) >= 6) || len(s) >= 24
}

// FirstLine is the first meaningful line of a text: the first with a
// letter or a digit in it, trimmed, and cut to limit characters.
func FirstLine(s string, limit int) string {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if strings.ContainsFunc(line, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			return text.Head(line, limit)
		}
	}
	return ""
}

// Tokens are the words of a template, lower-cased, its masks among them,
// as a set: what near-identical templates are compared by.
func Tokens(template string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(template), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '<' || r == '>' || r == '_')
	}) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// reMask finds the masks in a template.
var reMask = text.Regexp(`<(?:uuid|time|date|ip|url|path|pod|rs|hex|id|text|num)>`)

// TemplateRegexp is an RE2 regular expression that matches the texts a
// template was made from: its masks become what they stand for, spaces
// any whitespace, and everything else is matched literally.
func TemplateRegexp(template string) string {
	var b strings.Builder
	literal := func(s string) {
		for i, part := range strings.Split(s, " ") {
			if i > 0 {
				b.WriteString(`\s+`)
			}
			b.WriteString(regexp.QuoteMeta(part))
		}
	}
	at := 0
	for _, loc := range reMask().FindAllStringIndex(template, -1) {
		literal(template[at:loc[0]])
		b.WriteString(maskPatterns[template[loc[0]:loc[1]]])
		at = loc[1]
	}
	literal(template[at:])
	return b.String()
}
