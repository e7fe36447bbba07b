package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/faultline/faultline/trace"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one chat completion.
type Request struct {
	Model       string
	Messages    []Message
	Temperature *float64 // nil: the endpoint's default
	Seed        *int     // nil: not sent
	MaxTokens   int      // 0: not sent
}

// Response is a completion. Token counts are the endpoint's; zero when it
// reported none.
type Response struct {
	Content      string
	FinishReason string
	InputTokens  int
	OutputTokens int
}

// Format is how a call asks for JSON.
type Format string

const (
	FormatSchema Format = "json_schema" // response_format with the answer's JSON schema
	FormatObject Format = "json_object" // response_format asking for any JSON object
	FormatNone   Format = "none"        // no response_format; the prompt alone asks for JSON
)

// Formats lists the formats from the strictest down, the order in which the
// client falls back when an endpoint rejects one.
var Formats = []Format{FormatSchema, FormatObject, FormatNone}

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("response format must be json_schema, json_object or none, not %q", s)
}

// ClientOptions configure an OpenAI-compatible client.
type ClientOptions struct {
	// BaseURL is the API root (https://api.openai.com/v1,
	// http://localhost:11434/v1) or the full chat/completions URL.
	BaseURL string
	// APIKey is sent as a bearer token when set. It is never logged, and is
	// removed from any error text the endpoint sends back.
	APIKey string
	Format Format
	// Timeout bounds one attempt; an attempt that takes longer is retried.
	Timeout time.Duration
	// Retries is how many times a call is repeated after a 429, a 5xx, a
	// timeout or a network error.
	Retries int
	// RequestsPerMinute limits the call rate on the client side; 0: no limit.
	RequestsPerMinute float64
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// attempts (with jitter) when the endpoint gives no Retry-After; 0 is
	// DefaultClientOptions'.
	MinBackoff, MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After honoured; an endpoint asking
	// for a longer pause (a spent quota) fails the call instead. 0 is
	// DefaultClientOptions' (see there).
	MaxRetryAfter time.Duration
	// Conns is how many connections are kept open to the endpoint; set it to
	// the concurrency so that parallel calls do not reconnect.
	Conns int
	Log   *slog.Logger
}

// DefaultClientOptions are sensible for hosted endpoints. Their
// MaxRetryAfter, five minutes, waits out any per-minute limit (OpenAI's
// and most others' Retry-After is seconds) and a short overload; a longer
// pause is a daily quota or an outage, which a run should report rather
// than sit through looking hung.
var DefaultClientOptions = ClientOptions{
	BaseURL:       "https://api.openai.com/v1",
	Format:        FormatSchema,
	Timeout:       5 * time.Minute,
	Retries:       5,
	MinBackoff:    time.Second,
	MaxBackoff:    time.Minute,
	MaxRetryAfter: 5 * time.Minute,
	Conns:         8,
}

// OpenAI is a Backend for any endpoint that speaks OpenAI's chat-completions
// API: OpenAI, vLLM, Ollama, LM Studio, Gemini's compatible endpoint.
type OpenAI struct {
	url     string
	opt     ClientOptions
	http    *http.Client
	limiter *rate.Limiter
	log     *slog.Logger

	mu     sync.Mutex
	format Format // lowered for the whole run when the endpoint rejects it

	// sleep pauses between attempts, returning early with ctx's error when
	// ctx ends; tests replace it to see the pauses without taking them.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewOpenAI returns a client.
func NewOpenAI(opt ClientOptions) *OpenAI {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = max(opt.Conns, 2)
	// Unset waits are the defaults', so that callers name only what they
	// choose.
	if opt.MinBackoff <= 0 {
		opt.MinBackoff = DefaultClientOptions.MinBackoff
	}
	if opt.MaxBackoff <= 0 {
		opt.MaxBackoff = DefaultClientOptions.MaxBackoff
	}
	if opt.MaxRetryAfter <= 0 {
		opt.MaxRetryAfter = DefaultClientOptions.MaxRetryAfter
	}
	c := &OpenAI{url: chatURL(opt.BaseURL), opt: opt, http: &http.Client{Transport: transport}, format: opt.Format, log: opt.Log, sleep: Sleep}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.format == "" {
		c.format = FormatSchema
	}
	if opt.RequestsPerMinute > 0 {
		c.limiter = rate.NewLimiter(rate.Limit(opt.RequestsPerMinute/60), 1)
	}
	return c
}

// chatURL turns an API root into its chat/completions URL.
func chatURL(base string) string {
	base = strings.TrimRight(base, "/")
	if strings.HasSuffix(base, "/chat/completions") {
		return base
	}
	return base + "/chat/completions"
}

// Format returns the response format calls currently use.
func (c *OpenAI) Format() Format {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.format
}

// lower moves from the rejected format to the next one down, once for all
// callers; it reports false when there is nothing lower to try.
func (c *OpenAI) lower(rejected Format) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.format != rejected {
		return true // another call already moved on
	}
	for i, f := range Formats[:len(Formats)-1] {
		if f == rejected {
			c.format = Formats[i+1]
			c.log.Warn("endpoint rejects response_format; falling back", "rejected", rejected, "now", c.format)
			return true
		}
	}
	return false
}

// StatusError is an HTTP answer other than success.
type StatusError struct {
	Status  int
	Message string // the endpoint's message, API key removed
	// RetryAfter is the pause the endpoint asked for (its Retry-After
	// header), 0 when it asked for none.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("endpoint answered %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// Unwrap makes the statuses that no retry and no other trace can get past
// (bad key, no access, unknown model or URL) ErrFatal.
func (e *StatusError) Unwrap() error {
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return ErrFatal
	}
	return nil
}

func (e *StatusError) retryable() bool {
	switch {
	case e.Status == http.StatusTooManyRequests, e.Status == http.StatusRequestTimeout, e.Status >= 500:
		return true
	}
	return false
}

// rejectsFormat reports whether the endpoint refused the request because of
// its response_format.
func (e *StatusError) rejectsFormat() bool {
	if e.Status != http.StatusBadRequest && e.Status != http.StatusUnprocessableEntity {
		return false
	}
	msg := strings.ToLower(e.Message)
	for _, hint := range []string{"response_format", "json_schema", "json_object", "structured output", "schema"} {
		if strings.Contains(msg, hint) {
			return true
		}
	}
	return false
}

// Complete makes one chat completion, waiting for the rate limit, retrying
// what can succeed on a later attempt (429 and 5xx, honouring Retry-After;
// timeouts; network errors) with exponential backoff and jitter, and
// falling back to a weaker response format when the endpoint rejects one.
func (c *OpenAI) Complete(ctx context.Context, req Request) (*Response, error) {
	for attempt := 0; ; {
		if c.limiter != nil {
			if err := c.limiter.Wait(ctx); err != nil {
				return nil, fmt.Errorf("waiting for the rate limit: %w", err)
			}
		}
		format := c.Format()
		resp, err := c.attempt(ctx, req, format)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var se *StatusError
		isStatus := errors.As(err, &se)
		if isStatus && se.rejectsFormat() && format != FormatNone && c.lower(format) {
			continue
		}
		if (isStatus && !se.retryable()) || attempt >= c.opt.Retries {
			if attempt > 0 {
				return nil, fmt.Errorf("after %d attempts: %w", attempt+1, err)
			}
			return nil, err
		}
		var retryAfter time.Duration
		if isStatus {
			retryAfter = se.RetryAfter
		}
		if retryAfter > c.opt.MaxRetryAfter {
			return nil, fmt.Errorf("the endpoint asks to wait %s before calling again, longer than %s: %w", retryAfter, c.opt.MaxRetryAfter, err)
		}
		wait := c.backoff(attempt, retryAfter)
		c.log.Warn("judge call failed; retrying", "attempt", attempt+1, "wait", wait.Round(time.Millisecond), "err", err)
		if err := c.sleep(ctx, wait); err != nil {
			return nil, err
		}
		attempt++
	}
}

// backoff is the pause before the next attempt: what Retry-After asks for
// (plus up to a tenth, so that parallel callers do not return at once),
// else an exponentially growing delay with jitter.
func (c *OpenAI) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter + jitter(retryAfter/10)
	}
	d := c.opt.MinBackoff << attempt
	if d <= 0 || d > c.opt.MaxBackoff {
		d = c.opt.MaxBackoff
	}
	return d/2 + jitter(d/2)
}

// Sleep waits d, or until ctx ends, when it returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d)
}

// chatRequest is the body of a chat/completions call.
type chatRequest struct {
	Model          string    `json:"model"`
	Messages       []Message `json:"messages"`
	Temperature    *float64  `json:"temperature,omitempty"`
	Seed           *int      `json:"seed,omitempty"`
	MaxTokens      int       `json:"max_tokens,omitempty"`
	ResponseFormat any       `json:"response_format,omitempty"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal string  `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// attempt makes one HTTP call.
func (c *OpenAI) attempt(ctx context.Context, req Request, format Format) (*Response, error) {
	body := chatRequest{Model: req.Model, Messages: req.Messages, Temperature: req.Temperature, Seed: req.Seed, MaxTokens: req.MaxTokens}
	switch format {
	case FormatSchema:
		body.ResponseFormat = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "mast_annotation", "strict": true, "schema": answerSchema}}
	case FormatObject:
		body.ResponseFormat = map[string]string{"type": "json_object"}
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	actx := ctx
	if c.opt.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.opt.Timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("request to %s: %w", c.url, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.opt.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.opt.APIKey)
	}
	start := time.Now()
	hresp, err := c.http.Do(hreq)
	if err != nil {
		return nil, c.transportError(ctx, actx, err)
	}
	defer hresp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(hresp.Body, 64<<20))
	if err != nil {
		return nil, c.transportError(ctx, actx, err)
	}
	c.log.Debug("judge call", "url", c.url, "status", hresp.StatusCode, "format", format, "took", time.Since(start).Round(time.Millisecond), "bytes", len(raw))
	if hresp.StatusCode != http.StatusOK {
		return nil, &StatusError{Status: hresp.StatusCode, Message: c.redact(errorMessage(raw)), RetryAfter: parseRetryAfter(hresp.Header, time.Now())}
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return nil, fmt.Errorf("endpoint answered 200 with a body that is not a chat completion: %v", err)
	}
	if len(cr.Error) > 0 && string(cr.Error) != "null" {
		// Some servers report failures inside a 200; treat them as a server error.
		return nil, &StatusError{Status: http.StatusBadGateway, Message: c.redact(errorMessage(raw))}
	}
	if len(cr.Choices) == 0 {
		return nil, errors.New("endpoint answered 200 without any choice")
	}
	ch := cr.Choices[0]
	out := &Response{FinishReason: ch.FinishReason}
	switch {
	case ch.Message.Content != nil:
		out.Content = *ch.Message.Content
	case ch.Message.Refusal != "":
		out.Content = ch.Message.Refusal
	}
	if cr.Usage != nil {
		out.InputTokens, out.OutputTokens = cr.Usage.PromptTokens, cr.Usage.CompletionTokens
	}
	return out, nil
}

// transportError words a failure to get an answer at all, telling an
// attempt's timeout apart from the caller's cancellation.
func (c *OpenAI) transportError(ctx, actx context.Context, err error) error {
	if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer from %s within %s", c.url, c.opt.Timeout)
	}
	return errors.New(c.redact(err.Error()))
}

// errorMessage extracts the endpoint's message from an error body:
// {"error": {"message": ...}} (OpenAI, vLLM, Gemini), {"error": "..."}
// (Ollama), or the body itself, clipped.
func errorMessage(body []byte) string {
	var doc struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &doc) == nil && len(doc.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(doc.Error, &obj) == nil && obj.Message != "":
			return trace.Clip(obj.Message, 500)
		case json.Unmarshal(doc.Error, &s) == nil && s != "":
			return trace.Clip(s, 500)
		}
	}
	msg := strings.TrimSpace(string(body))
	if msg == "" {
		return "(no message)"
	}
	return trace.Clip(trace.NormalizeSpace(msg), 500)
}

// redact removes the API key from text that came from the endpoint: a
// server that echoes the request must not make the key appear in an error
// message, a log or the database.
func (c *OpenAI) redact(s string) string {
	if c.opt.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.opt.APIKey, "[redacted]")
}

// parseRetryAfter reads a response's Retry-After header: seconds (whole or, as
// some servers send, fractional) or an HTTP date. A date is taken from the
// response's own Date, when it has one, rather than this machine's clock
// (now), so that a clock minutes apart from the endpoint's neither skips
// the pause nor makes it minutes longer. It returns 0 when there is no
// pause to take, and at most retryAfterCeiling, which is longer than any cap.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		switch {
		case !(secs > 0): // also NaN
			return 0
		case secs >= retryAfterCeiling.Seconds():
			return retryAfterCeiling
		}
		return time.Duration(secs * float64(time.Second))
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date
	}
	if !at.After(now) {
		return 0
	}
	return min(at.Sub(now), retryAfterCeiling)
}

// retryAfterCeiling bounds a Retry-After as read, so that an absurd one (10^30
// seconds) stays a duration longer than any cap rather than overflowing.
const retryAfterCeiling = 1000 * 24 * time.Hour
