package synth

import "strings"

// diagnosis is the content of agent_output.json, in the schema AGENTS.md asks for.
type diagnosis struct {
	Entities     []entity      `json:"entities"`
	Propagations []propagation `json:"propagations"`
	Alerts       []alertNote   `json:"alerts_explained"`
}

type entity struct {
	Name      string `json:"name"`
	Cause     bool   `json:"contributing_factor"`
	Reasoning string `json:"reasoning"`
	Evidence  string `json:"evidence"`
}

type propagation struct {
	Source    string `json:"source"`
	Target    string `json:"target"`
	Condition string `json:"condition"`
	Effect    string `json:"effect"`
}

type alertNote struct {
	Alert       string `json:"alert"`
	Explanation string `json:"explanation"`
	Explained   bool   `json:"explained"`
}

// jsonAnswer is d as the file agent_output.json holds it.
func jsonAnswer(d *diagnosis) string { return strings.TrimSuffix(string(indentJSON(d)), "\n") }
