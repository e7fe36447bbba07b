package labels

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// Human labels are findings of a source of their own (human:<name>), one
// per trace and mode, with the verdict present, absent or unsure: the
// labeller's note is the finding's explanation, the evidence its steps and
// quote.

// labellerName reports whether name may be a labeller's: 1 to 40
// letters, digits, dots, dashes or underscores, since it becomes part of a
// source name, an address and file names. (As a regular expression, the
// two Unicode classes cost a millisecond to compile at every start of the
// program.)
func labellerName(name string) bool {
	if name == "" || utf8.RuneCountInString(name) > 40 {
		return false
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) && !strings.ContainsRune("._-", r) {
			return false
		}
	}
	return true
}

// HumanSource is the annotation source of a labeller's labels, human:<name>.
func HumanSource(name string) (string, error) {
	if !labellerName(name) {
		return "", fmt.Errorf("labeller name %q: 1 to 40 letters, digits, dots, dashes or underscores", trace.Clip(name, 40))
	}
	return "human:" + name, nil
}

// Finding turns a label into the finding that stores it, as a finding of
// source.
func Finding(l ModeLabel, source string) trace.Finding {
	return trace.Finding{Mode: l.Mode, Source: source, Verdict: l.Verdict, Steps: l.Steps, Quote: l.Quote, Explanation: l.Note, Taxonomy: taxonomy.Version}
}
