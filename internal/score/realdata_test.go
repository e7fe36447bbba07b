package score

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
)

func TestLoadRealGroundTruth(t *testing.T) {
	consolidated, problems, err := LoadPath(shared.Path(t, "itbench/ITBench-Evaluations@5bd11e7/data/ground_truths.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	// Three groups carry the filter "*.*", invalid in Python as in Go: one
	// problem says so.
	if len(problems) != 1 || !strings.Contains(problems[0], `filter "*.*" is not usable`) || !strings.Contains(problems[0], "left out of 3 groups") {
		t.Errorf("consolidated problems = %v", problems)
	}
	if len(consolidated) != 44 {
		t.Errorf("consolidated: %d incidents, want 44", len(consolidated))
	}
	scenarios := shared.Path(t, "itbench/ITBench@8949d5b/scenarios/sre/project/roles/scenarios/files")
	set, problems, err := LoadPath(scenarios, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 67 {
		t.Errorf("scenario files: %d incidents, want 67", len(set))
	}
	v1 := 0
	for id, gt := range set {
		if len(gt.RootClasses()) == 0 {
			t.Errorf("incident %s (%s) has no root cause", id, gt.Source)
		}
		if strings.HasSuffix(gt.Source, "groundtruth_v1.yaml") {
			v1++
		}
		if !strings.Contains(gt.Source, "scenario_"+id+string(filepath.Separator)) {
			t.Errorf("incident %s read from %s", id, gt.Source)
		}
	}
	if v1 != 61 {
		t.Errorf("%d incidents from v1 files, want all 61", v1)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], `filter "*.*" is not usable`) {
		t.Errorf("problems = %v", problems)
	}
}

// TestOlderAnswerSchema scores the four sample answers of ITBench-Evaluations,
// written in the older schema ("flagd-config ConfigMap", propagations by id).
func TestOlderAnswerSchema(t *testing.T) {
	set, _, err := LoadPath(shared.Path(t, "itbench/ITBench-Evaluations@5bd11e7/data/ground_truths.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, run := range []string{"1/1", "1/2", "2/1", "2/2"} {
		incident := strings.Split(run, "/")[0]
		path := shared.Path(t, "itbench/ITBench-Evaluations@5bd11e7/data/"+run+"/outputs/agent_output.json")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseDiagnosis(data, path)
		if err != nil {
			t.Fatal(err)
		}
		s := ScoreEntities(set[incident], d.Predictions(), d.Propagations, Options{})
		got = append(got, fmt.Sprintf("%s: %d predictions, P %.2f R %.2f, chain F1 %.2f", run, len(d.Predictions()), s.Precision, s.Recall, s.Chain.F1))
	}
	t.Log(strings.Join(got, "\n"))
	// Incident 1's root is the load generator, which neither answer blames;
	// incident 2's is flagd-config, which both do, among other entities.
	want := []string{
		"1/1: 9 predictions, P 0.00 R 0.00, chain F1 0.18",
		"1/2: 6 predictions, P 0.00 R 0.00, chain F1 0.32",
		"2/1: 8 predictions, P 0.17 R 1.00, chain F1 0.43",
		"2/2: 4 predictions, P 0.25 R 1.00, chain F1 0.43",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("scores changed:\n%s", strings.Join(got, "\n"))
	}
}
