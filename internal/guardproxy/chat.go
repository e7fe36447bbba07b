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

// apiRequest is a guarded request of one of the APIs the proxy reads, and
// what the guarded flow needs of its API: how the request names its
// session and continues it, how to add to its conversation, and how to
// read the model's answer.
type apiRequest interface {
	// key names the request's session.
	key(p *Proxy, h http.Header) string
	// continues reports whether the request continues the run the session
	// holds; one that does not starts a new run.
	continues(e *entry) bool
	// start describes the run the request would begin.
	start() guard.Start
	// fresh returns the steps the request adds to the session's run and
	// the history the client holds with it; the caller holds e's lock.
	fresh(e *entry) ([]trace.Step, []uint64)
	streamed() bool
	// body is the request with items added after the client's
	// conversation, its other fields as they were.
	body(extra ...json.RawMessage) ([]byte, error)
	// reply reads a 2xx answer.
	reply(body []byte) (reply, error)
	// turn maps the model's output to steps.
	turn(out json.RawMessage) (turn, error)
	// newStream rebuilds a streamed answer.
	newStream() streamAnswer
	// answerKind names what the API answers, for errors.
	answerKind() string
}

// reply is what the guard reads of a model's answer.
type reply struct {
	// out is the model's output as the API writes it: chat's message,
	// the Responses API's list of output items.
	out    json.RawMessage
	tokens int
	// id is the Responses API's id of the answer, which the client's next
	// request may continue after.
	id string
}

// turn is a model's answer as steps.
type turn struct {
	steps []trace.Step
	// finishing says the agent tries to end its run: it called no tool.
	finishing bool
	// again is what the answer adds to the conversation when the model is
	// asked again at a finish gate.
	again []json.RawMessage
}

// guarded guards one request: its new steps are observed, pending
// injections added, the upstream asked, and its answer observed before it
// is passed on.
func (p *Proxy) guarded(w http.ResponseWriter, r *http.Request, parse func([]byte) (apiRequest, error)) {
	p.stats.requests.Add(1)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("reading the request: %v", err))
		return
	}
	req, err := parse(body)
	if err != nil {
		p.guardFailed(w, r, body, err)
		return
	}
	e := p.sessions.get(req.key(p, r.Header), time.Now())
	e.mu.Lock()
	defer e.mu.Unlock()
	if d := e.ended(); d != nil {
		refuse(w, d)
		return
	}
	if !req.continues(e) {
		p.begin(e, req.start())
	}
	steps, seen := req.fresh(e)
	ds, err := p.observeHistory(e, steps)
	// What the session holds now is the request's history, whatever
	// becomes of the answer (a detector that failed did so after the steps
	// were added).
	e.seen = seen
	if err != nil {
		p.guardFailed(w, r, body, err)
		return
	}
	if d := e.ended(); d != nil {
		annotate(w.Header(), ds)
		refuse(w, d)
		return
	}
	inj := e.s.TakeInjections()
	if len(inj) > 0 {
		injected, err := req.body(injection(inj))
		if err != nil {
			e.s.Requeue(inj)
			p.guardFailed(w, r, body, err)
			return
		}
		body = injected
	}
	ctx, cancel := context.WithTimeout(r.Context(), p.cfg.Timeout)
	defer cancel()
	var answered bool
	if req.streamed() {
		answered = p.stream(ctx, w, r, e, req, body, ds)
	} else {
		answered = p.complete(ctx, w, r, e, req, body, ds)
	}
	if !answered {
		// The model never read the injected messages: they go with the
		// session's next request instead.
		e.s.Requeue(inj)
	}
}

// begin starts a new run of a session: its first request, or one that no
// longer continues what the session holds (the agent started over, or
// rewrote its history). The run before is stored.
func (p *Proxy) begin(e *entry, start guard.Start) {
	if e.s != nil {
		p.stats.startedOver.Add(1)
		p.save(e)
	}
	e.gen++
	id := "guard:" + e.key
	if e.gen > 1 {
		id += fmt.Sprintf("#%d", e.gen)
	}
	e.start = start
	e.s = guard.NewSession(id, p.cfg.Policy, e.start)
	e.seen, e.unsaved, e.began = nil, 0, time.Now()
	e.response, e.instructions = "", ""
}

// passed notes that the client holds an answer now: its steps extend the
// client's history, and a Responses API answer is the point the client's
// next request may continue after.
func (p *Proxy) passed(e *entry, rp reply, t turn) {
	e.seen = append(e.seen, fingerprints(t.steps)...)
	if rp.id != "" {
		p.chains.link(e.response, rp.id, e.key)
		e.response = rp.id
	}
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
	if !p.failsOpen(err, "guard failed: request refused", "guard failed: request forwarded untouched", "path", r.URL.Path) {
		writeErrorCode(w, http.StatusInternalServerError, guardError(err))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	p.passThrough(w, r)
}

// answer is an upstream's answer, read whole.
type answer struct {
	resp  *http.Response
	body  []byte
	reply reply // its out nil when the status is not 2xx
}

// ask sends a request upstream and reads its answer.
func (p *Proxy) ask(ctx context.Context, r *http.Request, req apiRequest, body []byte) (*answer, error) {
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
	if a.reply, err = req.reply(a.body); err != nil {
		return nil, fmt.Errorf("answered %s with %w", resp.Status, err)
	}
	return a, nil
}

// complete handles a request answered whole: the answer is observed, a
// finish gate asks again at once, and a block refuses. It reports whether
// the model answered the request as the client sent it (with what was
// injected into it).
func (p *Proxy) complete(ctx context.Context, w http.ResponseWriter, r *http.Request, e *entry, req apiRequest, body []byte, ds []guard.Decision) (answered bool) {
	var added []json.RawMessage
	for asks := 0; ; asks++ {
		a, err := p.ask(ctx, r, req, body)
		if err != nil {
			p.upstreamFailed(w, r, err)
			return answered
		}
		if a.reply.out == nil {
			// The upstream's refusal is the client's to see, as it is.
			pass(w, a, ds)
			return answered
		}
		answered = true
		t, err := req.turn(a.reply.out)
		var more []guard.Decision
		if err == nil {
			more, err = p.observe(e, t.steps, a.reply.tokens, t.finishing)
		}
		passed := err != nil || !gate(more) || asks == maxGateAsks
		if passed {
			p.passed(e, a.reply, t)
		}
		if err != nil {
			p.answerUnguarded(w, a, ds, err)
			return true
		}
		ds = append(ds, more...)
		if d := e.ended(); d != nil {
			annotate(w.Header(), ds)
			refuse(w, d)
			return true
		}
		if passed {
			pass(w, a, ds)
			return true
		}
		// The agent may not finish yet: the model is asked again, told why,
		// and the client sees only the answer that passes.
		added = append(append(added, t.again...), injection(e.s.TakeInjections()))
		if body, err = req.body(added...); err != nil {
			p.answerUnguarded(w, a, ds, err)
			return true
		}
	}
}

// answerUnguarded handles a failure of the guard's own over an answer:
// failing open, the answer is passed on as it came; failing closed, the
// request is refused.
func (p *Proxy) answerUnguarded(w http.ResponseWriter, a *answer, ds []guard.Decision, err error) {
	if !p.failsOpen(err, "guard failed over an answer: refused", "guard failed over an answer: passed on unguarded") {
		writeErrorCode(w, http.StatusInternalServerError, guardError(err))
		return
	}
	pass(w, a, ds)
}

// failsOpen counts and logs a failure of the guard's own, with the message
// refused or passed and attrs, and reports whether the policy lets the
// traffic pass unguarded (fail_open) rather than refusing it.
func (p *Proxy) failsOpen(err error, refused, passed string, attrs ...any) bool {
	attrs = append(attrs, "err", err)
	if !p.cfg.Policy.FailOpen {
		p.stats.failClosed.Add(1)
		p.cfg.Log.Error(refused, attrs...)
		return false
	}
	p.stats.failOpen.Add(1)
	p.cfg.Log.Warn(passed, attrs...)
	return true
}

// guardError is the error traffic is refused with when the guard failed.
func guardError(err error) apiErrorBody {
	return apiErrorBody{Message: "faultline guard failed: " + err.Error(), Type: "faultline_guard_error"}
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
