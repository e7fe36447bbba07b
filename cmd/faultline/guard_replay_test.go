package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
)

// TestGuardReplayRealRollouts replays the real Zero rollouts through the
// built-in policy and holds its decisions to what a reader of the runs sees.
func TestGuardReplayRealRollouts(t *testing.T) {
	runs := shared.Path(t, "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1")
	gt := shared.Path(t, "itbench/ITBench-Evaluations@5bd11e7/data/ground_truths.json")
	c := newCLI(t)
	out, errOut, code := c.run("", "guard", "replay", "--json", "--decisions", runs, gt)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res guardReplayJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Runs != 25 || res.Failed == 0 || res.Succeeded == 0 {
		t.Errorf("runs %d, failed %d, succeeded %d", res.Runs, res.Failed, res.Succeeded)
	}
	byRule := map[string][]string{}
	for _, d := range res.Decisions {
		byRule[d.Rule] = append(byRule[d.Rule], d.Session[:8])
		if d.Action.String() != "observe" {
			t.Errorf("the built-in policy acted: %+v", d)
		}
	}
	// 019bc2a7 (gpt-oss) patched agent_output.json at step 54 after its
	// last check (jq at 52); its next turn came back empty (step 56),
	// which ends the run: the verification gate stops it there.
	// 019bc2b1 (mistral) spoke after 3 steps without writing the file.
	for rule, want := range map[string]string{"verification-gate": "019bc2a7", "answer-gate": "019bc2b1"} {
		if !strings.Contains(strings.Join(byRule[rule], " "), want) {
			t.Errorf("%s fired on %v, not on %s", rule, byRule[rule], want)
		}
	}
	for _, d := range res.Decisions {
		if d.Rule == "verification-gate" && d.Session[:8] == "019bc2a7" && (d.Step != 56 || d.Detector != "skipped-validation" || !d.Finishing) {
			t.Errorf("verification gate on 019bc2a7: %+v", d)
		}
	}

	// The example policy stops a run at the model's second empty answer in
	// a row: the gpt-oss runs whose endpoint never answered were prompted
	// six times (a user's prompt, five nudges); stopped after the second,
	// they save four steps each. No successful run is stopped.
	out, errOut, code = c.run("", "guard", "replay", "--json", "--policy", filepath.Join("..", "..", "examples", "guard.yaml"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	res = guardReplayJSON{}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Rules, func(r guardRuleJSON) bool { return r.Rule == "silent-model" })
	if i < 0 {
		t.Fatalf("no silent-model rule in %s", out)
	}
	if r := res.Rules[i]; r.Failed < 15 || r.Succeeded != 0 || r.StepsAfter < 5*r.Failed/2 {
		t.Errorf("silent-model: %+v", r.RuleTally)
	}
}

func TestGuardReplayPolicyErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "guard.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n  - name: loops\n    detectors: [repeated-tool-cal]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	_, errOut, code := c.run("", "guard", "replay", "--policy", bad, examples)
	if code == exitOK || !strings.Contains(errOut, bad+`:3: rule loops: no detector "repeated-tool-cal"`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
	// The shipped example policy replays the bundled examples.
	out, errOut, code := c.run("", "guard", "replay", "--policy", filepath.Join("..", "..", "examples", "guard.yaml"), examples)
	if code != exitOK || !strings.Contains(out, "policy itbench-sre") || !strings.Contains(out, "verification-gate") {
		t.Errorf("exit %d: %s\n%s", code, errOut, out)
	}
}

// A replay picks models as the other commands do, through the settings
// file's aliases, and says which filter left nothing to replay.
func TestGuardReplayModelFilter(t *testing.T) {
	settings := filepath.Join(t.TempDir(), "faultline.yaml")
	if err := os.WriteFile(settings, []byte("models:\n  sim-alpha: alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	out, errOut, code := c.run("", "--config", settings, "guard", "replay", "--json", "--model", "alpha", examples)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res guardReplayJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Runs != 4 {
		t.Errorf("replayed %d runs of alpha (sim-alpha), want 4", res.Runs)
	}
	if _, errOut, code := c.run("", "guard", "replay", "--model", "nope"); code == exitOK || !strings.Contains(errOut, `"nope"`) {
		t.Errorf("a model no trace has: exit %d, %s", code, errOut)
	}
}
