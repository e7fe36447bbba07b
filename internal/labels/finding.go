package labels

import (
	"fmt"
	"regexp"

	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// Human labels are findings of a source of their own (human:<name>), one
// per trace and mode, with the verdict present, absent or unsure: the
// labeller's note is the finding's explanation, the evidence its steps and
// quote.

// labellerName is what a labeller's name may be: it becomes part of a
// source name, an address and file names.
var labellerName = regexp.MustCompile(`^[\p{L}\p{N}._-]{1,40}$`)

// HumanSource is the annotation source of a labeller's labels, human:<name>.
func HumanSource(name string) (string, error) {
	if !labellerName.MatchString(name) {
		return "", fmt.Errorf("labeller name %q: 1 to 40 letters, digits, dots, dashes or underscores", trace.Clip(name, 40))
	}
	return "human:" + name, nil
}

// Finding turns a label into the finding that stores it, as a finding of
// source.
func Finding(l ModeLabel, source string) trace.Finding {
	return trace.Finding{Mode: l.Mode, Source: source, Verdict: l.Verdict, Steps: l.Steps, Quote: l.Quote, Explanation: l.Note, Taxonomy: taxonomy.Version}
}
