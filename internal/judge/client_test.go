package judge

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/judge/judgetest"
)

var ask = Request{Model: "fake-model", Messages: []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}}}

func TestClientRetriesThenSucceeds(t *testing.T) {
	tests := []struct {
		name    string
		script  func(judgetest.Call) judgetest.Reply
		calls   int
		minWait time.Duration
	}{
		{"500s", func(c judgetest.Call) judgetest.Reply {
			if c.N <= 2 {
				return judgetest.Reply{Status: 500 + c.N, Body: "upstream trouble"}
			}
			return judgetest.Reply{Content: "ok"}
		}, 3, 0},
		{"timeout", func(c judgetest.Call) judgetest.Reply {
			if c.N == 1 {
				return judgetest.Reply{Content: "too late", Delay: 5 * time.Second}
			}
			return judgetest.Reply{Content: "ok"}
		}, 2, time.Second},
		{"slow but within the timeout", func(c judgetest.Call) judgetest.Reply {
			return judgetest.Reply{Content: "ok", Delay: 200 * time.Millisecond}
		}, 1, 200 * time.Millisecond},
		{"error inside a 200", func(c judgetest.Call) judgetest.Reply {
			if c.N == 1 {
				return judgetest.Reply{Body: `{"error":{"message":"model overloaded"}}`}
			}
			return judgetest.Reply{Content: "ok"}
		}, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.NewServer(tt.script)
			defer srv.Close()
			// A timeout well above the slow case's delay, so that a loaded
			// machine does not turn it into a retry.
			c := testClient(srv, func(o *ClientOptions) { o.Timeout = time.Second })
			start := time.Now()
			resp, err := c.Complete(context.Background(), ask)
			if err != nil || resp.Content != "ok" {
				t.Fatalf("resp %+v, err %v", resp, err)
			}
			if n := len(srv.Calls()); n != tt.calls {
				t.Errorf("%d calls, want %d", n, tt.calls)
			}
			if took := time.Since(start); took < tt.minWait {
				t.Errorf("took %s, want at least %s", took, tt.minWait)
			}
		})
	}
}

func TestClientGivesUp(t *testing.T) {
	srv := judgetest.NewServer(func(judgetest.Call) judgetest.Reply { return judgetest.Reply{Status: 503, Body: "down"} })
	defer srv.Close()
	_, err := testClient(srv, nil).Complete(context.Background(), ask)
	if err == nil || !strings.Contains(err.Error(), "after 4 attempts: endpoint answered 503 Service Unavailable: down") || errors.Is(err, ErrFatal) {
		t.Fatalf("err = %v", err)
	}
	if n := len(srv.Calls()); n != 4 {
		t.Errorf("%d calls, want 4 (1 + 3 retries)", n)
	}
	// A pause longer than the client accepts fails at once.
	srv.Reset()
	srv.Script = func(judgetest.Call) judgetest.Reply {
		return judgetest.Reply{Status: 429, Header: map[string]string{"Retry-After": "3600"}, Body: "quota"}
	}
	_, err = testClient(srv, nil).Complete(context.Background(), ask)
	if err == nil || !strings.Contains(err.Error(), "asks to wait 1h0m0s") || len(srv.Calls()) != 1 {
		t.Fatalf("err = %v after %d calls", err, len(srv.Calls()))
	}
}

func TestClientFatalStatusesStopAtOnce(t *testing.T) {
	for _, status := range []int{401, 403, 404} {
		srv := judgetest.NewServer(func(judgetest.Call) judgetest.Reply {
			return judgetest.Reply{Status: status, Body: `{"error":{"message":"no"}}`}
		})
		_, err := testClient(srv, nil).Complete(context.Background(), ask)
		if !errors.Is(err, ErrFatal) || len(srv.Calls()) != 1 {
			t.Errorf("%d: err %v after %d calls", status, err, len(srv.Calls()))
		}
		srv.Close()
	}
	// A 400 that is not about the response format is neither retried nor fatal.
	srv := judgetest.NewServer(func(judgetest.Call) judgetest.Reply {
		return judgetest.Reply{Status: 400, Body: `{"error":"prompt is too long: 200000 tokens"}`}
	})
	defer srv.Close()
	_, err := testClient(srv, nil).Complete(context.Background(), ask)
	if err == nil || errors.Is(err, ErrFatal) || !strings.Contains(err.Error(), "prompt is too long") || len(srv.Calls()) != 1 {
		t.Errorf("err %v after %d calls", err, len(srv.Calls()))
	}
}

func TestClientFallsBackFromRejectedResponseFormat(t *testing.T) {
	srv := judgetest.NewServer(func(c judgetest.Call) judgetest.Reply {
		switch c.FormatType() {
		case "json_schema":
			return judgetest.Reply{Status: 400, Body: `{"error":{"message":"response_format json_schema is not supported by this model"}}`}
		case "json_object":
			return judgetest.Reply{Status: 422, Body: `{"error":"unsupported value for response_format"}`}
		}
		return judgetest.Reply{Content: "ok"}
	})
	defer srv.Close()
	c := testClient(srv, nil)
	for range 2 {
		if _, err := c.Complete(context.Background(), ask); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, call := range srv.Calls() {
		got = append(got, call.FormatType())
	}
	if strings.Join(got, ",") != "json_schema,json_object,," || c.Format() != FormatNone {
		t.Errorf("formats asked for: %q, now %s", got, c.Format())
	}
	// The schema sent is strict and requires every mode.
	srv.Reset()
	srv.Script = func(judgetest.Call) judgetest.Reply { return judgetest.Reply{Content: "ok"} }
	if _, err := testClient(srv, nil).Complete(context.Background(), ask); err != nil {
		t.Fatal(err)
	}
	rf := string(srv.Calls()[0].ResponseFormat)
	if !strings.Contains(rf, `"strict":true`) || !strings.Contains(rf, `"FM-3.3"`) || !strings.Contains(rf, `"additionalProperties":false`) {
		t.Errorf("response_format: %s", rf)
	}
}

func TestClientSendsKeyAndNeverEchoesIt(t *testing.T) {
	srv := judgetest.NewServer(func(c judgetest.Call) judgetest.Reply {
		return judgetest.Reply{Status: 400, Body: `{"error":{"message":"bad request from ` + c.Auth + `"}}`}
	})
	defer srv.Close()
	_, err := testClient(srv, nil).Complete(context.Background(), ask)
	if srv.Calls()[0].Auth != "Bearer sk-test-secret" {
		t.Errorf("Authorization: %q", srv.Calls()[0].Auth)
	}
	if err == nil || strings.Contains(err.Error(), "sk-test-secret") || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("err = %v", err)
	}
}

func TestClientRateLimit(t *testing.T) {
	srv := judgetest.NewServer(func(judgetest.Call) judgetest.Reply { return judgetest.Reply{Content: "ok"} })
	defer srv.Close()
	c := testClient(srv, func(o *ClientOptions) { o.RequestsPerMinute = 600 }) // one every 100 ms
	start := time.Now()
	for range 4 {
		if _, err := c.Complete(context.Background(), ask); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took < 280*time.Millisecond {
		t.Errorf("4 calls at 600/min took %s", took)
	}
}

func TestClientCancelled(t *testing.T) {
	srv := judgetest.NewServer(func(judgetest.Call) judgetest.Reply { return judgetest.Reply{Content: "ok", Delay: time.Minute} })
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := testClient(srv, func(o *ClientOptions) { o.Timeout = time.Minute }).Complete(ctx, ask)
	if !errors.Is(err, context.DeadlineExceeded) || len(srv.Calls()) != 1 {
		t.Errorf("err %v after %d calls", err, len(srv.Calls()))
	}
}

// TestClientHonoursRetryAfter: a 429 or 503 with Retry-After, in seconds
// or as a date, is retried after the pause it asks for (plus at most a
// tenth, the jitter), one without after the exponential backoff; a pause
// past the cap fails the call at once. The pauses are recorded, not taken.
func TestClientHonoursRetryAfter(t *testing.T) {
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name     string
		status   int
		header   map[string]string
		calls    int
		from, to time.Duration // the pause taken, when there is one
		err      string
	}{
		{"429 seconds", 429, map[string]string{"Retry-After": "2"}, 2, 2 * time.Second, 2200 * time.Millisecond, ""},
		{"503 seconds", 503, map[string]string{"Retry-After": "7"}, 2, 7 * time.Second, 7700 * time.Millisecond, ""},
		{"429 fractional seconds", 429, map[string]string{"Retry-After": "0.5"}, 2, 500 * time.Millisecond, 550 * time.Millisecond, ""},
		{"429 date, from the response's Date", 429, map[string]string{
			"Date": date.Format(http.TimeFormat), "Retry-After": date.Add(30 * time.Second).Format(http.TimeFormat)}, 2, 30 * time.Second, 33 * time.Second, ""},
		{"503 date already past", 503, map[string]string{
			"Date": date.Format(http.TimeFormat), "Retry-After": date.Add(-time.Minute).Format(http.TimeFormat)}, 2, 0, 10 * time.Millisecond, ""},
		{"429 without Retry-After: backoff", 429, nil, 2, 0, 10 * time.Millisecond, ""},
		{"429 past the cap", 429, map[string]string{"Retry-After": "61"}, 1, 0, 0, "asks to wait 1m1s before calling again, longer than 1m0s"},
		{"429 absurd", 429, map[string]string{"Retry-After": "1e30"}, 1, 0, 0, "longer than 1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.NewServer(func(c judgetest.Call) judgetest.Reply {
				if c.N == 1 {
					return judgetest.Reply{Status: tt.status, Header: tt.header, Body: `{"error":{"message":"slow down"}}`}
				}
				return judgetest.Reply{Content: "ok"}
			})
			defer srv.Close()
			c := testClient(srv, func(o *ClientOptions) { o.MaxRetryAfter = time.Minute })
			var pauses []time.Duration
			c.sleep = func(_ context.Context, d time.Duration) error {
				pauses = append(pauses, d)
				return nil
			}
			resp, err := c.Complete(context.Background(), ask)
			if n := len(srv.Calls()); n != tt.calls {
				t.Errorf("%d calls, want %d", n, tt.calls)
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || len(pauses) > 0 {
					t.Fatalf("err %v after pauses %v, want %q at once", err, pauses, tt.err)
				}
				return
			}
			if err != nil || resp.Content != "ok" {
				t.Fatalf("resp %+v, err %v", resp, err)
			}
			if len(pauses) != 1 || pauses[0] < tt.from || pauses[0] > tt.to {
				t.Errorf("pauses %v, want one of %s to %s", pauses, tt.from, tt.to)
			}
		})
	}
}

// TestClientRetryAfterCancelled: the caller's cancellation ends the pause
// and the call, with no further attempt.
func TestClientRetryAfterCancelled(t *testing.T) {
	srv := judgetest.NewServer(func(judgetest.Call) judgetest.Reply {
		return judgetest.Reply{Status: 429, Header: map[string]string{"Retry-After": "3"}, Body: "slow down"}
	})
	defer srv.Close()
	c := testClient(srv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	c.sleep = func(ctx context.Context, d time.Duration) error {
		cancel() // as an interrupt during the pause
		return Sleep(ctx, d)
	}
	if _, err := c.Complete(ctx, ask); !errors.Is(err, context.Canceled) || len(srv.Calls()) != 1 {
		t.Errorf("err %v after %d calls, want context.Canceled after 1", err, len(srv.Calls()))
	}
}

func TestSleep(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"elapsed", context.Background(), time.Millisecond, nil},
		{"cancelled before an hour", cancelled, time.Hour, context.Canceled},
	} {
		if err := Sleep(tc.ctx, tc.d); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	tests := []struct {
		retryAfter, date string
		want             time.Duration
	}{
		{"", "", 0},
		{"7", "", 7 * time.Second},
		{" 7 ", "", 7 * time.Second},
		{"0.5", "", 500 * time.Millisecond},
		{"0", "", 0},
		{"-3", "", 0},
		{"NaN", "", 0},
		{"1e30", "", retryAfterCeiling},
		{"soon", "", 0},
		{at(90 * time.Second), "", 90 * time.Second},
		{at(-time.Hour), "", 0},
		// The endpoint's clock is an hour behind this one: its Date, not
		// this clock, says how far off its date is.
		{at(-time.Hour + 90*time.Second), at(-time.Hour), 90 * time.Second},
		{at(90 * time.Second), "not a date", 90 * time.Second},
		{at(100_000 * time.Hour), "", retryAfterCeiling},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.retryAfter != "" {
			h.Set("Retry-After", tt.retryAfter)
		}
		if tt.date != "" {
			h.Set("Date", tt.date)
		}
		if got := parseRetryAfter(h, now); got != tt.want {
			t.Errorf("Retry-After %q, Date %q: %s, want %s", tt.retryAfter, tt.date, got, tt.want)
		}
	}
}

func TestChatURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:11434/v1":                  "http://localhost:11434/v1/chat/completions",
		"https://api.openai.com/v1/":                 "https://api.openai.com/v1/chat/completions",
		"https://x.example/openai/chat/completions/": "https://x.example/openai/chat/completions",
	} {
		if got := chatURL(in); got != want {
			t.Errorf("chatURL(%q) = %q", in, got)
		}
	}
}

// A client's unset waits are the defaults; those set are kept.
func TestNewOpenAIDefaultsWaits(t *testing.T) {
	c := NewOpenAI(ClientOptions{MaxBackoff: time.Second})
	d := DefaultClientOptions
	if c.opt.MinBackoff != d.MinBackoff || c.opt.MaxBackoff != time.Second || c.opt.MaxRetryAfter != d.MaxRetryAfter {
		t.Errorf("waits %v, %v, %v", c.opt.MinBackoff, c.opt.MaxBackoff, c.opt.MaxRetryAfter)
	}
}
