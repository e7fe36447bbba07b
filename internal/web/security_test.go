package web

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestCheckAddress(t *testing.T) {
	for _, tc := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:7474", "", true},
		{"127.0.0.2:7474", "", true},
		{"[::1]:7474", "", true},
		{"0.0.0.0:7474", "", false},
		{"[::]:7474", "", false},
		{"192.0.2.1:7474", "", false},
		{"0.0.0.0:7474", "s3cret", true},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckAddress(addr, tc.token); (err == nil) != tc.ok {
			t.Errorf("%s with token %q: %v", tc.addr, tc.token, err)
		}
	}
}

// With a token, no request gets through without it: not a page, not an
// asset, not a form.
func TestTokenRequired(t *testing.T) {
	const token = "0123456789abcdef"
	b := serve(t, Config{Store: examplesStore(t), Token: token})
	for _, path := range []string{"/", "/traces", "/static/htmx.min.js", "/agreement", "/labels/export?source=detector&format=csv"} {
		if res := b.get(path); res.StatusCode != http.StatusUnauthorized || strings.Contains(res.body, "<html") {
			t.Errorf("GET %s without the token: %s", path, res.Status)
		}
		if res := b.get(path, "Authorization", "Bearer nope"); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s with a wrong token: %s", path, res.Status)
		}
		if res := b.get(path, "Authorization", "Bearer "+token); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the bearer token: %s", path, res.Status)
		}
	}
	if res := b.post("/labeller", url.Values{"name": {"eve"}}); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST without the token: %s", res.Status)
	}
	if res := b.get("/traces?token=wrong"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong token in the address: %s", res.Status)
	}
	// The token in the address once: a cookie, and the same address without it.
	res := b.get("/traces?model=sim-beta&token=" + token)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/traces?model=sim-beta" {
		t.Fatalf("?token=: %s to %q", res.Status, res.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == tokenCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || strings.Contains(cookie.Value, token) {
		t.Fatalf("token cookie %+v", cookie)
	}
	if page := b.ok("/count?model=sim-beta"); !strings.Contains(page, "4 traces") {
		t.Error("the cookie does not let the browser in")
	}
	// And forms work with it, given their CSRF token.
	b.name("alice")
	if !strings.Contains(b.ok("/labels"), "labelling as <b>alice</b>") {
		t.Error("naming the labeller with the token cookie")
	}
	// Off loopback with a token, any host name will do.
	req, _ := http.NewRequest("GET", b.base+"/labels", nil)
	req.Host = "faultline.internal:7474"
	req.Header.Set("Authorization", "Bearer "+token)
	if res := b.do(req); res.StatusCode != http.StatusOK {
		t.Errorf("another host name with the token: %s", res.Status)
	}
}

// A state-changing request needs the CSRF token of the browser's session,
// and comes from the application's own origin.
func TestCSRF(t *testing.T) {
	b := serve(t, Config{Store: examplesStore(t)})
	token := b.csrf()
	for name, tc := range map[string]struct {
		form   url.Values
		header []string
	}{
		"no token":          {url.Values{"name": {"mallory"}}, nil},
		"a made-up token":   {url.Values{"name": {"mallory"}, "csrf": {strings.Repeat("ab", 32)}}, nil},
		"a header mismatch": {url.Values{"name": {"mallory"}}, []string{csrfHeader, "00"}},
		"another site":      {url.Values{"name": {"mallory"}, "csrf": {token}}, []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}},
	} {
		res := b.post("/labeller", tc.form, tc.header...)
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %s", name, res.Status)
		}
	}
	if strings.Contains(b.ok("/labels"), "mallory") {
		t.Error("a forged request named the labeller")
	}
	// Another browser's token is no good either: it is bound to a session.
	other := newBrowser(t, b.base)
	if res := other.post("/labeller", url.Values{"name": {"mallory"}, "csrf": {token}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("another session's token: %s", res.Status)
	}
	// The right token, as a form field or as htmx's header.
	if res := b.post("/labeller", url.Values{"name": {"alice"}, "csrf": {token}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("with the token: %s", res.Status)
	}
	if res := b.post("/labeller", url.Values{"name": {"bob"}}, csrfHeader, token); res.StatusCode != http.StatusSeeOther {
		t.Errorf("with the header: %s", res.Status)
	}
	// Labels are saved only by POST: a GET of the address does nothing.
	if res := b.get("/traces/x/labels"); res.StatusCode != http.StatusMethodNotAllowed && res.StatusCode != http.StatusNotFound {
		t.Errorf("GET of the label address: %s", res.Status)
	}
	// The form's redirect stays inside the application.
	for back, want := range map[string]string{"https://evil.example/": "/labels", "//evil.example/x": "/labels", "/traces?model=a": "/traces?model=a"} {
		res := b.post("/labeller", url.Values{"name": {"alice"}, "csrf": {token}, "back": {back}})
		if got := res.Header.Get("Location"); got != want {
			t.Errorf("back %q: redirected to %q, want %q", back, got, want)
		}
	}
}

// Forms are read up to the size of an upload, whichever way their CSRF
// token comes, and their fields must be UTF-8 like the address's.
func TestFormsAreBounded(t *testing.T) {
	b := serve(t, Config{Store: examplesStore(t)})
	token := b.csrf()
	for name, tc := range map[string]struct {
		form   url.Values
		header []string
		status int
	}{
		"a name that is not UTF-8":        {url.Values{"name": {"al\xffice"}, "csrf": {token}}, nil, http.StatusBadRequest},
		"the same with htmx's header":     {url.Values{"name": {"al\xffice"}}, []string{csrfHeader, token}, http.StatusBadRequest},
		"a body past the upload limit":    {url.Values{"name": {"alice"}, "pad": {strings.Repeat("x", maxUpload)}}, []string{csrfHeader, token}, http.StatusBadRequest},
		"a well-formed form, for control": {url.Values{"name": {"alice"}}, []string{csrfHeader, token}, http.StatusSeeOther},
	} {
		if res := b.post("/labeller", tc.form, tc.header...); res.StatusCode != tc.status {
			t.Errorf("%s: %s, want %d", name, res.Status, tc.status)
		}
	}
}

// The redirect that drops the token from the address stays on this server,
// whatever the path: never to another origin, as //host/… would be.
func TestTokenRedirectStaysHere(t *testing.T) {
	const token = "0123456789abcdef"
	b := serve(t, Config{Store: examplesStore(t), Token: token})
	for _, tc := range []struct{ path, want string }{
		{"/traces?model=sim-beta&token=" + token, "/traces?model=sim-beta"},
		{"/?token=" + token, "/"},
		{"//evil.example/x?token=" + token, "/evil.example/x"},
		{"///evil.example/x?a=b&token=" + token, "/evil.example/x?a=b"},
		{"/\\evil.example/x?token=" + token, "/%5Cevil.example/x"},
		{"/%2F%2Fevil.example?token=" + token, "/%2F%2Fevil.example"},
		{"/traces/a%2Fb?token=" + token, "/traces/a%2Fb"},
	} {
		res := b.get(tc.path)
		loc := res.Header.Get("Location")
		u, err := url.Parse(loc)
		if res.StatusCode != http.StatusSeeOther || loc != tc.want || err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(loc, "//") {
			t.Errorf("GET %s: %s to %q, want %q", tc.path, res.Status, loc, tc.want)
		}
	}
}

func TestCheckToken(t *testing.T) {
	for _, tc := range []struct {
		token string
		ok    bool
		why   string // in the error
	}{
		{"", true, ""}, // no token: loopback only (CheckAddress)
		{"0123456789abcdef", true, ""},
		{"s3cret-token", true, ""},
		{"a+b/c=d_e~f!g", true, ""},
		{"   ", false, "blank"},
		{"\t\n", false, "blank"},
		{" 0123456789abcdef", false, "space"},
		{"0123456789 abcdef", false, "space"},
		{"0123456789abcdef\x1b", false, "control"},
		{"0123456789abcdé", false, "beyond ASCII"},
		{"s3cret", false, "too short"},
		{"01234567890", false, "11 characters long"},
	} {
		err := CheckToken(tc.token)
		echoed := err != nil && strings.TrimSpace(tc.token) != "" && strings.Contains(err.Error(), strings.TrimSpace(tc.token))
		if (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), tc.why) || echoed {
			t.Errorf("CheckToken(%q) = %v, want ok %v and a word of %q", tc.token, err, tc.ok, tc.why)
		}
		if _, err := New(Config{Store: openStore(t), Token: tc.token}); (err == nil) != tc.ok {
			t.Errorf("New with the token %q: %v", tc.token, err)
		}
	}
}
