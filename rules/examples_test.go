package rules

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/trace"
)

const examples = "../examples/rules"

func TestExamplesLoad(t *testing.T) {
	n := 0
	err := filepath.WalkDir(examples, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		s, err := Load(path)
		if err != nil {
			t.Errorf("%v", err)
			return nil
		}
		if len(s.Rules) == 0 {
			t.Errorf("%s: no rules", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no example rule files")
	}
}

func itbenchRules(tb testing.TB) *Set {
	tb.Helper()
	s, err := Load(filepath.Join(examples, "itbench.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestExamplesOnRealRollouts pins what the ITBench example rules find on the
// Codex rollouts of the shared data. Each finding was read against its
// trace.
func TestExamplesOnRealRollouts(t *testing.T) {
	dir := shared.Path(t, "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1")
	traces, _, err := ingest.ReadAll(context.Background(), []string{dir}, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := itbenchRules(t)
	var got []string
	tools := map[string]int{}
	for _, tr := range traces {
		for i := range tr.Steps {
			tools[tr.Steps[i].Tool]++
		}
		fs, errs := detect.Run(tr, s.Detectors())
		for _, err := range errs {
			t.Errorf("rejected: %v", err)
		}
		for _, f := range fs {
			got = append(got, fmt.Sprintf("%s %s %v", tr.ID[:13], f.Detector, f.Steps))
		}
	}
	sort.Strings(got)
	want := []string{
		// jq over the snapshot's alerts, run again six steps later.
		"019bc2a7-59dc identical-query [14 20]",
		// apply_patch of agent_output.json cut off mid-string four times;
		// the first failure is followed only by more failures.
		"019bc2a7-59dc errors-without-recovery [42]",
		"019bc2a7-59dc truncated-arguments [42 45 47 49]",
		// cat <<EOF > file passed as argv[0] or as cat's argument.
		"019bc313-2cee script-as-program [74 78 124]",
		"019bc313-2cee long-run [100]",
		"019bc31f-c491 script-as-program [99]",
		"019bc31f-c491 long-run [100]",
		"019bc33a-521f script-as-program [10]",
	}
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// kubectl-repeated names no tool; the others name tools the runs call.
	if errs := s.Lint(tools); len(errs) != 0 {
		t.Errorf("Lint: %v", errs)
	}
}

// TestExampleRulesWithoutRealMatches shows the example rules that find
// nothing in the offline rollouts firing on what they are for.
func TestExampleRulesWithoutRealMatches(t *testing.T) {
	s := itbenchRules(t)
	only := func(name string) *Set {
		for _, r := range s.Rules {
			if r.Name == name {
				return &Set{Path: s.Path, Rules: []*Rule{r}}
			}
		}
		t.Fatalf("no rule %s", name)
		return nil
	}
	shell := func(cmd string) trace.Step {
		return call("shell", fmt.Sprintf(`{"command":["bash","-lc",%q],"workdir":"/Users/x/agent_outputs/2/1"}`, cmd))
	}
	out := "/home/u/ITBench-SRE-Agent/agent_outputs/2/1"
	writes := build(
		call("shell", `{"command":["bash","-c","jq . alerts.json > /home/u/ITBench-Lite/snapshots/sre/Scenario-2/alerts.json"]}`), // 0: over its input
		call("shell", `{"command":["bash","-c","echo ok | tee -a /etc/motd"]}`),                                                   // 1
		call("shell", `{"command":["cp","report.json","/Users/u/Desktop/"]}`),                                                     // 2
		call("shell", `{"command":["bash","-c","jq . x.json > `+out+`/agent_output.json"]}`),                                      // 3: inside
		call("shell", `{"command":["bash","-c","grep -c err logs.tsv 2>/dev/null > /tmp/n"]}`),                                    // 4: /tmp
		call("shell", `{"command":["cat","/Users/u/data.json"]}`),                                                                 // 5: a read
	)
	fs := run(t, only("write-outside-output"), writes)
	if len(fs) != 1 || !slices.Equal(fs[0].Steps, []int{0, 1, 2}) {
		t.Errorf("write-outside-output: %+v", fs)
	}
	kubectl := build(
		shell("kubectl get pods -n otel-demo"),
		result("shell", "cart-1 Running", 0),
		shell("kubectl get pods -n otel-demo"),
		result("shell", "cart-1 Running", 0),
		shell("kubectl describe pod cart-1 -n otel-demo"),
		result("shell", "...", 0),
		shell("kubectl  get pods -n otel-demo"),
		result("shell", "cart-1 Running", 0),
	)
	fs = run(t, only("kubectl-repeated"), kubectl)
	if len(fs) != 1 || !slices.Equal(fs[0].Steps, []int{0, 2, 6}) {
		t.Errorf("kubectl-repeated: %+v", fs)
	}
}
