package discover

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/faultline/faultline/rules"
	"github.com/faultline/faultline/trace"
)

// ErrNoRule is a pattern that cannot become a rule.
var ErrNoRule = errors.New("cannot make a rule")

// RuleFor turns a pattern into a rule that finds it: an error pattern
// becomes a match on the tool's results whose text the pattern's template
// matches (its masks as what they stand for, the rest literally); a
// finding pattern a match on steps of its kind whose text or arguments the
// template matches. mode is the rule's mode; "" takes the mode a model
// named (Naming), or a finding pattern's own. Endings and unlocated
// findings have no step text to match and make no rule.
func RuleFor(p *Pattern, mode string) (rules.Spec, error) {
	if mode == "" && p.Naming != nil && p.Naming.Status == Named && p.Naming.Code != NewCode {
		mode = p.Naming.Code
	}
	if mode == "" && p.Kind == KindFinding {
		mode = p.Key
	}
	sp := rules.Spec{Name: "pattern-" + strings.ToLower(p.ID), Mode: mode, Doc: ruleDoc(p)}
	switch p.Kind {
	case KindError:
		m := &rules.Matcher{Kind: rules.List{string(trace.KindToolResult)}, Text: TemplateRegexp(p.Template)}
		if p.Key != toolName("") {
			m.Tool = rules.List{p.Key}
		}
		sp.Match = m
	case KindFinding:
		kind, text, ok := strings.Cut(p.Template, ": ")
		if !ok || !trace.Kind(kind).Valid() {
			return sp, fmt.Errorf("%w of pattern %s: its finding cites no step with text", ErrNoRule, p.ID)
		}
		sp.Match = &rules.Matcher{Kind: rules.List{kind}, Any: TemplateRegexp(text)}
	default:
		return sp, fmt.Errorf("%w of pattern %s: an ending is the shape of a run's last calls, which no step's text shows; "+
			"only error and finding patterns become rules", ErrNoRule, p.ID)
	}
	if sp.Mode == "" {
		return sp, fmt.Errorf("%w of pattern %s: it has no mode of its own; name one (a MAST or SYS code, or one declared under codes), "+
			"or have a model name the pattern", ErrNoRule, p.ID)
	}
	for _, re := range []string{sp.Match.Text, sp.Match.Any} {
		if _, err := regexp.Compile(re); err != nil {
			return sp, fmt.Errorf("%w of pattern %s: %v", ErrNoRule, p.ID, err)
		}
	}
	return sp, nil
}

// ruleDoc says what the rule finds, its first sentence a summary, and
// where it came from.
func ruleDoc(p *Pattern) string {
	var b strings.Builder
	switch {
	case p.Naming != nil && p.Naming.Status == Named:
		fmt.Fprintf(&b, "%s: %s ", strings.TrimSuffix(p.Naming.Name, "."), p.Naming.Description)
	case p.Kind == KindError:
		fmt.Fprintf(&b, "%s fails with %q. ", p.Key, p.Template)
	default:
		fmt.Fprintf(&b, "%s found at a %s. ", p.Key, p.Template)
	}
	fmt.Fprintf(&b, "Pattern %s of faultline discover, in %d of %d failed and %d of %d successful runs when it was saved.",
		p.ID, p.Failed.K, p.Failed.N, p.Succeeded.K, p.Succeeded.N)
	return b.String()
}
