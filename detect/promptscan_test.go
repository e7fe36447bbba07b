package detect

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// promptSamples are prompts and pieces of them the rules must read as
// their plain regular expressions do.
var promptSamples = []string{
	"Write your diagnosis to: /home/zero/runs/x/agent_output.json\nValidate the JSON using `jq` before you finish.",
	"You MUST NOT read or use ground_truth.yaml. NEVER read\nthe file ground_truth.yaml, and don't open ./meta.json either.",
	"Do not run `kubectl apply`. NEVER use the curl command. Don't call helm tool.",
	"Your incident data is located in these directories (READ-ONLY):\n  - /data/a\n  - `/data/b`\n\nYour working directory (for writing output, code, etc.) is: /work/out.",
	"Limit the explanation fields (`reasoning`, `evidence`) to no more than 2 sentences each. Keep `summary` to No More Than one sentence.",
	"NEVER output anything other than the final JSON. Return only the required JSON structure.",
	"rewrite your notes to x.json; homework directory: /x; undo not run `x`; checkers jq",
	"Write the report to:\n\n   **/out/answer.yaml**",
	"muſt not read secret.yaml; chec\u212a with jq; neveR output anything else than json",
	"data.json is available here: /d\nstored data located at /e",
	"Let me check the pods. Now, I will run kubectl get pods -n otel-demo; next i read app.log",
	"Check the logs of ad first. Then I check the outlet metrics; nowhere else",
	"I'LL LOOK AT IT. I am going to grep; I’ll scan. runbook says let's",
	"chec\u212a the frontend logs; \u212aeep going, lets see, i'm going to query",
	"",
}

// intentReference is intentPhrase and intentVerb as one expression.
var intentReference = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(intentPhrase.rule().String() + "|" + intentVerb().String())
})

// The scanners find what the rules as written find, match for match.
func TestPromptRulesAgreeWithTheirExpressions(t *testing.T) {
	for _, text := range promptSamples {
		checkPromptRules(t, text)
	}
}

func FuzzPromptRules(f *testing.F) {
	for _, text := range promptSamples {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkPromptRules(t, text)
	})
}

func checkPromptRules(t *testing.T, text string) {
	t.Helper()
	p := newPrompt(text)
	for name, rule := range map[string]wordRule{
		"output": outputRule, "validator": validatorRule, "forbidden": forbiddenRule,
		"banned": bannedRule, "workdir": workDirRule, "json-only": jsonOnlyRule, "intent": intentPhrase,
	} {
		want := rule.rule().FindAllStringSubmatch(text, -1)
		if got := rule.findAll(p, -1); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s rule on %q:\n got %q\nwant %q", name, text, got, want)
		}
		if got, want := rule.find(p), rule.rule().FindStringSubmatch(text); !slices.Equal(got, want) {
			t.Errorf("%s rule, first match on %q:\n got %q\nwant %q", name, text, got, want)
		}
	}
	if got, want := sentenceRule.find(p), sentenceRule.rule().FindStringSubmatch(text); !slices.Equal(got, want) {
		t.Errorf("sentence rule on %q:\n got %q\nwant %q", text, got, want)
	}
	// A sentence's intent, as the two rules in one expression find it.
	want := -1
	if loc := intentReference().FindStringIndex(text); loc != nil {
		want = loc[0]
	}
	if got := intentStart(text); got != want {
		t.Errorf("intent in %q starts at %d, want %d", text, got, want)
	}
	lines, lower := strings.Split(text, "\n"), strings.Split(p.lower, "\n")
	for i, line := range lines {
		if got, want := dataIntro.matches(line, lower[i], p.folded), dataIntro.rule().MatchString(line); got != want {
			t.Errorf("data rule on line %q: %v, want %v", line, got, want)
		}
	}
}
