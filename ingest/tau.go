package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/trace"
)

// TauBench decodes tau-bench results, as tau-bench writes them and as
// AgentRx and Docent's examples keep them: records {task_id, reward, info:
// {task: {user_id, instruction, actions, outputs}, source, user_cost,
// reward_info: {reward, info, actions}, error}, traj, trial}, an array of
// them in a results file, one a file elsewhere. traj is the conversation as
// OpenAI chat messages (see chat.Message): the domain's policy as the system
// prompt, a simulated customer following info.task.instruction as the user,
// and the agent's tool calls against the domain's database.
type TauBench struct{}

// Name implements Format.
func (TauBench) Name() string { return "taubench" }

// Sniff accepts records with a trajectory and tau-bench's fields. The
// trajectory comes last in tau-bench's files and may lie past the head, so
// task_id, reward and info together are enough.
func (TauBench) Sniff(head []byte) bool {
	keys := headKeys(head, 0)
	if hasAny(keys, "traj") {
		return hasAny(keys, "reward", "task_id", "info")
	}
	return hasAny(keys, "task_id") && hasAny(keys, "reward") && hasAny(keys, "info")
}

type tauRecord struct {
	TaskID json.RawMessage `json:"task_id"`
	Trial  json.RawMessage `json:"trial"`
	Reward json.RawMessage `json:"reward"`
	Info   struct {
		Task struct {
			UserID      string `json:"user_id"`
			Instruction string `json:"instruction"`
			Actions     []struct {
				Name string `json:"name"`
			} `json:"actions"`
			Outputs []json.RawMessage `json:"outputs"`
		} `json:"task"`
		Source     string          `json:"source"`
		UserCost   json.RawMessage `json:"user_cost"`
		RewardInfo struct {
			Info map[string]json.RawMessage `json:"info"`
		} `json:"reward_info"`
		Error     json.RawMessage `json:"error"`
		Traceback string          `json:"traceback"`
	} `json:"info"`
	Traj json.RawMessage `json:"traj"`
}

// tauDomain reads the domain from the policy's heading ("# Retail agent
// policy", "# Airline Agent Policy"): task ids repeat across domains.
var tauDomain = regexp.MustCompile(`(?i)^\s*#\s*(\w+) agent policy`)

// Decode implements Format.
func (TauBench) Decode(ctx context.Context, in *Input, emit func(*trace.Trace) error) error {
	emit = in.limited(emit)
	ids := uniqueIDs{}
	return eachRecord(ctx, in, func(raw json.RawMessage, r *record) error {
		var rec tauRecord
		lines, err := decodeRecord(raw, &rec)
		if err != nil {
			r.skip(raw, err)
			return nil
		}
		task, ok := jsontext.TextOf(rec.TaskID)
		trial, ok2 := jsontext.TextOf(rec.Trial)
		if !ok || !ok2 {
			r.report(r.line, Error, "task_id and trial should be numbers or text; record skipped")
			return nil
		}
		t := &trace.Trace{Format: "taubench", Source: fmt.Sprintf("%s#%d", in.Path, r.n), System: "tau-bench",
			Task: rec.Info.Task.Instruction, Trial: trial}
		c := &chatLog{t: t, r: r}
		c.messages(rec.Traj, lines["traj"], "traj")
		scenario := task
		if len(t.Steps) > 0 && t.Steps[0].Kind == trace.KindSystem {
			if m := tauDomain.FindStringSubmatch(t.Steps[0].Text); m != nil {
				domain := strings.ToLower(m[1])
				t.SetMeta("domain", domain)
				scenario = domain + ":" + task
			}
		}
		t.Scenario = scenario
		if msg, failed := toolError(rec.Info.Error); failed {
			// A run that crashed (a context overflow, an API error) keeps its
			// error instead of a task.
			t.Append(trace.Step{Kind: trace.KindError, Role: trace.RoleHarness, Type: "error", Text: jsontext.JoinNonEmpty(msg, rec.Info.Traceback)})
		}
		tauMeta(t, &rec)
		// tau-bench's pass criterion: success when the reward is 1 (the
		// database ends as the task requires and every required output was
		// said), failure for any lower reward.
		if o, ok := scoreOutcome("reward", rec.Reward); ok {
			var parts []string
			for _, k := range []string{"r_actions", "r_outputs"} {
				if v, ok := rec.Info.RewardInfo.Info[k]; ok {
					parts = append(parts, k+"="+jsontext.Compact(v))
				}
			}
			o.Detail = strings.Join(parts, " ")
			t.Outcomes = []trace.Outcome{o}
		} else if len(rec.Reward) > 0 {
			r.report(r.at(lines["reward"]), Error, "reward %s is not a number; no outcome", trace.Clip(string(rec.Reward), 40))
		}
		t.ID = ids.of(fmt.Sprintf("tau:%s:%s:%s", scenario, trial, shortHash(string(raw))), r.n)
		finishTrace(t, r)
		return emit(t)
	})
}

// tauMeta keeps what the task expected of the run and who played the user.
func tauMeta(t *trace.Trace, rec *tauRecord) {
	task := &rec.Info.Task
	t.SetMeta("user_id", task.UserID)
	t.SetMeta("user_source", rec.Info.Source)
	if cost, ok := jsontext.TextOf(rec.Info.UserCost); ok {
		t.SetMeta("user_cost", cost)
	}
	var actions []string
	for _, a := range task.Actions {
		actions = append(actions, a.Name)
	}
	t.SetMeta("expected_actions", strings.Join(actions, ", "))
	var outputs []string
	for _, o := range task.Outputs {
		outputs = append(outputs, jsontext.Compact(o))
	}
	t.SetMeta("expected_outputs", strings.Join(outputs, ", "))
}
