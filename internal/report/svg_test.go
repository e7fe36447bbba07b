package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/text"
)

// floats reads the numbers of a submatch list.
func floats(t *testing.T, ss []string) []float64 {
	t.Helper()
	out := make([]float64, len(ss))
	for i, s := range ss {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = v
	}
	return out
}

// The cascade graph: every transition an arc carrying its count; arcs
// above the row run left to right and outnumber those below; no two arcs
// meet a node at the same point and no two count labels overlap; and the
// order puts a chain's modes in its order.
func TestCascadeGraph(t *testing.T) {
	tr := func(from, to string, n int) analyze.Transition {
		return analyze.Transition{From: from, To: to, Count: n}
	}
	tests := []struct {
		name        string
		transitions []analyze.Transition
		order       []string // the modes' order, when it is decided
		back        int      // arcs that must run back
	}{
		{"a chain against taxonomy order", []analyze.Transition{tr("FM-3.1", "FM-2.3", 4), tr("FM-2.3", "FM-1.3", 3), tr("FM-1.3", "FM-1.1", 1)},
			[]string{"FM-3.1", "FM-2.3", "FM-1.3", "FM-1.1"}, 0},
		{"a cycle", []analyze.Transition{tr("FM-1.3", "FM-2.6", 5), tr("FM-2.6", "FM-3.2", 4), tr("FM-3.2", "FM-1.3", 1)},
			[]string{"FM-1.3", "FM-2.6", "FM-3.2"}, 1},
		{"both ways", []analyze.Transition{tr("FM-1.5", "FM-3.3", 7), tr("FM-3.3", "FM-1.5", 2)}, []string{"FM-1.5", "FM-3.3"}, 1},
		{"many arcs from one mode", []analyze.Transition{
			tr("FM-1.1", "FM-1.3", 9), tr("FM-1.1", "FM-1.4", 8), tr("FM-1.1", "FM-1.5", 7), tr("FM-1.1", "FM-2.3", 6), tr("FM-1.1", "FM-2.6", 5),
			tr("FM-1.3", "FM-1.5", 4), tr("FM-1.4", "FM-2.3", 3), tr("FM-1.3", "FM-2.6", 2), tr("FM-1.4", "FM-1.5", 12), tr("FM-2.3", "FM-3.1", 11),
			tr("FM-2.6", "FM-3.1", 10), tr("FM-3.1", "FM-3.3", 1)}, nil, 0},
	}
	arc := regexp.MustCompile(`<path d="M([\d.]+),([\d.]+) C[-\d.,]+ [-\d.,]+ ([\d.]+),([\d.]+)" class="(edge(?: back)?)"[^>]*><title>([^<]*)</title>`)
	label := regexp.MustCompile(`<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="14" rx="3" class="count"/><text [^>]*>(\d+)</text>`)
	node := regexp.MustCompile(`<rect x="([\d.]+)" y="[\d.]+" width="[\d.]+" height="[\d.]+" rx="5" class="node[^"]*"><title>(FM-\d\.\d) `)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &analyze.Group{Name: "g", Cascades: analyze.Cascades{Failed: 20, Ordered: 20, Transitions: tt.transitions,
				Onsets: []analyze.Onset{{Mode: tt.transitions[0].From, Traces: 5}}}}
			svg := string(cascadeGraph(g, linker{}))
			arcs := arc.FindAllStringSubmatch(svg, -1)
			if len(arcs) != len(tt.transitions) {
				t.Fatalf("%d arcs for %d transitions:\n%s", len(arcs), len(tt.transitions), svg)
			}
			back := 0
			ends := map[string]bool{} // every arc's two ends, each at a point of its own
			for i, a := range arcs {
				for _, p := range []string{a[1] + "," + a[2], a[3] + "," + a[4]} {
					if ends[p] {
						t.Errorf("two arcs meet a node at %s", p)
					}
					ends[p] = true
				}
				v := floats(t, []string{a[1], a[3]})
				want := fmt.Sprintf("%s → %s: %s", tt.transitions[i].From, tt.transitions[i].To, text.Plural(tt.transitions[i].Count, "cascade", "cascades"))
				if a[6] != want {
					t.Errorf("arc %d is %q, want %q", i, a[6], want)
				}
				switch a[5] {
				case "edge":
					if v[0] >= v[1] {
						t.Errorf("%s runs right to left above the row", a[6])
					}
				default:
					back++
					if v[0] <= v[1] {
						t.Errorf("%s runs left to right below the row", a[6])
					}
				}
			}
			if back != tt.back {
				t.Errorf("%d arcs run back, want %d", back, tt.back)
			}
			labels := label.FindAllStringSubmatch(svg, -1)
			if len(labels) != len(tt.transitions) {
				t.Fatalf("%d count labels for %d transitions", len(labels), len(tt.transitions))
			}
			for i, l := range labels {
				if l[4] != strconv.Itoa(tt.transitions[i].Count) {
					t.Errorf("label %d says %s, want %d", i, l[4], tt.transitions[i].Count)
				}
				a := floats(t, l[1:4])
				for _, m := range labels[i+1:] {
					b := floats(t, m[1:4])
					if a[0] < b[0]+b[2] && b[0] < a[0]+a[2] && a[1] < b[1]+14 && b[1] < a[1]+14 {
						t.Errorf("the labels %s and %s overlap", l[4], m[4])
					}
				}
			}
			if tt.order != nil {
				var got []string
				for _, n := range node.FindAllStringSubmatch(svg, -1) {
					got = append(got, n[2])
				}
				if strings.Join(got, " ") != strings.Join(tt.order, " ") {
					t.Errorf("modes in the order %v, want %v", got, tt.order)
				}
			}
		})
	}
}

// The density chart gives each group a row of its own, whatever the number
// of groups, and colours by the number of modes, not by group: twelve
// groups need no more colours than two.
func TestDensityChartRows(t *testing.T) {
	var groups []*analyze.Group
	for i := range 12 {
		groups = append(groups, &analyze.Group{Name: fmt.Sprintf("model-%02d", i), Failed: 4,
			Density: analyze.Density{Distribution: []int{1, 1, 1, 1}}})
	}
	svg := string(densityChart(groups, linker{}))
	for _, g := range groups {
		if !strings.Contains(svg, ">"+g.Name+"</text>") {
			t.Errorf("no row for %s", g.Name)
		}
	}
	colours := map[string]bool{}
	for _, m := range regexp.MustCompile(`fill="(rgb\([^)]*\))"`).FindAllStringSubmatch(svg, -1) {
		colours[m[1]] = true
	}
	if len(colours) != 4 {
		t.Errorf("%d colours for 0 to 3 modes: %v", len(colours), colours)
	}
	rows := regexp.MustCompile(`<rect x="[\d.]+" y="([\d.]+)" width="105.0"`).FindAllStringSubmatch(svg, -1)
	if len(rows) != 48 {
		t.Fatalf("%d bars, want 12 groups × 4 counts", len(rows))
	}
}

// The heat map names each column by its mode and explains its colours.
func TestHeatMapLabels(t *testing.T) {
	g := &analyze.Group{Name: "m", Traces: 4, Modes: []*analyze.ModeStats{{Mode: "FM-1.3", Name: "Step repetition", All: analyze.Proportion{K: 1, N: 4}}}}
	svg := string(heatMap([]*analyze.Group{g}, []string{"FM-1.3"}, linker{}))
	for _, want := range []string{"1.3 Step repetition</text>", `fill="url(#heat-scale)"`, "share of the group&#39;s traces with the mode"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the heat map lacks %q:\n%s", want, svg)
		}
	}
}
