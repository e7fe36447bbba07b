package synth

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

func generate(t *testing.T, o Options) *Corpus {
	t.Helper()
	c, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ingestCorpus writes c into a temporary directory and ingests it as
// faultline ingests any directory; it returns the directory, the manifest
// and the traces by id.
func ingestCorpus(t *testing.T, c *Corpus) (string, *Manifest, map[string]*trace.Trace) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "corpus")
	m, err := c.Write(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := readCorpus(context.Background(), dir, func(i ingest.Issue) { t.Errorf("ingest: %s", i) })
	if err != nil {
		t.Fatal(err)
	}
	return dir, m, traces
}

func TestGenerateIsReproducible(t *testing.T) {
	o := Options{Seed: 7, Traces: 30}
	a, am := generate(t, o).Files()
	b, _ := generate(t, o).Files()
	if !maps.EqualFunc(a, b, bytes.Equal) {
		t.Error("two corpora of the same options differ")
	}
	ex1, _ := Examples().Files()
	ex2, _ := Examples().Files()
	if !maps.EqualFunc(ex1, ex2, bytes.Equal) {
		t.Error("the examples differ between two runs")
	}
	// A trace depends on its seed and position only: more traces add runs
	// and leave the earlier ones alone.
	longer, _ := generate(t, Options{Seed: 7, Traces: 33}).Files()
	for _, tr := range am.Traces {
		if !bytes.Equal(a[tr.Path], longer[tr.Path]) {
			t.Errorf("%s changes when traces are added after it", tr.Path)
		}
	}
	_, other := generate(t, Options{Seed: 8, Traces: 30}).Files()
	for _, tr := range other.Traces {
		if _, clash := a[tr.Path]; clash {
			t.Errorf("seeds 7 and 8 both write %s: ids must differ between seeds", tr.Path)
		}
	}
}

// TestManifestMatchesIngest checks the planted locations against the
// steps faultline makes of every rollout: the count, and that each planted
// step is something the agent or the harness did, never a tool's output.
func TestManifestMatchesIngest(t *testing.T) {
	for name, c := range map[string]*Corpus{"seeded": generate(t, Options{Seed: 1, Traces: DefaultTraces}), "examples": Examples()} {
		_, m, traces := ingestCorpus(t, c)
		if len(traces) != len(m.Traces) {
			t.Errorf("%s: ingested %d traces, the manifest lists %d", name, len(traces), len(m.Traces))
		}
		for _, mt := range m.Traces {
			tr := traces[mt.ID]
			if tr == nil {
				t.Errorf("%s: %s not ingested", name, mt.Path)
				continue
			}
			if len(tr.Steps) != mt.Steps {
				t.Errorf("%s: %s has %d steps, the manifest says %d", name, mt.Path, len(tr.Steps), mt.Steps)
				continue
			}
			if mt.Control != (len(mt.Planted) == 0) {
				t.Errorf("%s: %s: control %v with %d modes planted", name, mt.Path, mt.Control, len(mt.Planted))
			}
			for _, p := range mt.Planted {
				if len(p.Steps) == 0 || !slices.IsSorted(p.Steps) || p.How == "" || p.Variant == "" {
					t.Errorf("%s: %s: incomplete plant %+v", name, mt.Path, p)
				}
				for _, i := range p.Steps {
					if s := tr.Step(i); s == nil || s.Kind == trace.KindToolResult {
						t.Errorf("%s: %s: %s planted at step %d, which is %v", name, mt.Path, p.Mode, i, s)
					}
				}
			}
		}
	}
}

// TestPlantedStepsShowTheMode spot-checks that the located steps are what
// each variant says: the same call twice, harness retries, the file check.
func TestPlantedStepsShowTheMode(t *testing.T) {
	c := generate(t, Options{Seed: 3, Traces: DefaultTraces})
	_, m, traces := ingestCorpus(t, c)
	checked := map[string]bool{}
	for _, mt := range m.Traces {
		tr := traces[mt.ID]
		for _, p := range mt.Planted {
			steps := make([]*trace.Step, len(p.Steps))
			for i, n := range p.Steps {
				steps[i] = tr.Step(n)
			}
			ok := true
			switch p.Variant {
			case "identical-call":
				ok = len(steps) == 2 && steps[0].Args == steps[1].Args && tr.Result(p.Steps[0]).Text == tr.Result(p.Steps[1]).Text
			case "harness-retries":
				ok = steps[0].Type == trace.TypeRetryNudge && len(steps) >= 2
			case "read-ground-truth":
				ok = strings.Contains(steps[0].Args, "ground_truth.yaml")
			case "aborted":
				ok = steps[0].Kind == trace.KindError && p.Steps[0] == len(tr.Steps)-1
			case "no-validation":
				ok = !strings.Contains(stepsText(tr), "jq -e")
			case "failed-check-claimed":
				ok = *tr.Result(p.Steps[0]).ExitCode == 1 && steps[1].Kind == trace.KindFinal
			case "empty-turn", "silent-model":
				ok = steps[0].Type == trace.TypeRetryNudge || p.Steps[0] == len(tr.Steps)-1
			default:
				continue
			}
			checked[p.Variant] = true
			if !ok {
				t.Errorf("%s: %s/%s is not at steps %v", mt.Path, p.Mode, p.Variant, p.Steps)
			}
		}
	}
	if len(checked) != 8 {
		t.Errorf("checked %d variants, want 8: %v", len(checked), checked)
	}
}

func stepsText(tr *trace.Trace) string {
	var b strings.Builder
	for _, s := range tr.Steps {
		b.WriteString(s.Args + "\n" + s.Text + "\n")
	}
	return b.String()
}

var quoted = regexp.MustCompile(`'([^']+)'`)

// TestEvidenceComesFromTools keeps the clean runs clean: every fragment a
// diagnosis quotes as evidence is in a tool output of its run, except the
// text planted as invented evidence, which is in none.
func TestEvidenceComesFromTools(t *testing.T) {
	c := generate(t, Options{Seed: 1, Traces: DefaultTraces})
	_, m, traces := ingestCorpus(t, c)
	for _, mt := range m.Traces {
		tr := traces[mt.ID]
		if tr.Diagnosis == nil {
			continue
		}
		var d diagnosis
		if json.Unmarshal([]byte(tr.Diagnosis.Body), &d) != nil {
			continue // planted invalid JSON
		}
		var outputs strings.Builder
		for _, s := range tr.Steps {
			if s.Kind == trace.KindToolResult {
				outputs.WriteString(s.Text + "\n")
			}
		}
		invented := scenarioOf(t, mt.Scenario).invented
		planted := slices.ContainsFunc(mt.Planted, func(p Planted) bool { return p.Variant == "invented-evidence" })
		for _, e := range d.Entities {
			for _, q := range quoted.FindAllStringSubmatch(e.Evidence, -1) {
				in := strings.Contains(outputs.String(), q[1])
				switch {
				case q[1] == invented && (in || !planted):
					t.Errorf("%s: invented evidence %q (in outputs %v, planted %v)", mt.Path, q[1], in, planted)
				case q[1] != invented && !in:
					t.Errorf("%s: evidence %q is in no tool output", mt.Path, q[1])
				}
			}
		}
	}
}

func scenarioOf(t *testing.T, id string) *scenario {
	for _, sc := range scenarios() {
		if sc.id == id {
			return sc
		}
	}
	t.Fatalf("no scenario %s", id)
	return nil
}

// TestScenarioFacts checks the knowledge the generator builds diagnoses
// from: each fact is verbatim in its call's output, and the invented log
// text is in no output of its scenario.
func TestScenarioFacts(t *testing.T) {
	for _, sc := range scenarios() {
		for _, l := range sc.leads {
			c, ok := sc.calls[l.key]
			if !ok {
				t.Errorf("%s: lead %s has no call", sc.id, l.key)
				continue
			}
			for _, f := range l.facts {
				if !strings.Contains(decodedOutput(t, c), f.quote) {
					t.Errorf("%s: fact %q is not in the output of %s", sc.id, f.quote, l.key)
				}
			}
		}
		for key, c := range sc.calls {
			if strings.Contains(decodedOutput(t, c), sc.invented) {
				t.Errorf("%s: the invented evidence is in the output of %s", sc.id, key)
			}
		}
	}
}

// decodedOutput is a call's output as faultline shows it: the shell output
// or the MCP text, not the JSON the CLI logs it in.
func decodedOutput(t *testing.T, c call) string {
	var sh struct{ Output string }
	if json.Unmarshal([]byte(c.out), &sh) == nil && sh.Output != "" {
		return sh.Output
	}
	var parts []struct{ Text string }
	if json.Unmarshal([]byte(c.out), &parts) == nil && len(parts) > 0 {
		return parts[0].Text
	}
	return c.out
}

func TestOptionErrors(t *testing.T) {
	tests := []struct {
		o    Options
		want string
	}{
		{Options{Traces: 10, Modes: []string{"FM-9.9"}}, `unknown mode "FM-9.9"; synth plants FM-1.1, FM-1.3`},
		{Options{Traces: 10, Modes: []string{"FM-2.4"}}, "synth cannot plant FM-2.4 (Information withholding)"},
		{Options{Traces: 10, Modes: []string{"FM-1.3", "FM-1.3"}}, "mode FM-1.3 is asked for twice"},
		{Options{Traces: 10, Modes: []string{}}, "no mode to plant"},
		{Options{Traces: 0}, "the number of traces must be positive"},
		{Options{Traces: 12}, "12 traces leave 8 to plant in (the rest are controls), fewer than the 10 modes asked for: ask for 15 traces or more"},
	}
	for _, tt := range tests {
		if _, err := Generate(tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want %q", tt.o, err, tt.want)
		}
	}
	if _, err := Generate(Options{Traces: 15}); err != nil {
		t.Errorf("15 traces should plant every mode once: %v", err)
	}
}

func TestParseModes(t *testing.T) {
	got, err := ParseModes([]string{"fm-1.3", "1.5", "sys-1", "FM-3.1"})
	if want := []string{"FM-1.3", "FM-1.5", "SYS-1", "FM-3.1"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("got %v %v, want %v", got, err, want)
	}
	if _, err := ParseModes([]string{"sys-2"}); err == nil || !strings.Contains(err.Error(), "synth cannot plant SYS-2 (") {
		t.Errorf("SYS-2: %v", err)
	}
}

func TestWriteRefusesOtherDirectories(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	if _, err := Examples().Write(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("wrote into a directory of someone else's files: %v", err)
	}
	// A corpus written earlier is replaced, stale runs included.
	corpus := filepath.Join(t.TempDir(), "c")
	if _, err := generate(t, Options{Seed: 1, Traces: 30}).Write(context.Background(), corpus); err != nil {
		t.Fatal(err)
	}
	if _, err := Examples().Write(context.Background(), corpus); err != nil {
		t.Fatal(err)
	}
	want, _ := Examples().Files()
	if got := readTree(t, corpus); !maps.EqualFunc(got, want, bytes.Equal) {
		t.Errorf("rewritten corpus has %d files, want the %d of the examples", len(got), len(want))
	}
}

// TestRolloutLines checks that every rollout line is one event of the Codex
// rollout format, and that each file opens with its session_meta.
func TestRolloutLines(t *testing.T) {
	for _, c := range []*Corpus{Examples(), generate(t, Options{Seed: 1, Traces: DefaultTraces})} {
		files, m := c.Files()
		for _, mt := range m.Traces {
			sc := bufio.NewScanner(bytes.NewReader(files[mt.Path]))
			sc.Buffer(nil, 1<<20)
			for n := 1; sc.Scan(); n++ {
				var ev struct {
					Timestamp string          `json:"timestamp"`
					Type      string          `json:"type"`
					Payload   json.RawMessage `json:"payload"`
				}
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Fatalf("%s:%d: %v", mt.Path, n, err)
				}
				if _, err := time.Parse(time.RFC3339Nano, ev.Timestamp); err != nil {
					t.Errorf("%s:%d: timestamp: %v", mt.Path, n, err)
				}
				if ev.Type == "" || !bytes.HasPrefix(ev.Payload, []byte("{")) {
					t.Errorf("%s:%d: want a type and an object payload, got %q and %.20s", mt.Path, n, ev.Type, ev.Payload)
				}
				if (n == 1) != (ev.Type == "session_meta") {
					t.Errorf("%s:%d: session_meta must be the first line and only the first", mt.Path, n)
				}
			}
			if err := sc.Err(); err != nil {
				t.Fatalf("%s: %v", mt.Path, err)
			}
		}
	}
}
