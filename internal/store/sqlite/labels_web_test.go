package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/pipeline"
	"github.com/faultline/faultline/trace"
)

func TestImportExportLabels(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	yes := true
	ingestFile(t, st, "/f", "h", sample("a", "m1", &yes), sample("b", "m1", nil))
	set, issues := labels.Parse("l.csv", []byte(`trace,mode,present,steps,quote,note
a,FM-1.3,true,1,"{""cmd"":""ls""}",called ls twice
a,FM-3.3,false,,,
b,FM-1.3,true,2,not in the step,
b,FM-3.3,unsure,,,hard to say
gone,FM-1.3,true,,,
`))
	if len(issues) > 0 {
		t.Fatal(issues)
	}
	stored, issues, err := pipeline.ImportLabels(ctx, st, set, "human:ann")
	if err != nil {
		t.Fatal(err)
	}
	if stored != 3 || len(issues) != 2 ||
		!strings.Contains(issues[0].Message, `quote "not in the step" does not occur in steps [2]`) || issues[0].Line != 4 ||
		!strings.Contains(issues[1].Message, `trace "gone" is not in the database`) {
		t.Errorf("stored %d, issues %v", stored, issues)
	}
	got, err := st.ExportLabels(ctx, "human:ann")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := labels.Write(&b, "csv", got); err != nil {
		t.Fatal(err)
	}
	want := `trace,mode,present,steps,quote,note
a,FM-1.3,true,1,"{""cmd"":""ls""}",called ls twice
a,FM-3.3,false,,,
b,FM-3.3,unsure,,,hard to say
`
	if b.String() != want {
		t.Errorf("exported\n%s\nwant\n%s", b.String(), want)
	}
	// The trace's other sources are untouched, and importing again replaces.
	fs, _ := st.Findings(ctx, "a")
	if len(fs) != 3 || fs[1].Source != "mad:annotator_1" {
		t.Errorf("findings of a: %+v", fs)
	}
	set, _ = labels.Parse("l.jsonl", []byte(`{"trace": "a", "mode": "FM-2.2", "present": true}`))
	if _, _, err := pipeline.ImportLabels(ctx, st, set, "human:ann"); err != nil {
		t.Fatal(err)
	}
	got, _ = st.ExportLabels(ctx, "human:ann")
	if len(got) != 2 || got[0].Mode != "FM-2.2" || got[0].Verdict != trace.Present || got[1].Trace != "b" {
		t.Errorf("after a second import: %+v", got)
	}
	if n, err := st.LabelledTraces(ctx, "human:ann"); err != nil || n != 2 {
		t.Errorf("labelled traces %d, %v", n, err)
	}
}
