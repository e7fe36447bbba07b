package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Whatever a query string holds, every page answers it with a page or a
// 4xx that says what is wrong: never a panic, never a 500.
func FuzzQueries(f *testing.F) {
	paths := []string{"/", "/traces", "/count", "/traces/019c22bd-d098-7f47-9e7d-8a330f6ddd22",
		"/traces/019c22bd-d098-7f47-9e7d-8a330f6ddd22/steps", "/traces/019c22bd-d098-7f47-9e7d-8a330f6ddd22/steps/7",
		"/agreement", "/labels", "/label/next", "/labels/export"}
	for i, q := range []string{
		"", "model=sim-beta&outcome=failure", "q=%22crash+loop%22+ku*", "q=NEAR(a+b)", "mode=FM-1.3&source=detector",
		"after=garbage", "before=eyJpZCI6IngifQ", "sort=steps&desc=1", "modes=2-3", "from=-5&dir=next", "from=99999&dir=prev",
		"step=7", "a=human:x&b=detector", "rater=detector&rater=judge", "by=scenario", "source=human:e2e&format=jsonl",
		"q=%00%ff", "modes=-1", "from=1e9", "raters=1&rater=mad",
	} {
		f.Add(uint8(i), q)
	}
	srv, err := New(Config{Store: examplesStore(f)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which uint8, query string) {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+paths[int(which)%len(paths)], nil)
		req.URL.RawQuery = query
		req.Header.Set("HX-Request", "true")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Errorf("GET %s?%s: %d %.300s", req.URL.Path, query, rec.Code, rec.Body.String())
		}
	})
}
