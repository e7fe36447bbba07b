package labels

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

// What Write writes, Parse reads back as it was, in either form, with text
// that needs quoting in both.
func TestWriteRoundTrip(t *testing.T) {
	want := []ModeLabel{
		{Trace: "t,1", Mode: "FM-1.3", Verdict: trace.Present, Steps: []int{4, 9}, Quote: `he said "again", twice`, Note: "line one\nline two"},
		{Trace: "t,1", Mode: "FM-3.3", Verdict: trace.Absent},
		{Trace: "t2", Mode: "FM-1.3", Verdict: trace.Unsure, Note: "<script>"},
		{Trace: "t2", Mode: "FM-3.3", Verdict: trace.Present, Quote: "ok"},
	}
	for _, format := range WriteFormats {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, format, want); err != nil {
				t.Fatal(err)
			}
			set, issues := Parse("f", b.Bytes())
			if len(issues) > 0 {
				t.Fatalf("issues: %v\n%s", issues, b.String())
			}
			got := set.Labels
			for i := range got {
				got[i].Line = 0
			}
			if !slices.EqualFunc(got, want, func(a, b ModeLabel) bool {
				return a.Trace == b.Trace && a.Mode == b.Mode && a.Verdict == b.Verdict && slices.Equal(a.Steps, b.Steps) &&
					a.Quote == b.Quote && a.Note == b.Note && !a.Implied
			}) {
				t.Errorf("read back\n%+v\nwant\n%+v\nfrom\n%s", got, want, b.String())
			}
		})
	}
	if err := Write(&bytes.Buffer{}, "xml", want); err == nil || !strings.Contains(err.Error(), "csv, jsonl") {
		t.Errorf("unknown format: %v", err)
	}
}
