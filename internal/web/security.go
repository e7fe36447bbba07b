package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The security model:
//   - On loopback (the default) any local browser may use the application,
//     but only under a loopback host name, so that a web page whose name
//     was re-pointed at 127.0.0.1 (DNS rebinding) cannot read it.
//   - Beyond loopback a token is required (CheckAddress), one that can
//     guard something (CheckToken), and with a token every request must
//     carry it: as "Authorization: Bearer <token>", or as ?token=<token>
//     once, which sets a cookie and redirects to the same address without
//     it (a path on this server, never another origin), so that the token
//     does not stay in the history. Tokens are compared in constant time.
//   - Requests that change anything are POSTs carrying a CSRF token bound
//     to the browser's session cookie (a form field, or a header htmx
//     sends), and are refused when the browser says they come from another
//     origin.
//   - Every response forbids framing and inline scripts.
//   - Forms are read up to maxUpload, and every connection within the
//     server's timeouts (server.go), so that a slow client cannot hold one.

const (
	tokenCookie   = "faultline_token"
	sessionCookie = "faultline_session"
	csrfField     = "csrf"
	csrfHeader    = "X-CSRF-Token"
)

// contentSecurityPolicy allows the application's own scripts and styles
// only: no inline script or style, nothing from elsewhere, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// secrets are the server's keys.
type secrets struct {
	token string
	// cookie is what the token cookie holds: a hash of the token, so that
	// the cookie does not carry the token itself.
	cookie string
	// csrfKey signs CSRF tokens; a new one each start, which only makes
	// forms opened before a restart be sent again.
	csrfKey []byte
}

func newSecrets(token string) (*secrets, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	s := &secrets{token: token, csrfKey: key}
	if token != "" {
		sum := sha256.Sum256([]byte("faultline serve cookie\x00" + token))
		s.cookie = hex.EncodeToString(sum[:])
	}
	return s, nil
}

// equal compares in constant time (the lengths may leak, the contents not).
func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

type sessionKey struct{}

// secure wraps the application in the checks above.
func (s *Server) secure(next http.Handler) http.Handler {
	origins := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "duration", time.Since(start))
		}()
		w = sw
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")

		if s.secrets.token == "" && !loopbackHost(r.Host) {
			http.Error(w, "faultline serve answers on loopback names only (localhost, 127.0.0.1, [::1])", http.StatusMisdirectedRequest)
			return
		}
		if s.secrets.token != "" && !s.authorized(w, r) {
			return
		}
		session := s.session(w, r)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := origins.Check(r); err != nil {
				http.Error(w, "refused: a request from another site", http.StatusForbidden)
				return
			}
			// Every form is read here, up to the size limit of an upload,
			// before the handler reads it.
			r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
			err := r.ParseForm() // a plain form, which ParseMultipartForm would not report
			if err == nil {
				if err = r.ParseMultipartForm(maxUpload); err == http.ErrNotMultipart {
					err = nil
				}
			}
			if err != nil {
				http.Error(w, "unreadable form: "+err.Error(), http.StatusBadRequest)
				return
			}
			if !s.validCSRF(r, session) {
				http.Error(w, "refused: the form is stale or forged (no valid CSRF token); reload the page and try again", http.StatusForbidden)
				return
			}
		}
		// The parameters, of the address and of a form (r.Form holds both
		// once parsed), must be text.
		params := r.Form
		if params == nil {
			params = r.URL.Query()
		}
		if err := wellFormed(params); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, session)))
	})
}

// authorized checks the token, answering the request itself when it is
// missing or wrong, or when it came in the address (a redirect that drops
// it, once its cookie is set).
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if q := r.URL.Query(); q.Has("token") {
		if !equal(q.Get("token"), s.secrets.token) {
			http.Error(w, "wrong token", http.StatusUnauthorized)
			return false
		}
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: s.secrets.cookie, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del("token")
		http.Redirect(w, r, sameAddress(r.URL, q), http.StatusSeeOther)
		return false
	}
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && equal(strings.TrimSpace(bearer), s.secrets.token) {
		return true
	}
	if c, err := r.Cookie(tokenCookie); err == nil && equal(c.Value, s.secrets.cookie) {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="faultline"`)
	http.Error(w, "faultline serve needs its token: open the address it printed (…/?token=…) or send Authorization: Bearer <token>", http.StatusUnauthorized)
	return false
}

// sameAddress is the path of u with the query q, as a redirect on this
// server names it: a path with one leading slash, never an address of
// another origin ("//host/…" is one, scheme-relative, which a request for
// the path //host/… would otherwise make).
func sameAddress(u *url.URL, q url.Values) string {
	rel := url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: q.Encode()}
	return "/" + strings.TrimLeft(rel.String(), "/")
}

// MinTokenLength is the shortest token the server takes.
const MinTokenLength = 12

// CheckToken refuses a token that would guard nothing or could not travel:
// blank, shorter than MinTokenLength, or holding anything but printable
// ASCII (a space is lost from a header, a control character garbles an
// address). "" is no token, which CheckAddress allows on loopback only.
// The errors do not repeat the token.
func CheckToken(token string) error {
	switch {
	case token == "":
		return nil
	case strings.TrimSpace(token) == "":
		return errors.New("the token is blank: give one of letters, digits and punctuation, e.g. $(openssl rand -hex 16)")
	case strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r > '~' }):
		return errors.New("the token holds a space, a control character or a character beyond ASCII: use letters, digits and punctuation, e.g. $(openssl rand -hex 16)")
	case len(token) < MinTokenLength:
		return fmt.Errorf("the token is %d characters long, too short to guard the server: use at least %d, e.g. $(openssl rand -hex 16)", len(token), MinTokenLength)
	}
	return nil
}

// session returns the browser's session id, giving it one on its first
// request. The id is random and means nothing but "this browser": CSRF
// tokens are bound to it.
func (s *Server) session(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(sessionCookie); err == nil && len(c.Value) == 32 {
		return c.Value
	}
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand panics rather than return an error)
	id := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return id
}

// csrfFor is the CSRF token of a session.
func (s *Server) csrfFor(session string) string {
	m := hmac.New(sha256.New, s.secrets.csrfKey)
	m.Write([]byte(session))
	return hex.EncodeToString(m.Sum(nil))
}

// csrf is the CSRF token of the request's session, for its forms.
func (s *Server) csrf(r *http.Request) string {
	session, _ := r.Context().Value(sessionKey{}).(string)
	return s.csrfFor(session)
}

// validCSRF checks the CSRF token of a request whose form is parsed: in
// htmx's header, else in the form.
func (s *Server) validCSRF(r *http.Request, session string) bool {
	if _, err := r.Cookie(sessionCookie); err != nil {
		return false // a session made just now has no form yet
	}
	got := r.Header.Get(csrfHeader)
	if got == "" {
		got = r.PostFormValue(csrfField)
	}
	return got != "" && equal(got, s.csrfFor(session))
}

// loopbackHost says whether a Host header names this machine.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// statusWriter remembers the status of a response, for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
