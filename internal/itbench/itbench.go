// Package itbench is ITBench's vocabulary, shared by the formats that read
// its runs, the detectors that check them and the scorer that grades them:
// the file a Zero agent must write its diagnosis to, the official scorer's
// verdict file, and which task a run was given.
package itbench

import "strings"

// System is the system recorded on runs of ITBench's Zero SRE agent: the
// runs ITBench ground truth can grade.
const System = "itbench-zero"

// AnswerFile is the file ITBench's Zero agent must write its diagnosis to.
const AnswerFile = "agent_output.json"

// RemediationFile is the file a Zero remediation run writes its plan to.
const RemediationFile = "agent_remediation.json"

// JudgeFile holds the official ITBench scorer's verdict on a run, in the
// published trajectories.
const JudgeFile = "judge_output.json"

// OfficialSource is the outcome source of the official scorer's verdicts.
const OfficialSource = "itbench-official"

// Task is the kind of work a run was asked to do: only a diagnosis can be
// graded against root-cause ground truth.
type Task string

const (
	// Diagnosis: find the entities that caused an incident (the answer
	// file's "entities").
	Diagnosis Task = "diagnosis"
	// Remediation: write a plan to fix an incident already diagnosed.
	Remediation Task = "remediation"
	// Other: any other request.
	Other Task = "other"
)

// Scored says whether root-cause ground truth can grade a run of this task.
func (k Task) Scored() bool { return k == Diagnosis }

// Why says, for a task ground truth cannot grade, why its run is left
// unscored.
func (k Task) Why() string {
	switch k {
	case Remediation:
		return "a remediation task (a plan to fix an incident already diagnosed): root-cause ground truth does not grade it"
	case Other:
		return "not a diagnosis task: its prompt asks for no root-cause diagnosis, so root-cause ground truth does not grade it"
	}
	return ""
}

// ClassifyTask reads a run's task from its prompt (the run's own request,
// which Zero's remediation runs send under standing instructions that
// describe the diagnosis). A prompt that asks for a remediation plan is a
// remediation, whatever else it mentions; one that asks for the answer file
// or a root-cause diagnosis of an incident is a diagnosis; anything else is
// other. An empty prompt counts as a diagnosis, the only task ITBench's SRE
// runs had before remediation was added, so that runs recorded without
// their prompt are still scored.
func ClassifyTask(prompt string) Task {
	p := strings.ToLower(prompt)
	switch {
	case strings.TrimSpace(p) == "":
		return Diagnosis
	case strings.Contains(p, "remediation plan") || strings.Contains(p, RemediationFile):
		return Remediation
	case strings.Contains(p, AnswerFile) || strings.Contains(p, "root cause") || strings.Contains(p, "root-cause") ||
		strings.Contains(p, "diagnos") && strings.Contains(p, "incident"):
		return Diagnosis
	}
	return Other
}
