package detect

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/text"
)

func TestUnsupportedEvidence(t *testing.T) {
	answer := func(evidence string) string {
		return `call shell {"command":["bash","-lc","cat > agent_output.json <<'EOF'\n{\"entities\": [{\"name\": \"otel-demo/ConfigMap/flagd-config\", \"contributing_factor\": true, \"reasoning\": \"r\", \"evidence\": \"` + evidence + `\"}], \"propagations\": [], \"alerts_explained\": []}\nEOF"]} => `
	}
	const spec = `call mcp__srv__k8s_spec_change_analysis {"file":"/data/snap/7/objects.tsv"} => flagd-config changed at 2026-01-20 14:02:11; error ratio 0.096; log: GetAds failed: flag adFailure is on`
	runCases(t, UnsupportedEvidence, []detCase{
		{name: "everything cited was seen", trace: build(zeroTask, `user go`, spec, answer(`Changed at 14:02:11; errors 9.6% ('GetAds failed: flag adFailure is on').`))},
		{name: "a quoted log line no tool printed", trace: build(zeroTask, `user go`, spec, answer(`Logs say 'flagd rejected the update request'.`)),
			want: [][]int{{3}}, quote: "flagd rejected the update request", conf: 0.65},
		{name: "two values no tool printed", trace: build(zeroTask, `user go`, spec, answer(`Changed at 14:07:45 with ratio 0.731.`)),
			want: [][]int{{3}}, quote: "14:07:45", conf: 0.75},
		{name: "one stray value is tolerated", trace: build(zeroTask, `user go`, spec, answer(`Changed at 14:07:45.`))},
		{name: "hedged values are not checked", trace: build(zeroTask, `user go`, spec, answer(`Changed around 14:07:45 with ratio about 0.731.`))},
		{name: "a cause no tool ever named", trace: build(zeroTask, `user go`, `call mcp__srv__alerts {} => frontend errors`, answer(`Alerts.`)),
			want: [][]int{{3}}, quote: "otel-demo/ConfigMap/flagd-config", conf: 0.75},
		{name: "printed in the final message instead of written", trace: build(zeroTask, `user go`, spec,
			`final Root cause found.\n{"entities": [{"name": "otel-demo/ConfigMap/flagd-config", "contributing_factor": true, "evidence": "Seen 'a line nobody ever printed' at 14:02:11"}]}`),
			want: [][]int{{3}}, quote: "a line nobody ever printed"},
		{name: "a quotation in the final message's prose", trace: build(zeroTask, `user go`, spec, answer(`Changed at 14:02:11.`),
			`final Root cause: flagd-config. The ad logs say 'flagd rejected the update request', and the frontend's calls fail.`),
			want: [][]int{{3, 5}}, quote: "flagd rejected the update request", conf: 0.65},
		{name: "apostrophes are not quotation marks", trace: build(zeroTask, `user go`, spec, answer(`Changed at 14:02:11.`),
			`final The container's memory limit fell to 20Mi, below what the frontend's calls need.`)},
		{name: "the diagnosis pasted into the final message is data, not a quotation", trace: build(zeroTask, `user go`, spec, answer(`Changed at 14:02:11.`),
			"final Done.\n```json\n{\"entities\": [{\"reasoning\": \"an unquoted sentence of several words\"}]}\n```")},
		{name: "no diagnosis, nothing to check", trace: build(`user go`, `final The answer is 0.731 at 14:07:45.`)},
	})
}

// quoted is what quotations finds, as the expression it once ran.
var quoted = text.Regexp(`(?:^|[\s(\[:])(?:"([^"\n]{15,200})"|'([^'\n]{15,200})'|“([^”\n]{15,200})”)(?:[\s.,;:)\]!?]|$)`)

// The cheap checks stand in for the expressions they guard: on texts built
// from the characters the expressions care about, each says no only where
// its expression finds nothing, and hedgedBefore answers as hedge does on
// the whole text.
func TestUnsupportedEvidenceShortcuts(t *testing.T) {
	pieces := []string{"1", "23", ".", ":", "%", " ", "\t", "\n", "a", "ab", "\"", "'", "“", "”", "(", "over", "About", "~",
		"approximately", "ſ", "é", "≈", "the quick brown fox jumps", "12:30:45", "3.14", "x"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		if !digitsAround(s, ':') && clockTime().MatchString(s) {
			t.Errorf("digitsAround(%q, ':') = false, but clockTime matches", s)
		}
		if !digitsAround(s, '.') && decimal().MatchString(s) {
			t.Errorf("digitsAround(%q, '.') = false, but decimal matches", s)
		}
		var want []string
		for _, m := range quoted().FindAllStringSubmatch(s, -1) {
			want = append(want, m[1]+m[2]+m[3])
		}
		if got := quotations(s); !slices.Equal(got, want) {
			t.Errorf("quotations(%q) = %q, want %q", s, got, want)
		}
		if got, want := hedgedBefore(s), hedge().MatchString(s); got != want {
			t.Errorf("hedgedBefore(%q) = %v, hedge says %v", s, got, want)
		}
	}
}
