package judge

import (
	"fmt"
	"strings"
	"time"
)

// Progress counts a run: traces done out of those to judge, failures,
// calls made and served from the cache, tokens and their cost so far.
type Progress struct {
	Total   int `json:"total"`   // traces to judge in this run
	Done    int `json:"done"`    // stored: judged (ok or failed), or skipped as SystemOnly
	Failed  int `json:"failed"`  // recorded as failed
	Skipped int `json:"skipped"` // already judged with this prompt
	// SystemOnly counts the traces recorded as skipped, without a call,
	// because their detector findings are system failures only.
	SystemOnly   int           `json:"system_only"`
	Calls        int           `json:"calls"`  // calls made to the endpoint
	CachedCalls  int           `json:"cached"` // answers served from the cache instead
	InputTokens  int           `json:"input_tokens"`
	OutputTokens int           `json:"output_tokens"`
	Cost         *float64      `json:"cost"` // dollars; nil when the model has no price
	Elapsed      time.Duration `json:"-"`
}

// ETA estimates the time left from the pace so far; false before the
// first trace is done.
func (p Progress) ETA() (time.Duration, bool) {
	if p.Done == 0 {
		return 0, false
	}
	per := p.Elapsed / time.Duration(p.Done)
	return per * time.Duration(max(p.Total-p.Done, 0)), true
}

// String is the progress line: "judge: 120/500 traces, 2 failed, 3 skipped
// (system failures only), ETA 1m20s, 240 calls (12 cached), 1,234,567 in +
// 80,123 out tokens, $3.41".
func (p Progress) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "judge: %d/%d traces", p.Done, p.Total)
	if p.Failed > 0 {
		fmt.Fprintf(&b, ", %d failed", p.Failed)
	}
	if p.Skipped > 0 {
		fmt.Fprintf(&b, ", %d already judged", p.Skipped)
	}
	if p.SystemOnly > 0 {
		fmt.Fprintf(&b, ", %d skipped (system failures only)", p.SystemOnly)
	}
	if p.Done < p.Total {
		if eta, ok := p.ETA(); ok {
			fmt.Fprintf(&b, ", ETA %s", eta.Round(time.Second))
		} else {
			b.WriteString(", ETA unknown")
		}
	}
	fmt.Fprintf(&b, ", %d calls", p.Calls)
	if p.CachedCalls > 0 {
		fmt.Fprintf(&b, " (+%d cached)", p.CachedCalls)
	}
	fmt.Fprintf(&b, ", %s in + %s out tokens, ", thousands(p.InputTokens), thousands(p.OutputTokens))
	if p.Cost == nil {
		b.WriteString("cost unknown (no price for this model)")
	} else {
		fmt.Fprintf(&b, "$%.2f", *p.Cost)
	}
	return b.String()
}
