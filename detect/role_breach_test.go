package detect

import (
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestRoleBreach(t *testing.T) {
	const fence = "```"
	// chat is a Planner, Coder and Tester chat on a stack task whose second
	// step is the Planner's message under test.
	chat := func(planner string) *trace.Trace {
		return build("task Implement a Stack class with tests.", "agent Planner Implement a Stack class with tests.",
			"agent Planner "+planner, "agent Coder Here is my Stack.", "agent Tester I checked it.")
	}
	code := fence + "python\nclass Stack:\n    def push(self, x): self.items.append(x)\n" + fence
	runCases(t, RoleBreach, []detCase{
		{name: "the Coder's output written by the Planner", trace: chat("## Plan\n\n**Coder's output:**\n\n" + code),
			want: [][]int{{1}}, quote: "**Coder's output:**", conf: 0.8},
		{name: "a heading naming the Tester and its report", trace: chat("## Tester — Verification Report\n\nEvery case holds."),
			want: [][]int{{1}}, quote: "## Tester — Verification Report"},
		{name: "a bare name over the implementation", trace: chat("**Coder:**\n\nApproach: keep a list.\n" + code),
			want: [][]int{{1}}, quote: "**Coder:**"},
		{name: "a bare name over first-person text", trace: chat("**Tester:**\nLet me check push and pop."),
			want: [][]int{{1}}, quote: "**Tester:**"},
		{name: "two roles in one message are one finding", trace: chat("### Coder's Implementation\n" + code + "\n### Tester's findings\nAll good."),
			want: [][]int{{1}}, quote: "### Coder's Implementation"},
		{name: "addressing with To", trace: chat("**To Coder:**\nImplement the class.")},
		{name: "a delegation heading", trace: chat("### Delegation to Coder\nImplement the class.")},
		{name: "a request after a dash", trace: chat("**Coder — please implement exactly this:**\n" + code)},
		{name: "instructions for later after a dash", trace: chat("**Tester — once Coder submits, verify:**\n1. push then pop returns the item.")},
		{name: "a name opening a sentence", trace: chat("Coder, please implement the class.\n" + code)},
		{name: "a plan item", trace: chat("1. **Coder** — design the class.\n2. **Tester** — check it.")},
		{name: "a bare name over instructions", trace: chat("**Coder:**\n- implement push\n- implement pop")},
		{name: "a bare name over an address to the agent", trace: chat("**Coder:**\nYou should write it like this:\n" + code)},
		{name: "a checklist for another agent", trace: chat("**Tester checklist for `Stack`:**\n1. push then pop.")},
		{name: "the speaker's own label", trace: chat("## Planner — Task Breakdown\n1. Coder writes the class.")},
		{name: "a quotation of the agent's earlier message", trace: build("task Implement a Stack class.",
			"agent Coder "+code, "agent Planner **Coder's output:**\n"+code+"\nLooks right.", "agent Tester Fine.")},
		{name: "a heading inside code", trace: chat(fence + "python\n# Coder's output\nx = 1\n" + fence)},
		{name: "an agent that never speaks", trace: chat("**Reviewer's report:**\nAll fine.")},
		{name: "the task statement is not the agent's", trace: build("task **Coder's output:**\n"+code, "agent Planner **Coder's output:**\n"+code,
			"agent Coder Here it is.")},
		{name: "one agent alone", trace: build("agent Planner **Coder's output:**\n" + code)},
	})
}
