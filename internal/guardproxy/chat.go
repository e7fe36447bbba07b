package guardproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/trace"
)

// maxGateAsks bounds how often one request is asked again at finish gates,
// whatever the rules' max_fires (0 is no bound there), so that a gate
// that keeps firing cannot hold a request for ever.
const maxGateAsks = 3

// chat guards one chat completions request: the request's new steps are
// observed, pending injections added, the upstream asked, and its answer
// observed before it is passed on.
func (p *Proxy) chat(w http.ResponseWriter, r *http.Request) {
	p.stats.requests.Add(1)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("reading the request: %v", err))
		return
	}
	req, err := parseRequest(body)
	if err != nil {
		p.guardFailed(w, r, body, err)
		return
	}
	e := p.sessions.get(sessionKey(r.Header, req.steps), time.Now())
	e.mu.Lock()
	defer e.mu.Unlock()
	if d := e.ended(); d != nil {
		refuse(w, d)
		return
	}
	if e.s == nil || !extends(req.seen, e.seen) {
		p.begin(e, req)
	}
	ds, err := p.observeHistory(e, req.steps[len(e.seen):])
	// What the session holds now is the request's history, whatever
	// becomes of the answer (a detector that failed did so after the steps
	// were added).
	e.seen = req.seen
	if err != nil {
		p.guardFailed(w, r, body, err)
		return
	}
	if d := e.ended(); d != nil {
		annotate(w.Header(), ds)
		refuse(w, d)
		return
	}
	if inj := e.s.TakeInjections(); len(inj) > 0 {
		injected, err := req.body(injection(inj))
		if err != nil {
			p.guardFailed(w, r, body, err)
			return
		}
		body = injected
	}
	ctx, cancel := context.WithTimeout(r.Context(), p.cfg.Timeout)
	defer cancel()
	if req.stream {
		p.stream(ctx, w, r, e, body, ds)
		return
	}
	p.complete(ctx, w, r, e, req, body, ds)
}

// begin starts a new run of a session: its first request, or one whose
// history no longer extends what the session holds (the agent started
// over, or rewrote its history). The run before is stored.
func (p *Proxy) begin(e *entry, req *chatRequest) {
	if e.s != nil {
		p.stats.startedOver.Add(1)
		p.save(e)
	}
	e.gen++
	id := "guard:" + e.key
	if e.gen > 1 {
		id += fmt.Sprintf("#%d", e.gen)
	}
	e.start = guard.Start{Task: task(req.steps), Model: req.model, Format: "openai-chat"}
	e.s = guard.NewSession(id, p.cfg.Policy, e.start)
	e.seen, e.unsaved, e.began = nil, 0, time.Now()
}

// observeHistory observes the steps a request adds, a turn at a time as
// the agent took them: most often the results of the last turn's calls.
func (p *Proxy) observeHistory(e *entry, steps []trace.Step) ([]guard.Decision, error) {
	var out []guard.Decision
	for _, turn := range guard.Turns(&trace.Trace{Steps: steps}) {
		ds, err := p.observe(e, steps[turn.From:turn.To], 0, false)
		if err != nil {
			return out, err
		}
		out = append(out, ds...)
	}
	return out, nil
}

// observe runs a session over new steps and records its decisions. A
// panic of the guard's (a detector's bug) is returned as an error, for
// the proxy to fail open or closed on.
func (p *Proxy) observe(e *entry, steps []trace.Step, tokens int, finishing bool) (ds []guard.Decision, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the guard failed on session %s: %v", e.s.ID, v)
		}
	}()
	ds = e.s.Observe(steps, tokens, finishing)
	p.record(e, ds)
	return ds, nil
}

// guardFailed handles a failure of the guard's own before the request went
// upstream: failing open, the request is forwarded untouched; failing
// closed, it is refused.
func (p *Proxy) guardFailed(w http.ResponseWriter, r *http.Request, body []byte, err error) {
	if !p.cfg.Policy.FailOpen {
		p.stats.failClosed.Add(1)
		p.cfg.Log.Error("guard failed: request refused", "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "faultline_guard_error", "faultline guard failed: "+err.Error())
		return
	}
	p.stats.failOpen.Add(1)
	p.cfg.Log.Warn("guard failed: request forwarded untouched", "path", r.URL.Path, "err", err)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	p.passThrough(w, r)
}

// answer is an upstream's answer, read whole.
type answer struct {
	resp    *http.Response
	body    []byte
	message json.RawMessage // nil when the status is not 2xx
	tokens  int
}

// ask sends a request upstream and reads its answer.
func (p *Proxy) ask(ctx context.Context, r *http.Request, body []byte) (*answer, error) {
	resp, err := p.send(ctx, r, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	a := &answer{resp: resp}
	if a.body, err = io.ReadAll(resp.Body); err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return a, nil
	}
	if a.message, a.tokens, err = parseCompletion(a.body); err != nil {
		return nil, fmt.Errorf("answered %s with %w", resp.Status, err)
	}
	return a, nil
}

// complete handles a request answered whole: the answer is observed, a
// finish gate asks again at once, and a block refuses.
func (p *Proxy) complete(ctx context.Context, w http.ResponseWriter, r *http.Request, e *entry, req *chatRequest, body []byte, ds []guard.Decision) {
	var added []json.RawMessage
	for asks := 0; ; asks++ {
		a, err := p.ask(ctx, r, body)
		if err != nil {
			p.upstreamFailed(w, r, err)
			return
		}
		if a.message == nil {
			// The upstream's refusal is the client's to see, as it is.
			pass(w, a, ds)
			return
		}
		steps, finishing, err := answerSteps(a.message)
		var more []guard.Decision
		if err == nil {
			more, err = p.observe(e, steps, a.tokens, finishing)
		}
		passed := err != nil || !gate(more) || asks == maxGateAsks
		if passed {
			// The client holds this answer now.
			e.seen = append(e.seen, fingerprints(steps)...)
		}
		if err != nil {
			p.answerUnguarded(w, a, ds, err)
			return
		}
		ds = append(ds, more...)
		if d := e.ended(); d != nil {
			annotate(w.Header(), ds)
			refuse(w, d)
			return
		}
		if passed {
			pass(w, a, ds)
			return
		}
		// The agent may not finish yet: the model is asked again, told why,
		// and the client sees only the answer that passes.
		added = append(added, a.message, injection(e.s.TakeInjections()))
		if body, err = req.body(added...); err != nil {
			p.answerUnguarded(w, a, ds, err)
			return
		}
	}
}

// answerUnguarded handles a failure of the guard's own over an answer:
// failing open, the answer is passed on as it came; failing closed, the
// request is refused.
func (p *Proxy) answerUnguarded(w http.ResponseWriter, a *answer, ds []guard.Decision, err error) {
	if !p.cfg.Policy.FailOpen {
		p.stats.failClosed.Add(1)
		p.cfg.Log.Error("guard failed over an answer: refused", "err", err)
		writeError(w, http.StatusInternalServerError, "faultline_guard_error", "faultline guard failed: "+err.Error())
		return
	}
	p.stats.failOpen.Add(1)
	p.cfg.Log.Warn("guard failed over an answer: passed on unguarded", "err", err)
	pass(w, a, ds)
}

// pass writes an upstream's answer to the client, annotated.
func pass(w http.ResponseWriter, a *answer, ds []guard.Decision) {
	copyHeaders(w.Header(), a.resp.Header)
	annotate(w.Header(), ds)
	w.WriteHeader(a.resp.StatusCode)
	_, _ = w.Write(a.body)
}

// ended returns the block that ended the session, if one did.
func (e *entry) ended() *guard.Decision {
	if e.s == nil {
		return nil
	}
	return e.s.Ended()
}
