package guardproxy

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"net/http"
	"slices"
	"strings"

	"github.com/faultline/faultline/trace"
)

// sessionKey names the session of a request: the agent's own name for it
// (SessionHeader), else the trace of a W3C traceparent header, else the
// conversation's opening (its first system and first user message), which
// every request of a conversation resends.
func sessionKey(h http.Header, steps []trace.Step) string {
	if k, ok := headerKey(h); ok {
		return k
	}
	return openingKey(steps)
}

// headerKey is the session a request's headers name, if they do: the
// session header, else a W3C traceparent's trace.
func headerKey(h http.Header) (string, bool) {
	if k := strings.TrimSpace(h.Get(SessionHeader)); k != "" {
		return k, true
	}
	if id, ok := traceparentID(h.Get("traceparent")); ok {
		return "trace-" + id, true
	}
	return "", false
}

// openingKey names a conversation by a hash of its opening.
func openingKey(steps []trace.Step) string {
	var system, user *trace.Step
	for i := range steps {
		s := &steps[i]
		switch {
		case system == nil && s.Kind == trace.KindSystem:
			system = s
		case user == nil && s.Kind == trace.KindMessage && s.Role == trace.RoleUser:
			user = s
		}
	}
	h256 := sha256.New()
	for _, s := range []*trace.Step{system, user} {
		if s != nil {
			h256.Write([]byte(s.Text))
		}
		h256.Write([]byte{0})
	}
	return "chat-" + hex.EncodeToString(h256.Sum(nil)[:8])
}

// traceparentID returns the trace id of a traceparent header
// (version-traceid-parentid-flags), when it is a valid one.
func traceparentID(v string) (string, bool) {
	parts := strings.Split(strings.TrimSpace(v), "-")
	if len(parts) < 4 || len(parts[1]) != 32 || parts[1] == strings.Repeat("0", 32) {
		return "", false
	}
	if _, err := hex.DecodeString(parts[1]); err != nil {
		return "", false
	}
	return strings.ToLower(parts[1]), true
}

// fingerprint identifies a step by what the agent or its harness wrote,
// to tell whether a request's history extends what a session holds.
func fingerprint(s *trace.Step) uint64 {
	h := fnv.New64a()
	for _, f := range []string{string(s.Kind), s.Role, s.Agent, s.Type, s.Tool, s.CallID, s.Args, s.Text} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

func fingerprints(steps []trace.Step) []uint64 {
	out := make([]uint64, len(steps))
	for i := range steps {
		out[i] = fingerprint(&steps[i])
	}
	return out
}

// extends reports whether a history starts with what a session holds.
func extends(history, held []uint64) bool {
	return len(history) >= len(held) && slices.Equal(history[:len(held)], held)
}
