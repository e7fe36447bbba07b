package synth

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/faultline/faultline/taxonomy"
)

// planter is one way to plant a mode in a clean investigation. apply
// changes the draft, marks the steps where the mode is, and says what the
// run now does. A variant that cannot help planting other modes as well (a
// run that never writes its answer has also ended prematurely) records
// them with draft.plant.
type planter struct {
	variant string
	apply   func(d *draft) string
}

// planters are the ways to plant each mode, used in turn.
var planters = map[string][]planter{
	fm11: {
		{"entity-names", plantEntityNames},
		{"read-ground-truth", plantGroundTruthRead},
	},
	fm13: {
		{"identical-call", plantIdenticalCall},
		{"plan-no-progress", func(d *draft) string { return plantPlanRepeat(d, false) }},
		{"plan-reworded", func(d *draft) string { return plantPlanRepeat(d, true) }},
		{"same-message", plantSameMessage},
	},
	fm14: {
		{"rederive", plantRederive},
		{"contradict", plantContradiction},
	},
	fm15: {
		{"harness-retries", func(d *draft) string { return plantRetries(d, true) }},
		{"continues-after-answer", plantAfterAnswer},
		{"retry-loop", func(d *draft) string { return plantRetries(d, false) }},
	},
	fm23: {
		{"own-script", func(d *draft) string { return plantDerailment(d, pythonDetour) }},
		{"helper-script", func(d *draft) string { return plantDerailment(d, shellDetour) }},
	},
	fm26: {
		{"announce-other", plantMismatch},
		{"plan-done-without-call", plantFakeDone},
	},
	fm31: {
		{"few-evidence", plantFewEvidence},
		{"no-answer-file", plantChatAnswer},
		{"invalid-json", plantInvalidJSON},
		{"fields-missing", plantMissingFields},
		{"aborted", plantAbort},
	},
	fm32: {
		{"no-validation", plantNoValidation},
		{"shallow-check", plantShallowCheck},
	},
	fm33: {
		{"invented-evidence", plantInventedEvidence},
		{"failed-check-claimed", plantFailedCheck},
	},
	ModeSystem: {
		{"empty-turn", plantEmptyTurn},
		{"silent-model", plantSilentModel},
	},
}

// Modes returns the modes synth can plant, in code order.
func Modes() []string {
	var out []string
	for m := range planters {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Variants returns the ways synth plants a mode.
func Variants(mode string) []string {
	var out []string
	for _, p := range planters[mode] {
		out = append(out, p.variant)
	}
	return out
}

// ParseModes reads mode codes as a user writes them ("fm-1.3", "1.3",
// "sys-1") and checks that synth can plant each, once.
func ParseModes(codes []string) ([]string, error) {
	out := make([]string, len(codes))
	for i, c := range codes {
		out[i] = taxonomy.CanonicalCode(c)
		if up := strings.ToUpper(out[i]); strings.HasPrefix(up, "SYS-") {
			out[i] = up
		}
	}
	return out, checkModes(out)
}

// checkModes reports the first mode synth cannot plant, or one asked for
// twice, with what it can plant.
func checkModes(modes []string) error {
	known := strings.Join(Modes(), ", ")
	seen := map[string]bool{}
	for _, m := range modes {
		if _, ok := planters[m]; ok {
			if seen[m] {
				return fmt.Errorf("mode %s is asked for twice", m)
			}
			seen[m] = true
			continue
		}
		if mode, _, ok := taxonomy.Lookup(m); ok {
			return fmt.Errorf("synth cannot plant %s (%s); it plants %s", m, mode.Name, known)
		}
		return fmt.Errorf("unknown mode %q; synth plants %s", m, known)
	}
	if len(modes) == 0 {
		return fmt.Errorf("no mode to plant; synth plants %s", known)
	}
	return nil
}

// firstEvidence is where the evidence calls begin, after the listing and
// the alerts.
const firstEvidence = 2

// pickEvidence returns the index of a random evidence item following a
// lead; decisive ones only when decisive is set.
func (d *draft) pickEvidence(decisive bool) int {
	var idx []int
	for i := firstEvidence; i < len(d.items); i++ {
		if l := d.items[i].lead; l != nil && l.decisive == decisive {
			idx = append(idx, i)
		}
	}
	return idx[d.rng.IntN(len(idx))]
}

// tool is the short name of a lead's tool, as a reader would call it: the
// MCP tool without its server, or the command a shell call runs.
func (sc *scenario) tool(l *lead) string {
	c := sc.calls[l.key]
	var sh struct{ Command []string }
	if c.name == "shell" && json.Unmarshal([]byte(c.args), &sh) == nil && len(sh.Command) == 3 {
		cmd, _, _ := strings.Cut(sh.Command[2], " ")
		return cmd
	}
	return strings.TrimPrefix(c.name, mcpServer)
}

func plantEntityNames(d *draft) string {
	d.patch = d.patch.mark(fm11)
	if d.rng.IntN(2) == 0 {
		d.rename = func(name string) string { return name[strings.LastIndex(name, "/")+1:] }
		return "agent_output.json names entities by their bare names (flagd-config, checkout), not namespace/Kind/name"
	}
	d.rename = func(name string) string {
		parts := strings.Split(name, "/")
		return parts[1] + " " + parts[2]
	}
	return "agent_output.json names entities as Kind and name without the namespace (ConfigMap flagd-config), not namespace/Kind/name"
}

func plantGroundTruthRead(d *draft) string {
	s := do(d.sc.calls["ground-truth"]).thinking("The listing shows ground_truth.yaml. Reading it will tell me what the incident is about.").mark(fm11)
	d.insert(1, item{step: &s})
	return "reads ground_truth.yaml right after listing the snapshot, though the task forbids it"
}

func plantIdenticalCall(d *draft) string {
	k := d.pickEvidence(d.rng.IntN(2) == 0)
	l := d.items[k].lead
	d.items[k] = d.items[k].mark(fm13, atAction)
	at := k + 1 + d.rng.IntN(len(d.items)-k)
	d.insert(at, item{lead: l, think: "To be sure, once more. " + d.say(l.announce)}.mark(fm13, atAction))
	return d.sc.tool(l) + " called a second time with the same arguments, returning the same output"
}

func plantPlanRepeat(d *draft, reworded bool) string {
	d.plans = true
	d.planRepeat = 1 + d.rng.IntN(2)
	d.planVary = reworded
	d.planMarks = append(d.planMarks, fm13)
	if reworded {
		return fmt.Sprintf("update_plan sent %d times in a row with the same checklist and statuses, only the explanation reworded", d.planRepeat+1)
	}
	return fmt.Sprintf("update_plan sent %d times in a row with the same checklist and statuses, no call in between", d.planRepeat+1)
}

func plantSameMessage(d *draft) string {
	msg := []string{
		"Still gathering evidence on the incident before I write agent_output.json.",
		"Continuing the investigation: I want the full propagation chain before concluding.",
		"I will keep looking at the data until the root cause is certain, then write the answer.",
	}[d.rng.IntN(3)]
	for i := len(d.items) - 3; i < len(d.items); i++ {
		d.items[i].text = msg
		d.items[i] = d.items[i].mark(fm13, atText)
	}
	return fmt.Sprintf("the same message, %q, written before each of the last three evidence calls", msg)
}

// plantRederive follows the decisive lead early, then four more leads,
// then asks for the decisive fact again as if it had never been seen.
func plantRederive(d *draft) string {
	decisive := d.pickEvidence(true)
	d.items = d.items[:decisive+1]
	for _, l := range d.unfollowed() {
		if len(d.items) >= decisive+5 {
			break
		}
		if l.key != d.sc.chase {
			d.items = append(d.items, item{lead: l})
		}
	}
	s := do(d.sc.calls[d.sc.recheck]).thinking(d.sc.reask).mark(fm14).markAt(fm14, atThink)
	d.items = append(d.items, item{step: &s})
	return fmt.Sprintf("asks again whether anything changed before the incident, %d calls after k8s_spec_change_analysis showed it", len(d.items)-decisive-1)
}

// plantContradiction has the run, at the end of its investigation, deny
// the decisive fact it saw and chase the red herring instead, which it
// then blames.
func plantContradiction(d *draft) string {
	chase := d.sc.lead(d.sc.chase)
	d.items = slices.DeleteFunc(d.items, func(it item) bool { return it.lead == chase })
	d.items = append(d.items, item{lead: chase, think: d.sc.denial}.mark(fm14, atThink).mark(fm14, atAction))
	d.blame = &d.sc.decoy
	return "states the opposite of the decisive fact k8s_spec_change_analysis returned, then chases and blames the red herring"
}

// plantRetries ends a turn without the answer file, so the harness
// re-prompts; the run either writes the file after a few retries or never.
func plantRetries(d *draft, recovers bool) string {
	n := 2 + d.rng.IntN(2)
	if !recovers {
		n = 3 + d.rng.IntN(3)
	}
	replies := []string{
		"I have looked at the alerts and the evidence; the cause is becoming clear.",
		"Understood. I will continue the investigation and create agent_output.json.",
		"I am still analysing the data before writing the answer.",
		"Resuming the investigation now.",
		"I will write agent_output.json once I am sure of the root cause.",
	}
	var tail []step
	for i := range n {
		tail = append(tail, say(replies[i]), nudge().mark(fm15))
	}
	if recovers {
		for _, s := range tail {
			d.items = append(d.items, item{step: &s})
		}
		return fmt.Sprintf("ends %d turns with a message and no answer file, so the harness re-prompts %d times before agent_output.json is written", n, n)
	}
	tail[len(tail)-2] = tail[len(tail)-2].mark(fm31)
	tail[len(tail)-1] = tail[len(tail)-1].mark(fm31)
	d.ending = tail
	d.plant(fm31, "no-answer-file", "the run ends after the harness's last retry without agent_output.json")
	return fmt.Sprintf("answers %d harness retries with messages and never writes agent_output.json", n)
}

// plantAfterAnswer writes the answer after a lean investigation, then
// follows lead after lead: the run does not see that it is done.
func plantAfterAnswer(d *draft) string {
	decisive := d.pickEvidence(true)
	d.items = d.items[:decisive+1]
	rest := d.unfollowed()
	n := min(len(rest), 5+d.rng.IntN(3))
	for _, l := range rest[:n] {
		d.after = append(d.after, item{lead: l, think: "The answer is written and valid, but there may be more to see. " + d.say(l.announce)}.mark(fm15, atAction))
	}
	return fmt.Sprintf("makes %d more evidence calls after agent_output.json was written and validated", n)
}

// A detour is the agent's own script that fails and that it then debugs:
// the script, the run that fails, and the fixing steps of the derailment.
type detour struct {
	file, content string
	run           func(snap string) call
	fixes         func(snap string) []step
}

var pythonDetour = detour{
	file: "parse_logs.py",
	content: `import sys
import pandas as pd

logs = pd.read_csv(sys.argv[1], sep="\t")
for service, rows in logs.groupby("service"):
    level = rows["severity"]
    print(service, (level == "ERROR").sum())`,
	run: func(snap string) call {
		return shell("python3 parse_logs.py "+snap+"/logs.tsv", "Traceback (most recent call last):\n  File \"parse_logs.py\", line 2, in <module>\n    import pandas as pd\nModuleNotFoundError: No module named 'pandas'\n", 1, 0.2)
	},
	fixes: func(snap string) []step {
		rerun := "python3 parse_logs.py " + snap + "/logs.tsv"
		return []step{
			do(shell("pip install pandas", "ERROR: Could not find a version that satisfies the requirement pandas (from versions: none)\nERROR: No matching distribution found for pandas\n", 1, 3.4)).
				thinking("pandas is not installed. Install it."),
			do(updateFile("parse_logs.py", "import pandas as pd", "import csv")).
				thinking("No network for pip. Rewrite the script with the csv module instead."),
			do(shell(rerun, "Traceback (most recent call last):\n  File \"parse_logs.py\", line 4, in <module>\n    logs = pd.read_csv(sys.argv[1], sep=\"\\t\")\nNameError: name 'pd' is not defined\n", 1, 0.2)).
				thinking("Run the script again."),
			do(updateFile("parse_logs.py", `logs = pd.read_csv(sys.argv[1], sep="\t")`, `logs = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))`)).
				thinking("The rest of the script still uses pandas. Read the rows with csv.DictReader."),
			do(shell(rerun, "Traceback (most recent call last):\n  File \"parse_logs.py\", line 5, in <module>\n    for service, rows in logs.groupby(\"service\"):\nAttributeError: 'list' object has no attribute 'groupby'\n", 1, 0.2)).
				thinking("Try it once more."),
			do(shell("python3 --version && pip --version", "Python 3.11.6\npip 23.2.1 from /usr/lib/python3/dist-packages/pip (python 3.11)\n", 0, 0.3)).
				thinking("Maybe the Python version matters for the grouping."),
		}
	},
}

var shellDetour = detour{
	file: "rca.sh",
	content: `#!/bin/bash
# count ERROR lines per service
awk -F'\t' '$3 == "ERROR" {n[$2]++} END {for (s in n) print s, n[s]}' "$1/logs.tsv | sort -k2 -nr`,
	run: func(snap string) call {
		return shell("bash rca.sh "+snap, "rca.sh: line 3: unexpected EOF while looking for matching `\"'\n", 2, 0.1)
	},
	fixes: func(snap string) []step {
		return []step{
			do(shell("bash -n rca.sh", "rca.sh: line 3: unexpected EOF while looking for matching `\"'\nrca.sh: line 4: syntax error: unexpected end of file\n", 2, 0.1)).
				thinking("A quoting problem in my script. Check its syntax."),
			do(updateFile("rca.sh", `awk -F'\t' '$3 == "ERROR" {n[$2]++} END {for (s in n) print s, n[s]}' "$1/logs.tsv | sort -k2 -nr`, `awk -F'\t' '$3 == "ERROR" {n[$2]++} END {for (s in n) print s, n[s]}' "$1/logs.tsv" | sort -k2 -nr`)).
				thinking("The closing quote after logs.tsv is missing. Fix it."),
			do(shell("chmod +x rca.sh && ./rca.sh "+snap, "", 0, 0.4)).
				thinking("Make it executable and run it directly."),
			do(shell("bash -x rca.sh "+snap, "+ awk -F '\\t' '$3 == \"ERROR\" {n[$2]++} END {for (s in n) print s, n[s]}' "+snap+"/logs.tsv\n+ sort -k2 -nr\n", 0, 0.4)).
				thinking("It prints nothing. Trace the script to see what awk receives."),
			do(updateFile("rca.sh", `awk -F'\t' '$3 == "ERROR"`, `awk -F'\t' '$4 == "ERROR"`)).
				thinking("Maybe severity is the fourth column, not the third. Change the script."),
		}
	},
}

// plantDerailment has the run write a script of its own in the middle of
// the investigation; when it fails, the run spends its next steps on the
// script instead of on the incident data, then goes back to the evidence.
func plantDerailment(d *draft, dt detour) string {
	snap := d.sc.snapshot
	write := do(addFile(dt.file, dt.content)).thinking("Count the errors per service myself with a small script, " + dt.file + ".")
	fail := do(dt.run(snap)).thinking("Run it on the snapshot.")
	fixes := dt.fixes(snap)
	n := len(fixes) - d.rng.IntN(2)
	at := firstEvidence + 1 + d.rng.IntN(len(d.items)-firstEvidence)
	detour := []item{{step: &write}, {step: &fail}}
	for _, s := range fixes[:n] {
		s = s.mark(fm23)
		detour = append(detour, item{step: &s})
	}
	d.insert(at, detour...)
	return fmt.Sprintf("after its own %s fails, spends %d steps installing, editing and re-running it instead of reading the incident data", dt.file, n)
}

func plantMismatch(d *draft) string {
	k := d.pickEvidence(false)
	said := d.items[k].lead
	rest := d.unfollowed()
	did := rest[d.rng.IntN(len(rest))]
	d.items[k] = item{lead: did, says: said}.mark(fm26, atThink).mark(fm26, atAction)
	return fmt.Sprintf("reasoning announces %s (%s) and the call made is %s (%s)", d.sc.tool(said), said.key, d.sc.tool(did), did.key)
}

func plantFakeDone(d *draft) string {
	l := d.sc.lead("traces")
	d.items = slices.DeleteFunc(d.items, func(it item) bool { return it.lead == l })
	d.plans = true
	d.fakeDone = l.plan
	if d.toolPlans {
		d.fakeDone += " with " + d.sc.tool(l)
	}
	d.planMarks = append(d.planMarks, fm26)
	return fmt.Sprintf("update_plan reports %q completed, though %s was never called", d.fakeDone, d.sc.tool(l))
}

func plantFewEvidence(d *draft) string {
	d.items = d.items[:firstEvidence]
	d.blame = &d.sc.victims[0]
	d.patch = d.patch.mark(fm31)
	return "writes its answer, blaming the alerting service, after reading nothing but the alerts"
}

func plantChatAnswer(d *draft) string {
	diag := d.diagnosis()
	d.ending = []step{say("I have finished the investigation.\n\n" + d.summary(diag)).mark(fm31)}
	return "gives its diagnosis in a chat message and ends without writing agent_output.json"
}

func plantInvalidJSON(d *draft) string {
	d.render = func(diag *diagnosis) string {
		s := jsonAnswer(diag)
		// Cut at a line boundary past the middle, as when the model runs
		// out of output tokens while writing the file.
		cut := strings.LastIndex(s[:len(s)*3/5], "\n")
		return s[:cut]
	}
	d.patch = d.patch.mark(fm31)
	d.check[0] = d.check[0].mark(fm31)
	d.final.text = "jq cannot parse agent_output.json: the file is cut short. I am out of budget and stop here."
	return "writes an agent_output.json cut off in the middle, sees jq fail on it and stops"
}

// plantMissingFields writes an answer without the fields the task's schema
// requires: the run ended before its output was complete (FM-3.1), and the
// output breaks the schema the task spells out (FM-1.1), at the same step.
func plantMissingFields(d *draft) string {
	d.render = func(diag *diagnosis) string {
		var ents []obj
		for _, e := range diag.Entities {
			ents = append(ents, obj{{"name", e.Name}, {"reasoning", e.Reasoning}})
		}
		return strings.TrimSuffix(string(indentJSON(obj{{"entities", ents}})), "\n")
	}
	d.patch = d.patch.mark(fm31).mark(fm11)
	d.plant(fm11, "answer-schema", "agent_output.json breaks the schema AGENTS.md gives")
	return "writes an agent_output.json whose entities lack contributing_factor and evidence, with no propagations or alerts_explained"
}

func plantAbort(d *draft) string {
	d.items = d.items[:firstEvidence+d.rng.IntN(2)]
	d.ending = []step{abort().mark(fm31)}
	return fmt.Sprintf("the turn is aborted after %d calls; agent_output.json is never written", len(d.items))
}

func plantNoValidation(d *draft) string {
	d.check = nil
	d.patch = d.patch.mark(fm32)
	d.final = d.final.mark(fm32)
	d.final.text = "I wrote the diagnosis to agent_output.json."
	return "writes agent_output.json and ends without the jq check the task asks for"
}

func plantShallowCheck(d *draft) string {
	d.patch = d.patch.mark(fm32)
	d.check = []step{do(shell("test -s "+answerFile+" && echo present", "present\n", 0, 0.1)).thinking("Make sure the file is there.").mark(fm32)}
	d.final = d.final.mark(fm32)
	d.final.text = "agent_output.json is in place."
	return "checks only that agent_output.json exists, never that it parses with jq as the task asks"
}

func plantInventedEvidence(d *draft) string {
	d.invent = true
	d.patch = d.patch.mark(fm33)
	d.final = d.final.mark(fm33)
	return fmt.Sprintf("cites log text no tool returned, %q, as evidence in agent_output.json and in its final message", d.sc.invented)
}

func plantFailedCheck(d *draft) string {
	d.unexplained = true
	d.check = append(d.check, do(shell("jq -e '.alerts_explained | all(.explained)' "+answerFile, "false\n", 1, 0.1)).
		thinking("Check that every alert is explained.").mark(fm33))
	d.final = d.final.mark(fm33)
	d.final.text = "Diagnosis written to agent_output.json and validated with jq: every alert is explained."
	return "a jq check that every alert is explained prints false and exits 1; the final message claims it passed"
}

func plantEmptyTurn(d *draft) string {
	at := firstEvidence + 1 + d.rng.IntN(len(d.items)-firstEvidence)
	empty, retry := idle().mark(ModeSystem), nudge()
	d.insert(at, item{step: &empty}, item{step: &retry})
	return "one model turn produces nothing at all; the harness re-prompts once and the run goes on"
}

// plantSilentModel is a run in which the model never answers: each of its
// turns comes back empty and the harness re-prompts into the void. With no
// agent behaviour at all, only the system failure is planted: the retries
// are the harness's, not an agent ignoring them.
func plantSilentModel(d *draft) string {
	d.items, d.plans = nil, false
	n := 3 + d.rng.IntN(3)
	for range n {
		d.ending = append(d.ending, idle().mark(ModeSystem), nudge())
	}
	d.ending = append(d.ending, idle().mark(ModeSystem))
	return fmt.Sprintf("every one of the model's %d turns produces nothing, and the harness re-prompts %d times, as in real gpt-oss-120b runs", n+1, n)
}
