package eval

import (
	"reflect"
	"testing"

	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/trace"
)

func TestIndex(t *testing.T) {
	present := func(id, mode string, steps ...int) labels.ModeLabel {
		return labels.ModeLabel{Trace: id, Mode: mode, Verdict: trace.Present, Steps: steps}
	}
	other := func(id, mode string, v trace.Verdict, implied bool) labels.ModeLabel {
		return labels.ModeLabel{Trace: id, Mode: mode, Verdict: v, Implied: implied}
	}
	tests := []struct {
		name string
		in   []labels.ModeLabel
		// want lists the labels again, trace by trace in the order of
		// their first label, modes in the order of theirs.
		want []labels.ModeLabel
		side Side
	}{
		{
			name: "traces in id order, a mode first seen on a later trace",
			in: []labels.ModeLabel{present("t1", "FM-1.3", 4, 9), other("t1", "FM-3.3", trace.Unsure, false),
				other("t2", "FM-1.3", trace.Absent, true), present("t3", "FM-2.1", 1), other("t3", "FM-1.3", trace.Absent, false)},
			want: []labels.ModeLabel{present("t1", "FM-1.3", 4, 9), other("t1", "FM-3.3", trace.Unsure, false),
				other("t2", "FM-1.3", trace.Absent, true), other("t3", "FM-1.3", trace.Absent, false), present("t3", "FM-2.1", 1)},
			side: Side{Traces: 3, Decided: 4, Implied: 1, Unsure: 1},
		},
		{
			name: "traces out of order, a pair repeated: the last one counts",
			in: []labels.ModeLabel{present("t2", "FM-1.3", 4, 9), other("t1", "FM-1.3", trace.Absent, false),
				other("t2", "FM-1.3", trace.Absent, false), present("t1", "FM-3.3", 2)},
			want: []labels.ModeLabel{other("t2", "FM-1.3", trace.Absent, false), other("t1", "FM-1.3", trace.Absent, false), present("t1", "FM-3.3", 2)},
			side: Side{Traces: 2, Decided: 4},
		},
		{name: "none", side: Side{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := &labels.Set{Name: "human:a", Detail: "by hand", Sources: []string{"human:a"}, Labels: tc.in}
			x := Index(set)
			tc.side.Name, tc.side.Detail, tc.side.Sources = set.Name, set.Detail, set.Sources
			if got := x.Describe(); !reflect.DeepEqual(got, tc.side) {
				t.Errorf("Describe() = %+v, want %+v", got, tc.side)
			}
			for _, l := range tc.want {
				if got := x.get(l.Trace, l.Mode); !reflect.DeepEqual(got, l) {
					t.Errorf("get(%s, %s) = %+v, want %+v", l.Trace, l.Mode, got, l)
				}
			}
			for _, missing := range [][2]string{{"t2", "FM-3.3"}, {"t1", "FM-1.1"}, {"t9", "FM-1.3"}} {
				if got := x.get(missing[0], missing[1]); !reflect.DeepEqual(got, labels.ModeLabel{}) {
					t.Errorf("get(%s, %s) = %+v, want none", missing[0], missing[1], got)
				}
			}
			if got := x.Set(); !reflect.DeepEqual(got.Labels, tc.want) || got.Name != set.Name || got.Detail != set.Detail {
				t.Errorf("Set() = %+v, want labels %+v", got, tc.want)
			}
		})
	}
}
