package guardproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
)

// SessionHeader names the session a request belongs to, when the agent
// says.
const SessionHeader = "X-Faultline-Session"

// Headers not passed on: a connection's own (RFC 9110 7.6.1); of a
// request, also its length, which the proxy's body sets, its accepted
// encodings, left to the client library, which then decompresses what it
// asked for, and the session's name, which is the proxy's; of a response,
// also its length.
var (
	hopHeaders    = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}
	requestDrops  = append(slices.Clone(hopHeaders), "Content-Length", "Accept-Encoding", SessionHeader)
	responseDrops = append(slices.Clone(hopHeaders), "Content-Length")
)

// send posts a chat request's body upstream with the client's headers
// (Authorization among them).
func (p *Proxy) send(ctx context.Context, in *http.Request, body []byte) (*http.Response, error) {
	out, err := http.NewRequestWithContext(ctx, http.MethodPost, p.target(in.URL).String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("upstream request: %w", err)
	}
	out.Header = in.Header.Clone()
	for _, h := range requestDrops {
		out.Header.Del(h)
	}
	return p.cfg.Client.Do(out)
}

// copyHeaders passes an upstream response's headers on, but for the
// connection's own and the length, which the proxy sets.
func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, h := range responseDrops {
		dst.Del(h)
	}
}

// upstreamFailed answers a request whose upstream call failed: 504 when it
// took longer than the timeout, 502 when the upstream could not be reached
// or broke off. A client that went away is answered nothing.
func (p *Proxy) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case r.Context().Err() != nil && !errors.Is(r.Context().Err(), context.DeadlineExceeded):
		p.cfg.Log.Debug("client went away", "path", r.URL.Path, "err", err)
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, "upstream_timeout",
			fmt.Sprintf("upstream %s did not answer within %s", p.cfg.Upstream, p.cfg.Timeout))
	default:
		writeError(w, http.StatusBadGateway, "upstream_error", fmt.Sprintf("upstream %s: %v", p.cfg.Upstream, err))
	}
}

// apiError is an error as OpenAI's API writes it.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    string `json:"code,omitempty"`
}

// writeError answers with an OpenAI-style JSON error.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeErrorCode(w, status, apiErrorBody{Message: msg, Type: typ})
}

func writeErrorCode(w http.ResponseWriter, status int, e apiErrorBody) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(apiError{Error: e})
}
