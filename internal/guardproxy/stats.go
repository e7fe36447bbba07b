package guardproxy

import (
	"encoding/json"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/faultline/faultline/guard"
)

// Stats is what GET /faultline/guard/stats answers.
type Stats struct {
	Requests     int64 `json:"requests"` // guarded requests: chat completions and responses
	OpenSessions int   `json:"open_sessions"`
	Evicted      int64 `json:"evicted"`
	// StartedOver counts requests whose history did not extend what their
	// session held, which started a new run of it.
	StartedOver int64 `json:"started_over"`
	// FailOpen counts requests and answers passed on unguarded because the
	// guard failed; FailClosed those refused for it.
	FailOpen   int64 `json:"fail_open"`
	FailClosed int64 `json:"fail_closed"`
	// Decisions counts decisions by rule, then action.
	Decisions map[string]map[string]int64 `json:"decisions"`
	// With an OTLP endpoint: the decisions posted to it, those of posts
	// that failed, and those dropped with the queue full.
	OTLPSent    int64 `json:"otlp_sent"`
	OTLPFailed  int64 `json:"otlp_failed"`
	OTLPDropped int64 `json:"otlp_dropped"`
}

type stats struct {
	requests, failOpen, failClosed, startedOver atomic.Int64

	mu        sync.Mutex
	decisions map[string]map[string]int64
}

func newStats() stats { return stats{decisions: map[string]map[string]int64{}} }

func (s *stats) count(ds []guard.Decision) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range ds {
		byAction := s.decisions[d.Rule]
		if byAction == nil {
			byAction = map[string]int64{}
			s.decisions[d.Rule] = byAction
		}
		byAction[d.Action.String()]++
	}
}

// Stats returns the proxy's counters.
func (p *Proxy) Stats() Stats {
	out := Stats{
		Requests:    p.stats.requests.Load(),
		FailOpen:    p.stats.failOpen.Load(),
		FailClosed:  p.stats.failClosed.Load(),
		StartedOver: p.stats.startedOver.Load(),
		Decisions:   map[string]map[string]int64{},
	}
	out.OpenSessions, out.Evicted = p.sessions.counts()
	if p.otlp != nil {
		out.OTLPSent, out.OTLPFailed, out.OTLPDropped = p.otlp.sent.Load(), p.otlp.failed.Load(), p.otlp.dropped.Load()
	}
	p.stats.mu.Lock()
	defer p.stats.mu.Unlock()
	for rule, byAction := range p.stats.decisions {
		out.Decisions[rule] = maps.Clone(byAction)
	}
	return out
}

func (p *Proxy) serveStats(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(p.Stats())
}
