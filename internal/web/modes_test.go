package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/faultline/faultline/taxonomy"
)

// The modes pages: every mode listed, one explained in full, other
// spellings of a code sent to its page, an unknown code not found.
func TestModesPages(t *testing.T) {
	b := serve(t, Config{Store: openStore(t)})
	all := b.ok("/modes")
	for _, tx := range []*taxonomy.Taxonomy{taxonomy.MAST, taxonomy.System} {
		for _, m := range tx.Modes {
			if !strings.Contains(all, `<a href="/modes/`+m.Code+`">`+m.Code+`</a>`) {
				t.Errorf("/modes does not link %s to its page", m.Code)
			}
		}
	}
	tests := []struct {
		path   string
		status int
		want   []string // in the page, or the redirect's target
	}{
		{"/modes/FM-1.3", http.StatusOK, []string{"Step repetition", "repeated-tool-call", "Definition", "Example", "Intervention", `href="/traces?mode=FM-1.3"`}},
		{"/modes/SYS-1", http.StatusOK, []string{taxonomy.Name("SYS-1")}},
		// A mode no detector looks for says who finds it.
		{"/modes/FM-2.4", http.StatusOK, []string{"none: the LLM judge"}},
		{"/modes/1.3", http.StatusMovedPermanently, []string{"/modes/FM-1.3"}},
		{"/modes/fm-3.3", http.StatusMovedPermanently, []string{"/modes/FM-3.3"}},
		{"/modes/sys-2", http.StatusMovedPermanently, []string{"/modes/SYS-2"}},
		{"/modes/FM-9.9", http.StatusNotFound, []string{"There is no mode FM-9.9"}},
		{"/modes/%3Cscript%3E", http.StatusNotFound, []string{"There is no mode &lt;script&gt;"}},
	}
	for _, tc := range tests {
		res := b.get(tc.path)
		if res.StatusCode != tc.status {
			t.Errorf("GET %s: %s, want %d", tc.path, res.Status, tc.status)
			continue
		}
		got := res.body
		if tc.status == http.StatusMovedPermanently {
			got = res.Header.Get("Location")
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("GET %s: no %q in %.300s", tc.path, w, got)
			}
		}
	}
}
