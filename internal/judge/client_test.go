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
		{"429 with Retry-After", func(c judgetest.Call) judgetest.Reply {
			if c.N == 1 {
				return judgetest.Reply{Status: 429, Header: map[string]string{"Retry-After": "1"}, Body: `{"error":{"message":"slow down"}}`}
			}
			return judgetest.Reply{Content: "ok"}
		}, 2, time.Second},
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

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := map[string]time.Duration{
		"":     0,
		"7":    7 * time.Second,
		"0.5":  500 * time.Millisecond,
		"-3":   0,
		"soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
	}
	for in, want := range tests {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
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
