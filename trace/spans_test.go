package trace

import (
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
