package trace

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestSpansRoundTrip(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	spans := []Span{
		{ID: "a", Name: "invoke_agent", Start: at, End: at.Add(time.Second)},
		{ID: "b", Parent: "a", Name: "GET", Start: at.Add(time.Millisecond), End: at.Add(2 * time.Millisecond), Failed: true},
	}
	tests := []struct {
		name  string
		spans []Span
		want  []Span
	}{
		{"kept", spans, spans},
		{"none", nil, nil},
		{"too many", make([]Span, MaxTreeSpans+1), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &Trace{}
			tr.SetSpans(tt.spans)
			if got := tr.Spans(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	broken := &Trace{Meta: map[string]string{SpanTreeMeta: "[{"}}
	if broken.Spans() != nil {
		t.Error("an unreadable tree read as spans")
	}
}

// spanSamples are trees SetSpans must write as json.Marshal does.
var spanSamples = [][]Span{
	{{ID: "a1b2", Name: "invoke_agent bench", Start: time.Unix(1767225600, 123456789).UTC(), End: time.Unix(1767225610, 0).UTC()}},
	{{ID: "r", Name: "chat"}, {ID: "c", Parent: "r", Name: "execute_tool kubectl", Failed: true, Start: time.Unix(0, 1).UTC()}},
	{{ID: "x", Name: `GET /a?b=1&c=<2> "q" \ é`, Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))}},
	{{ID: "y", Name: "tab\there", End: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	{{ID: "z", Name: "local", Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)}},
}

func TestSetSpansWritesWhatJSONDoes(t *testing.T) {
	for _, spans := range spanSamples {
		checkSpansJSON(t, spans)
	}
}

func FuzzSetSpans(f *testing.F) {
	f.Add("a", "", "invoke_agent", int64(1767225600123456789), int64(0), false)
	f.Add("b", "a", "GET <x> & \"y\"", int64(-62135596800000000), int64(253402300800000000), true)
	f.Fuzz(func(t *testing.T, id, parent, name string, start, end int64, failed bool) {
		checkSpansJSON(t, []Span{{ID: id, Parent: parent, Name: name, Start: time.Unix(0, start).UTC(), End: time.Unix(0, end).UTC(), Failed: failed}})
	})
}

func checkSpansJSON(t *testing.T, spans []Span) {
	t.Helper()
	want, err := json.Marshal(spans)
	tr := &Trace{}
	tr.SetSpans(spans)
	got, kept := tr.Meta[SpanTreeMeta]
	switch {
	case err != nil && kept:
		t.Errorf("kept %s for spans json.Marshal refuses (%v)", got, err)
	case err == nil && got != string(want):
		t.Errorf("wrote\n %s\nwant\n %s", got, want)
	}
}
