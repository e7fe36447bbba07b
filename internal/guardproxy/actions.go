package guardproxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/faultline/faultline/guard"
)

// GuardHeader names, on a response, each decision that annotated it.
const GuardHeader = "X-Faultline-Guard"

// injectPrefix opens the message an inject adds, so that the agent (and
// whoever reads its log) knows where it came from.
const injectPrefix = "faultline guard: "

// describe is how a decision is named on a response: its rule, mode and
// action.
func describe(d guard.Decision) string {
	return fmt.Sprintf("rule=%s mode=%s action=%s", d.Rule, d.Mode, d.Action)
}

// annotate names on a response the decisions that annotate (every action
// from annotate up does).
func annotate(h http.Header, ds []guard.Decision) {
	for _, d := range ds {
		if d.Action >= guard.Annotate {
			h.Add(GuardHeader, describe(d))
		}
	}
}

// injection is the system message that delivers inject decisions, each
// message once.
func injection(ds []guard.Decision) json.RawMessage {
	var texts []string
	for _, d := range ds {
		if !slices.Contains(texts, d.Message) {
			texts = append(texts, d.Message)
		}
	}
	return textMessage("system", injectPrefix+strings.Join(texts, "\n\n"))
}

// textMessage is a message of role and text, as both APIs take one: a chat
// message, a Responses API input item.
func textMessage(role, text string) json.RawMessage {
	raw, _ := json.Marshal(struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}{role, text})
	return raw
}

// gate returns whether a model's answer was stopped at a finish gate: a
// decision of a gate rule that injects.
func gate(ds []guard.Decision) bool {
	return slices.ContainsFunc(ds, func(d guard.Decision) bool { return d.Finishing && d.Action == guard.Inject })
}

// blocked is the error a block answers with.
func blocked(d *guard.Decision) apiErrorBody {
	return apiErrorBody{Message: d.Message, Type: "faultline_guard", Code: d.Rule}
}

// refuse answers a request of a blocked session.
func refuse(w http.ResponseWriter, d *guard.Decision) {
	writeErrorCode(w, http.StatusForbidden, blocked(d))
}
