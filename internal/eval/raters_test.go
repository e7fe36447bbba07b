package eval

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/trace"
)

// raterSet builds a rater's labels from "trace mode verdict" triples.
func raterSet(name string, triples ...string) *labels.Set {
	s := &labels.Set{Name: name}
	for _, tr := range triples {
		var id, mode, v string
		fmt.Sscan(tr, &id, &mode, &v)
		l := labels.ModeLabel{Trace: id, Mode: mode, Verdict: trace.Verdict(v)}
		if l.Verdict == trace.Present {
			l.Steps = []int{len(id)}
		}
		s.Labels = append(s.Labels, l)
	}
	return s
}

func TestAgreeRaters(t *testing.T) {
	a := raterSet("human:a", "t1 FM-1.3 present", "t2 FM-1.3 absent", "t3 FM-1.3 present", "t4 FM-1.3 present", "t1 FM-3.3 present", "t2 FM-3.3 absent")
	b := raterSet("human:b", "t1 FM-1.3 present", "t2 FM-1.3 absent", "t3 FM-1.3 present", "t4 FM-1.3 absent", "t1 FM-3.3 present", "t2 FM-3.3 absent")
	c := raterSet("human:c", "t1 FM-1.3 present", "t2 FM-1.3 absent", "t3 FM-1.3 absent", "t4 FM-1.3 absent", "t1 FM-3.3 unsure", "t2 FM-3.3 absent")
	r := AgreeRaters([]*Labels{Index(a), Index(b), Index(c)}, AgreementOptions{Replicates: 200, Seed: 1})
	if r.Traces != 4 || len(r.Modes) != 2 {
		t.Fatalf("%d traces, modes %+v", r.Traces, r.Modes)
	}
	// FM-1.3: items [3 0] [0 3] [2 1] [1 2]: P̄ = 2/3, chance 1/2, kappa 1/3.
	m := r.Modes[0]
	if m.Mode != "FM-1.3" || m.Items != 4 || m.Unanimous != 2 || m.Present != 6 || m.Excluded != 0 ||
		*m.Kappa.Value != 0.3333 || *m.Agreement.Value != 0.6667 || m.Kappa.Lo == nil || *m.Kappa.Lo > *m.Kappa.Hi {
		t.Errorf("FM-1.3 %+v kappa %v", m, *m.Kappa.Value)
	}
	// FM-3.3: one item, all absent (kappa undefined); t1 left out as unsure.
	m = r.Modes[1]
	if m.Mode != "FM-3.3" || m.Items != 1 || m.Excluded != 1 || m.Kappa.Value != nil || *m.Agreement.Value != 1 {
		t.Errorf("FM-3.3 %+v", m)
	}
	// Pooled: 5 items, P̄ = 22/30, chance (36+81)/225, kappa 96/216.
	if o := r.Overall; o == nil || o.Items != 5 || o.Excluded != 1 || *o.Kappa.Value != 0.4444 {
		t.Errorf("overall %+v", o)
	}
	if none := AgreeRaters([]*Labels{Index(raterSet("x")), Index(raterSet("y")), Index(raterSet("z"))}, AgreementOptions{}); none.Overall != nil || len(none.Modes) != 0 {
		t.Errorf("no labels: %+v", none)
	}
}

func TestConflicts(t *testing.T) {
	a := raterSet("human:a", "t4 FM-1.3 present", "t3 FM-1.3 present", "t2 FM-1.3 absent", "t1 FM-3.3 present", "t2 FM-3.3 unsure")
	c := raterSet("human:c", "t4 FM-1.3 absent", "t3 FM-1.3 absent", "t2 FM-1.3 present", "t1 FM-3.3 present", "t2 FM-3.3 present")
	got := fmt.Sprint(Conflicts(a, c))
	want := "[{t2 FM-1.3 absent present [2]} {t3 FM-1.3 present absent [2]} {t4 FM-1.3 present absent [2]}]"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Both from one pair of indexes, as the agreement page asks for them.
	ag, conflicts := AgreeAndConflicts(Index(a), Index(c), DefaultOptions)
	if fmt.Sprint(conflicts) != want || !reflect.DeepEqual(ag, Agree(a, c, DefaultOptions)) {
		t.Errorf("AgreeAndConflicts differs from Agree and Conflicts: %v", conflicts)
	}
}
