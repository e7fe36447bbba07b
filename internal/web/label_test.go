package web

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// labelForm is a labelling form with the given verdicts (mode → verdict)
// and evidence for the present ones.
func labelForm(csrf string, verdicts map[string]string, evidence map[string][3]string) url.Values {
	f := url.Values{"csrf": {csrf}}
	for mode, v := range verdicts {
		f.Set("v-"+mode, v)
	}
	for mode, e := range evidence {
		f.Set("steps-"+mode, e[0])
		f.Set("quote-"+mode, e[1])
		f.Set("note-"+mode, e[2])
	}
	return f
}

func labelStore(t *testing.T) *browser {
	st := openStore(t)
	a := agentRun("a", "m1", false, "pod checkout-7 CrashLoopBackOff")
	a.Findings = []trace.Finding{{Mode: "FM-1.3", Source: "detector", Detector: "repeated-tool-call", Verdict: trace.Present, Steps: []int{1}, Quote: "kubectl get pods"}}
	put(t, st, "/runs.jsonl", a, agentRun("b", "m1", true, "all running"), agentRun("c", "m2", false, "OOMKilled"))
	return serve(t, Config{Store: st})
}

func TestLabelling(t *testing.T) {
	b := labelStore(t)
	if strings.Contains(b.ok("/traces/a"), "Your labels") {
		t.Error("a labelling panel before the labeller named themself")
	}
	csrf := b.csrf()
	if res := b.post("/traces/a/labels", labelForm(csrf, nil, nil)); res.StatusCode != http.StatusBadRequest {
		t.Errorf("labels from nobody: %s", res.Status)
	}
	if res := b.post("/labeller", url.Values{"csrf": {csrf}, "name": {"<b>x</b>"}}); res.StatusCode != http.StatusBadRequest {
		t.Errorf("a name with markup: %s", res.Status)
	}
	b.name("alice")
	page := b.ok("/traces/a")
	if !strings.Contains(page, "as human:alice") || strings.Count(page, `<tbody class="mode`) != len(taxonomy.MAST.Modes) ||
		!strings.Contains(page, `class="cite" data-step="1"`) {
		t.Fatal("no labelling panel of the 14 modes, or no step to cite")
	}

	// Undecided modes and evidence that is not in the trace are refused,
	// each said where it is, and nothing is stored.
	res := b.post("/traces/a/labels", labelForm(csrf, map[string]string{"FM-1.3": "present", "FM-2.2": "absent"},
		map[string][3]string{"FM-1.3": {"1", "kubectl delete pods", ""}}), "HX-Request", "true")
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, `id="label-panel"`) || strings.Contains(res.body, "<html") ||
		!strings.Contains(res.body, `FM-1.3: finding FM-1.3: quote &#34;kubectl delete pods&#34; does not occur in steps [1]`) ||
		!strings.Contains(res.body, "decide every mode: FM-1.1, FM-1.2, FM-1.4") ||
		!strings.Contains(res.body, `value="kubectl delete pods"`) && !strings.Contains(res.body, ">kubectl delete pods</textarea>") {
		t.Errorf("a bad form: %s\n%s", res.Status, res.body)
	}
	res = b.post("/traces/a/labels", labelForm(csrf, map[string]string{"FM-1.3": "present"}, map[string][3]string{"FM-1.3": {"9", "", ""}}), "HX-Request", "true")
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(res.body, "cites step 9, trace has 4 steps") {
		t.Errorf("a step the trace does not have: %s", res.Status)
	}
	if strings.Contains(b.ok("/labels/export?source=human:alice&format=csv"), "a,") {
		t.Error("a refused form stored labels")
	}

	// Present with its evidence, two more decided, the rest absent.
	form := labelForm(csrf, map[string]string{"FM-1.3": "present", "FM-3.3": "unsure", "FM-2.6": "present"},
		map[string][3]string{"FM-1.3": {"1, 1", "kubectl   get pods", "asks twice"}, "FM-3.3": {"2", "ignored", "maybe"}})
	form.Set("rest", "absent")
	res = b.post("/traces/a/labels?queue=model%3Dm1%26todo%3D1", form)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/traces/a?queue=model%3Dm1%26todo%3D1&saved=1#label-panel" {
		t.Fatalf("saving: %s to %q\n%s", res.Status, res.Header.Get("Location"), res.body)
	}
	got := b.ok("/labels/export?source=human:alice&format=csv")
	for _, want := range []string{
		"a,FM-1.3,true,1,kubectl   get pods,asks twice\n",
		"a,FM-2.6,true,,,\n",
		"a,FM-3.3,unsure,,,maybe\n", // an unsure mode keeps its note, not its evidence
		"a,FM-1.1,false,,,\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("export lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\na,"); n != 14 {
		t.Errorf("%d labels of trace a, want 14", n)
	}
	page = b.ok("/traces/a?queue=model%3Dm1%26todo%3D1&saved=1")
	if !strings.Contains(page, "Saved.") || !strings.Contains(page, `href="/label/next?model=m1&amp;todo=1"`) ||
		!strings.Contains(page, `<span class="chip src-human">human:alice</span>`) || !strings.Contains(page, "⚑ FM-1.3 Step repetition · human:alice") {
		t.Error("the saved trace does not show the labels")
	}
	// Saved from htmx, the page is sent to the saved trace rather than the
	// panel replaced by a whole page.
	res = b.post("/traces/a/labels", form, "HX-Request", "true")
	if res.StatusCode != http.StatusNoContent || res.Header.Get("HX-Redirect") != "/traces/a?saved=1#label-panel" {
		t.Errorf("saving from htmx: %s %q", res.Status, res.Header.Get("HX-Redirect"))
	}

	// The queue: the next trace alice has not labelled, within the filter.
	for path, want := range map[string]string{
		"/label/next":          "/traces/b?queue=todo%3D1",
		"/label/next?model=m2": "/traces/c?queue=model%3Dm2%26todo%3D1",
	} {
		if res := b.get(path); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Errorf("%s: %s to %q, want %q", path, res.Status, res.Header.Get("Location"), want)
		}
	}
	if page := b.ok("/label/next?model=m1&outcome=failure"); !strings.Contains(page, "Nothing left to label") {
		t.Error("an empty queue")
	}
	if page := b.ok("/count?todo=1"); !strings.Contains(page, "2 traces") {
		t.Error("the list of traces not labelled by me")
	}
	if page := b.ok("/labels"); !strings.Contains(page, "1 trace labelled") || !strings.Contains(page, "2 traces of this selection left to you") {
		t.Error("the labelling page's counts")
	}
}

// upload posts a label file to the import form.
func upload(b *browser, name, file, content string) response {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("csrf", b.csrf())
	w.WriteField("name", name)
	part, _ := w.CreateFormFile("file", file)
	part.Write([]byte(content))
	w.Close()
	req, _ := http.NewRequest("POST", b.base+"/labels/import", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return b.do(req)
}

// Label files in and out, and the agreement they make: a new labeller's
// labels appear on the agreement page.
func TestLabelFilesAndAgreement(t *testing.T) {
	b := labelStore(t)
	b.name("alice")
	if page := b.ok("/agreement?a=human:alice&b=detector"); !strings.Contains(page, `no annotations of source &#34;human:alice&#34;`) || strings.Contains(page, `id="pair-table"`) {
		t.Error("agreement before alice labelled anything")
	}
	res := upload(b, "bob", "bob.csv", "trace,mode,present,steps,quote\na,FM-1.3,true,1,kubectl get pods\nb,FM-1.3,false,,\nc,FM-1.3,true,2,not there\nzz,FM-1.3,true,,\n")
	if res.StatusCode != http.StatusOK || !strings.Contains(res.body, "bob.csv: 2 labels stored as human:bob") ||
		!strings.Contains(res.body, `quote &#34;not there&#34; does not occur in steps [2]`) || !strings.Contains(res.body, `trace &#34;zz&#34; is not in the database`) {
		t.Errorf("import: %s\n%s", res.Status, res.body)
	}
	if res := upload(b, "", "x.csv", "trace,mode,present\n"); res.StatusCode != http.StatusOK {
		t.Errorf("import as the current labeller: %s", res.Status)
	}
	csrf := b.csrf()
	all := map[string]string{}
	for _, m := range taxonomy.MAST.Modes {
		all[m.Code] = "absent"
	}
	for id, v := range map[string]string{"a": "present", "b": "present", "c": "absent"} {
		all["FM-1.3"] = v
		ev := map[string][3]string{}
		if v == "present" {
			ev["FM-1.3"] = [3]string{"1", "", ""}
		}
		if res := b.post("/traces/"+id+"/labels", labelForm(csrf, all, ev)); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("labelling %s: %s", id, res.Status)
		}
	}
	// alice against the detectors: FM-1.3 on a (both), b (alice only), and
	// c (neither), other modes absent on both sides.
	page := b.ok("/agreement?a=human:alice&b=detector")
	if !strings.Contains(page, `id="pair-table"`) || !strings.Contains(page, `<td>FM-1.3 Step repetition</td><td class="num">3</td><td class="num">1</td><td class="num">1</td><td class="num">0</td><td class="num">1</td>`) {
		t.Errorf("alice against the detectors:\n%s", page)
	}
	if !strings.Contains(page, `<tr><td><a href="/traces/b">b</a></td><td class="v-present">present</td><td class="v-absent">absent</td><td><a href="/traces/b?step=1">#1</a>`) {
		t.Error("the disagreement on b is not listed with a link to its step")
	}
	// Disagreements come under their mode, counted by the side alone in
	// saying present.
	if !strings.Contains(page, `<summary><b>FM-1.3</b> Step repetition: 1 trace · 1 only human:alice</summary>`) {
		t.Error("the disagreements are not grouped by mode")
	}
	// Three labellers: Fleiss' kappa.
	if res := upload(b, "carol", "carol.jsonl", `{"trace": "a", "mode": "FM-1.3", "present": true}
{"trace": "b", "mode": "FM-1.3", "present": false}
{"trace": "c", "mode": "FM-1.3", "present": false}`); res.StatusCode != http.StatusOK {
		t.Fatal(res.Status)
	}
	page = b.ok("/agreement?a=human:alice&b=human:bob&rater=human:alice&rater=human:bob&rater=human:carol&raters=1")
	if !strings.Contains(page, `id="raters-table"`) || !strings.Contains(page, "3 raters, 2 traces") {
		t.Errorf("Fleiss' kappa of three labellers:\n%s", page)
	}
	// By default the humans are the raters.
	if page := b.ok("/agreement"); !strings.Contains(page, `id="raters-table"`) {
		t.Error("no default raters")
	}
	// Export, both forms.
	if got := b.get("/labels/export?source=human:carol&format=jsonl"); got.Header.Get("Content-Disposition") != `attachment; filename="labels-human-carol.jsonl"` ||
		!strings.Contains(got.body, `{"trace":"a","mode":"FM-1.3","present":true}`) {
		t.Errorf("jsonl export: %q\n%s", got.Header.Get("Content-Disposition"), got.body)
	}
	if res := b.get("/labels/export?source=human:carol&format=xml"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("export in an unknown format: %s", res.Status)
	}
}

// TestTwoLabellers has two people label one trace at once: each one's
// labels are their own source, so neither overwrites the other; the panel
// shows the other's, and a save after the other changed theirs says so.
func TestTwoLabellers(t *testing.T) {
	alice := labelStore(t)
	bob := newBrowser(t, alice.base)
	alice.name("alice")
	bob.name("bob")
	all := func(verdict string) map[string]string {
		m := map[string]string{}
		for _, mode := range taxonomy.MAST.Modes {
			m[mode.Code] = verdict
		}
		return m
	}
	seen := func(page string) string {
		m := regexp.MustCompile(`name="seen" value="([^"]*)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatal("no fingerprint of the other labellers in the form")
		}
		return m[1]
	}
	// Both open the trace before either saves.
	aliceSeen, bobSeen := seen(alice.ok("/traces/b")), seen(bob.ok("/traces/b"))
	if aliceSeen != "" || bobSeen != "" {
		t.Errorf("other labellers on a trace nobody labelled: %q, %q", aliceSeen, bobSeen)
	}
	form := labelForm(alice.csrf(), all("absent"), nil)
	form.Set("seen", aliceSeen)
	if res := alice.post("/traces/b/labels", form); res.StatusCode != http.StatusSeeOther || strings.Contains(res.Header.Get("Location"), "changed") {
		t.Fatalf("alice saves first: %s %q", res.Status, res.Header.Get("Location"))
	}
	bobVerdicts := all("absent")
	bobVerdicts["FM-2.6"] = "present"
	form = labelForm(bob.csrf(), bobVerdicts, nil)
	form.Set("seen", bobSeen)
	res := bob.post("/traces/b/labels", form)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/traces/b?changed=human%3Aalice&saved=1#label-panel" {
		t.Fatalf("bob saves after alice: %s %q", res.Status, res.Header.Get("Location"))
	}
	page := bob.ok("/traces/b?changed=human%3Aalice+%3Cb%3E&saved=1")
	if !strings.Contains(page, "While you labelled, <b>human:alice</b> changed their labels on this trace") ||
		!strings.Contains(page, "Also labelled by <b>human:alice</b> (14 modes decided).") {
		t.Errorf("bob's page does not say alice labelled it too")
	}
	if strings.Contains(page, "&lt;b&gt;") {
		t.Error("a name no labeller can have, shown from the address")
	}
	// Nothing lost: both sets are stored whole.
	for who, want := range map[string]string{"alice": "b,FM-2.6,false", "bob": "b,FM-2.6,true"} {
		got := alice.ok("/labels/export?source=human:" + who + "&format=csv")
		if strings.Count(got, "\nb,") != 14 || !strings.Contains(got, want) {
			t.Errorf("%s's labels after both saved:\n%s", who, got)
		}
	}
	// Alice saves again, having seen bob's: no notice.
	page = alice.ok("/traces/b")
	if !strings.Contains(page, "Also labelled by <b>human:bob</b> (14 modes decided, found FM-2.6).") {
		t.Error("alice's page does not show bob's labels")
	}
	form = labelForm(alice.csrf(), all("absent"), nil)
	form.Set("seen", seen(page))
	if res := alice.post("/traces/b/labels", form); strings.Contains(res.Header.Get("Location"), "changed") {
		t.Errorf("a notice with nothing changed: %q", res.Header.Get("Location"))
	}
}

func TestChangedSince(t *testing.T) {
	for _, tc := range []struct {
		before, now string
		want        []string
	}{
		{"", "", nil},
		{"human:a=1", "human:a=1", nil},
		{"human:a=1", "human:a=2", []string{"human:a"}},
		{"", "human:b=1", []string{"human:b"}},
		{"human:a=1 human:b=1", "human:b=1", []string{"human:a"}},
		{"garbage", "human:a=1", []string{"human:a"}},
	} {
		if got := changedSince(tc.before, tc.now); !slices.Equal(got, tc.want) {
			t.Errorf("%q → %q: %v, want %v", tc.before, tc.now, got, tc.want)
		}
	}
}
