package discover

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/internal/judge/judgetest"
)

func TestParseNaming(t *testing.T) {
	for _, c := range []struct {
		answer, problem, code string
	}{
		{`{"name": "Answer file broken", "description": "The agent writes invalid JSON.", "code": "FM-3.1"}`, "", "FM-3.1"},
		{"```json\n{\"name\": \"n\", \"description\": \"d\", \"code\": \"3.3\"}\n```", "", "FM-3.3"},
		{`{"name": "n", "description": "d", "code": "NEW"}`, "", "new"},
		{`{"name": "n", "description": "d", "code": "SYS-1"}`, "neither a MAST mode", ""},
		{`{"name": "n", "description": "d", "code": "FM-9.9"}`, "neither a MAST mode", ""},
		{`{"name": "", "description": "d", "code": "new"}`, `no "name"`, ""},
		{`{"name": "n", "code": "new"}`, `no "description"`, ""},
		{`{"name": "n", "description": "d"}`, `no "code"`, ""},
		{`{"name": "n", "description": "d", "code": "new", "confidence": 1}`, `a field "confidence"`, ""},
		{`{"name": "n", "description": "d", "code": "new"} and more`, "text after", ""},
		{`The pattern is a broken answer file.`, "not a JSON object", ""},
		{`{"name": "` + strings.Repeat("n", 81) + `", "description": "d", "code": "new"}`, "longer than 80", ""},
	} {
		n, problem := parseNaming(c.answer)
		switch {
		case c.problem == "" && (problem != "" || n.Code != c.code):
			t.Errorf("%s: %q %+v", c.answer, problem, n)
		case c.problem != "" && !strings.Contains(problem, c.problem):
			t.Errorf("%s: problem %q, want %q", c.answer, problem, c.problem)
		}
	}
}

func testPatterns() []*Pattern {
	mk := func(id string) *Pattern {
		return &Pattern{ID: id, Kind: KindError, Key: "shell", Template: "jq: parse error: Invalid literal at line <num>, column <num>",
			Failed: analyze.Proportion{K: 8, N: 12}, Succeeded: analyze.Proportion{K: 2, N: 20},
			Quotes: []Quote{{Trace: "t1", Step: 4, Text: "jq: parse error: Invalid literal at line 2, column 3"}}}
	}
	return []*Pattern{mk("a"), mk("b"), mk("c")}
}

// Each pattern gets one call; an invalid answer a second with what was
// wrong with it; two invalid answers, or an endpoint that fails, leave the
// pattern named as failed.
func TestNamePatterns(t *testing.T) {
	good := `{"name": "Invalid answer JSON", "description": "The agent's answer file does not parse.", "code": "FM-3.1"}`
	srv := judgetest.NewServer(func(c judgetest.Call) judgetest.Reply {
		switch c.N {
		case 1:
			return judgetest.Reply{Content: good}
		case 2:
			return judgetest.Reply{Content: `{"name": "x", "description": "y", "code": "FM-7.7"}`}
		case 3:
			return judgetest.Reply{Content: strings.ReplaceAll(good, "FM-3.1", "new")}
		case 4, 5:
			return judgetest.Reply{Content: "I think it is FM-3.1."}
		}
		return judgetest.Reply{Status: http.StatusBadRequest, Body: `{"error":{"message":"model not found"}}`}
	})
	defer srv.Close()
	client := judge.NewOpenAI(judge.ClientOptions{BaseURL: srv.URL(), Format: judge.FormatObject, Retries: 0})
	ps := append(testPatterns(), testPatterns()[0])
	if err := NamePatterns(context.Background(), client, ps, NameOptions{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if n := ps[0].Naming; n.Status != Named || n.Name != "Invalid answer JSON" || n.Code != "FM-3.1" || n.Calls != 1 {
		t.Errorf("first: %+v", n)
	}
	if n := ps[1].Naming; n.Status != Named || n.Code != "new" || n.Calls != 2 {
		t.Errorf("second, named on the retry: %+v", n)
	}
	if n := ps[2].Naming; n.Status != NamingError || n.Calls != 2 || !strings.Contains(n.Error, "not a JSON object") || n.Name != "" {
		t.Errorf("third, invalid twice: %+v", n)
	}
	if n := ps[3].Naming; n.Status != NamingError || n.Calls != 1 || !strings.Contains(n.Error, "model not found") {
		t.Errorf("fourth, the endpoint failed: %+v", n)
	}
	calls := srv.Calls()
	if len(calls) != 6 {
		t.Fatalf("%d calls", len(calls))
	}
	// The retry shows the model its answer and what was wrong with it.
	retry := calls[2].Messages
	if len(retry) != 4 || retry[2].Role != "assistant" || !strings.Contains(retry[3].Content, `"FM-7.7", which is neither a MAST mode`) {
		t.Errorf("the retry: %+v", retry)
	}
	if user := calls[0].User(); !strings.Contains(user, "Signature: shell: jq: parse error") || !strings.Contains(user, "In 8 of 12 failed runs") ||
		!strings.Contains(user, "Quote from a run: jq: parse error: Invalid literal at line 2, column 3") {
		t.Errorf("the prompt: %s", user)
	}
	if sys := calls[0].Messages[0].Content; !strings.Contains(sys, "FM-3.3 Incorrect verification") {
		t.Errorf("the instructions list no modes: %s", sys)
	}
}
