package score

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
)

// officialTrial is one trial as ITBench's (LLM-based) scorer recorded it.
type officialTrial struct {
	File     string
	Incident string `json:"incident_id"`
	Trial    string `json:"trial_id"`
	Scores   struct {
		RootCauseEntity struct {
			GT          []string `json:"gt_entities"`
			Predictions []struct {
				Entity  string `json:"entity"`
				Matches bool   `json:"matches_gt"`
			} `json:"predicted_entities"`
			Precision float64 `json:"calculation_precision"`
			Recall    float64 `json:"calculation_recall"`
		} `json:"root_cause_entity"`
		K1 *officialPR `json:"root_cause_entity_k@1"`
		K2 *officialPR `json:"root_cause_entity_k@2"`
		K3 *officialPR `json:"root_cause_entity_k@3"`
		K4 *officialPR `json:"root_cause_entity_k@4"`
		K5 *officialPR `json:"root_cause_entity_k@5"`
	} `json:"scores"`
}

type officialPR struct {
	Precision float64 `json:"calculation_precision"`
	Recall    float64 `json:"calculation_recall"`
}

func officialTrials(t *testing.T) []officialTrial {
	var out []officialTrial
	read := func(path string, raw []officialTrial) {
		for _, r := range raw {
			r.File = filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
			out = append(out, r)
		}
	}
	evalPath := shared.Path(t, "itbench/ITBench-Evaluations@96fc778/evaluation_results.json")
	var eval struct {
		Raw []officialTrial `json:"raw_results"`
	}
	mustJSON(t, evalPath, &eval)
	read(evalPath, eval.Raw)
	boards, _ := filepath.Glob(filepath.Join(shared.Path(t, "itbench/ITBench-Agentbeats-Leaderboard-v2@b109a94/results"), "*.json"))
	for _, b := range boards {
		var board struct {
			Results []struct {
				Eval struct {
					Raw []officialTrial `json:"raw_results"`
				} `json:"evaluation_results"`
			} `json:"results"`
		}
		mustJSON(t, b, &board)
		for _, r := range board.Results {
			read(b, r.Eval.Raw)
		}
	}
	return out
}

func mustJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestAgainstOfficialScorer scores the predictions the official scorer saw
// with our matcher against the same ground truth and lists every
// disagreement, each with its reason (README: "Agreement with the official
// scorer").
func TestAgainstOfficialScorer(t *testing.T) {
	set, _, err := LoadPath(shared.Path(t, "itbench/ITBench-Evaluations@5bd11e7/data/ground_truths.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	checkedK := 0
	trials := officialTrials(t)
	if len(trials) != 10 {
		t.Fatalf("found %d official trials, want 10", len(trials))
	}
	for _, tr := range trials {
		gt := set[tr.Incident]
		rc := tr.Scores.RootCauseEntity
		var preds []string
		for _, p := range rc.Predictions {
			preds = append(preds, p.Entity)
		}
		s := ScoreEntities(gt, preds, nil, Options{})
		where := fmt.Sprintf("%s incident %s trial %s", tr.File, tr.Incident, tr.Trial)
		var roots []string
		for _, g := range gt.Groups {
			if g.RootCause {
				roots = append(roots, g.ID)
			}
		}
		if strings.Join(roots, ",") != strings.Join(rc.GT, ",") {
			got = append(got, fmt.Sprintf("%s: root groups differ: ours %v, official %v", where, roots, rc.GT))
		}
		for i, p := range s.Predictions {
			if p.Root != rc.Predictions[i].Matches {
				got = append(got, fmt.Sprintf("%s: %s: ours %v (group %q), official %v", where, p.Entity, p.Root, p.Group, rc.Predictions[i].Matches))
			}
		}
		if math.Abs(s.Precision-rc.Precision) > 1e-9 || math.Abs(s.Recall-rc.Recall) > 1e-9 {
			got = append(got, fmt.Sprintf("%s: P/R ours %.3f/%.3f, official %.3f/%.3f", where, s.Precision, s.Recall, rc.Precision, rc.Recall))
		}
		for k, off := range []*officialPR{tr.Scores.K1, tr.Scores.K2, tr.Scores.K3, tr.Scores.K4, tr.Scores.K5} {
			if off == nil {
				continue
			}
			checkedK++
			if ours := s.AtK[k]; math.Abs(ours.Precision-off.Precision) > 1e-9 || math.Abs(ours.Recall-off.Recall) > 1e-9 {
				got = append(got, fmt.Sprintf("%s: @%d P/R ours %.3f/%.3f, official %.3f/%.3f", where, k+1, ours.Precision, ours.Recall, off.Precision, off.Recall))
			}
		}
	}
	if checkedK < 30 {
		t.Errorf("only %d @k scores compared", checkedK)
	}
	sort.Strings(got)
	for _, d := range got {
		t.Log(d)
	}
	// The AgentBeats runs were scored against a newer ground truth of
	// incident 23 that names the Pod, not the Deployment, as the root; the
	// verdicts still agree (every prediction there is outside otel-demo).
	want := []string{
		"results/itbench-hub-20260130-221517.json incident 23 trial 1: root groups differ: ours [checkout-deployment-1], official [checkout-pod-1]",
		"results/itbench-hub-20260131-162603.json incident 23 trial 1: root groups differ: ours [checkout-deployment-1], official [checkout-pod-1]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("disagreements changed:\n%s", strings.Join(got, "\n"))
	}
}
