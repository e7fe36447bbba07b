package detect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/trace"
)

// The tests here pin what the detectors find on real and example traces.
// Every pinned finding was read against its trace and judged; a change to
// these lists is a change of behaviour to review finding by finding, not a
// number to update.

const zeroRun = "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1"

// ingestAll reads paths as faultline ingest does (run directories attach
// their diagnosis files) and returns the traces by id.
func ingestAll(tb testing.TB, paths ...string) []*trace.Trace {
	tb.Helper()
	traces, _, err := ingest.ReadAll(context.Background(), paths, ingest.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Slice(traces, func(i, j int) bool { return traces[i].ID < traces[j].ID })
	return traces
}

// summarise runs the detectors ds on t and lists their findings as
// "detector steps", failing on any rejected finding.
func summarise(tb testing.TB, ds []*Detector, t *trace.Trace) []string {
	tb.Helper()
	fs, errs := Run(t, ds)
	for _, err := range errs {
		tb.Errorf("%v", err)
	}
	out := []string{}
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %v", f.Detector, f.Steps))
	}
	sort.Strings(out)
	return out
}

func checkPinned(t *testing.T, ds []*Detector, traces []*trace.Trace, key func(*trace.Trace) string, want map[string][]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, tr := range traces {
		k := key(tr)
		seen[k] = true
		got := summarise(t, ds, tr)
		w := append([]string{}, want[k]...)
		sort.Strings(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s (%s): findings\n  %s\nwant\n  %s", k, tr.Model, strings.Join(got, "\n  "), strings.Join(w, "\n  "))
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("no trace %s", k)
		}
	}
}

// TestRealRollouts pins the findings on the 25 non-empty real rollouts of
// ITBench's Zero agent on Scenario 2. Judgements, in short:
//   - 15 gpt-oss runs, one mistral and two gpt-5.1-codex-max remediation runs
//     never produced a step: SYS-1 and nothing else.
//   - 019bc2a7 (gpt-oss, the one gpt-oss run that worked): the alert count
//     query run twice with the same output (FM-1.3); three times the model
//     answered a tool result with nothing and the harness re-prompted it,
//     and its last turn came back empty too (SYS-1: the model's silence, not
//     the agent ignoring a stop condition); and a final patch to
//     agent_output.json at step 54 that was never validated with jq as the
//     prompt requires (FM-3.2).
//   - 019bc313 (gemini): get_k8_spec of flagd-config re-read (FM-1.3, benign);
//     four calls fighting the sandbox to write its own analysis script, which
//     the prompt asks for (FM-2.3, debatable), and five spent finding a
//     working python after pandas failed (FM-2.3); having seen at steps 77
//     and 89 that a whole command passed as one argv entry fails in the
//     sandbox, and got past it, it goes back to that form at 117, 127 and 129
//     (FM-1.4); its cause "unknown/Cluster/api-server" is named in no tool
//     output (FM-3.3); it closes with a prose summary where the prompt
//     allows nothing but the final JSON (FM-1.1).
//   - 019bc31f (gemini) ends on its own without writing agent_output.json
//     (FM-3.1), with its diagnosis in a prose-and-JSON closing message
//     (FM-1.1); 019bc339 (gemini) stops mid-investigation because the model's
//     next turn came back empty (SYS-1, not FM-3.1); two mistral runs
//     announce a plan and stop (FM-3.1 twice each).
//   - 019bc33a (gemini remediation) is clean: written, jq failed, fixed,
//     validated.
func TestRealRollouts(t *testing.T) {
	traces := ingestAll(t, shared.Path(t, zeroRun))
	sys := func(steps string) []string { return []string{"empty-model-response " + steps} }
	noAnswer := func(last int) []string {
		return []string{fmt.Sprintf("missing-answer [0 %d]", last), fmt.Sprintf("early-answer [%d]", last)}
	}
	want := map[string][]string{
		"019bc26a": sys("[2 3 4 5 6 7]"), "019bc26b": sys("[2 3 4 5 6 7]"), "019bc26c": sys("[2 3 4 5 6 7]"),
		"019bc26d": sys("[2 3 4 5 6 7]"), "019bc26e-85ab": sys("[2 3 4 5 6 7]"), "019bc26e-e1d3": sys("[2 3 4 5 6]"),
		"019bc26f": sys("[2 3 4 5 6 7]"), "019bc288": sys("[2 3 4 5 6 7]"), "019bc289": sys("[2 3 4 5 6 7]"),
		"019bc28a": sys("[2 3 4 5 6 7]"), "019bc29d": sys("[2 3 4 5 6 7]"), "019bc2a1": sys("[2 3 4 5 6 7]"),
		"019bc2a2-317b": sys("[2 3 4 5 6 7]"), "019bc2a2-c524": sys("[2 3 4 5 6 7]"), "019bc2a3": sys("[2 3 4 5 6 7]"),
		"019bc2b3": sys("[2]"), "019bc310": sys("[2]"), "019bc332": sys("[2]"),
		"019bc2a7": {"repeated-tool-call [14 20]", "empty-model-response [5 34 43 56]", "skipped-validation [0 54]"},
		"019bc313": {"repeated-tool-call [63 105]", "tooling-detour [73 75 77 79 74]", "tooling-detour [87 89 91 93 95 88]",
			"repeated-known-error [77 89 117 127 129 118]", "unsupported-evidence [133 134]", "prose-final [0 137]"},
		"019bc31f": {"missing-answer [0 100]", "prose-final [0 100]"},
		"019bc339": sys("[27]"),
		"019bc2b1": noAnswer(3),
		"019bc2b4": noAnswer(3),
		"019bc33a": nil,
	}
	checkPinned(t, All, traces, func(tr *trace.Trace) string { return longestPrefix(want, tr.ID) }, want)
}

// longestPrefix returns the longest key of want that prefixes id, or id.
func longestPrefix(want map[string][]string, id string) string {
	best := id
	for k := range want {
		if strings.HasPrefix(id, k) && (best == id || len(k) > len(best)) {
			best = k
		}
	}
	return best
}

// TestExampleCohort pins the findings on the simulated cohort under
// examples/ (its README lists what is planted where): FM-1.3 in four runs, and
// sim-gamma 101/1's harness retries after the agent stopped by speaking
// (FM-1.5), its empty turns, the last of which ends the run (SYS-1), and its
// missing answer (FM-3.1), and sim-gamma 101/2's skipped jq check (FM-3.2).
// Nothing else fires, in the controls or elsewhere.
func TestExampleCohort(t *testing.T) {
	dir := filepath.Join("..", "examples", "itbench-zero")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("example cohort not found: %v", err)
	}
	traces := ingestAll(t, dir)
	want := map[string][]string{
		"sim-alpha/101/1": nil,
		"sim-alpha/101/2": nil,
		"sim-alpha/102/1": nil,
		"sim-alpha/102/2": {"repeated-tool-call [9 15]"},
		"sim-beta/101/1":  {"repeated-tool-call [11 16 22]"},
		"sim-beta/101/2":  {"repeated-tool-call [12 18]"},
		"sim-beta/102/1":  nil,
		"sim-beta/102/2":  {"repeated-tool-call [9 12]"},
		"sim-gamma/101/1": {"missing-answer [0 10]", "harness-retry-loop [6 8 11]", "empty-model-response [9 12 13]"},
		"sim-gamma/101/2": {"skipped-validation [0 11]"},
		"sim-gamma/102/1": nil,
		"sim-gamma/102/2": nil,
	}
	checkPinned(t, All, traces, func(tr *trace.Trace) string {
		return tr.Model + "/" + tr.Scenario + "/" + tr.Trial
	}, want)
}

// TestMADTraces runs the detectors over the 19 human-labelled MAD traces of
// seven other frameworks. Most detectors need things these traces do not
// have (a required output file, paired tool calls, a plan tool), and the rest
// must not misfire on framework artefacts: ChatDev's phase prompts repeated
// in role-play, HyperAgent's log printing each message two or three times,
// AppWorld's deliberate "skip to the next song" loop, OpenManus's step cap
// buried in a run summary, HyperAgent's harness re-initialising the run and
// replaying it (HyperAgent 10 repeats a navigator's conclusion only across
// such a restart; one of its three annotators marked FM-1.3, the consensus
// does not). Nothing fires.
func TestMADTraces(t *testing.T) {
	traces := ingestAll(t, shared.Path(t, "mast/MAD_human_labelled_dataset.json"))
	want := map[string][]string{}
	for _, tr := range traces {
		if _, ok := want[tr.ID]; !ok {
			want[tr.ID] = nil
		}
	}
	checkPinned(t, All, traces, func(tr *trace.Trace) string { return tr.ID }, want)
}

// BenchmarkDetectors measures the detectors over the real rollouts, in bytes
// of rollout per second, to compare with BenchmarkDecode: the detectors
// should cost less than a fifth of ingest.
func BenchmarkDetectors(b *testing.B) {
	dir := shared.Path(b, zeroRun)
	traces := ingestAll(b, dir)
	b.SetBytes(rolloutBytes(b, dir))
	b.ResetTimer()
	for b.Loop() {
		for _, t := range traces {
			Run(t, All)
		}
	}
}

// BenchmarkDecode measures ingest's decoding of the same rollouts.
func BenchmarkDecode(b *testing.B) {
	dir := shared.Path(b, zeroRun)
	b.SetBytes(rolloutBytes(b, dir))
	for b.Loop() {
		ingestAll(b, dir)
	}
}

func rolloutBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			info, err := e.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}
