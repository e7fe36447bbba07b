package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/text"
)

// guardReplayJSON is the JSON form of `guard replay`.
type guardReplayJSON struct {
	Policy          string           `json:"policy"`
	Runs            int              `json:"runs"`
	Failed          int              `json:"failed"`
	Succeeded       int              `json:"succeeded"`
	TokensEstimated bool             `json:"tokens_estimated"`
	Rules           []guardRuleJSON  `json:"rules"`
	Decisions       []guard.Decision `json:"decisions,omitempty"`
	Ingest          *ingestResult    `json:"ingest,omitempty"`
}

type guardRuleJSON struct {
	*guard.RuleTally
	MedianLead *int `json:"median_steps_before_end"`
}

func (a *app) guardReplayCommand(policyPath *string) *cobra.Command {
	var asJSON, markdown, withDecisions bool
	var sf scoreFlags
	var inf ingestFlags
	var filter store.Filter
	cmd := &cobra.Command{
		Use:   "replay [PATH...]",
		Short: "Replay recorded runs through a guard policy and show where each rule would have fired",
		Long: `Replay runs turn by turn through a guard policy, as the proxy would have seen them,
and report per rule where it would have fired. The traces under PATH are ingested and
scored first (as faultline analyze does: ground truth found among the files or given
with --ground-truth); without PATH, the stored traces are replayed.

On runs of known outcome, each rule's row says on how many failed runs it fired, on
how many successful ones (false alarms: a block there would have cost a success), how
many steps before the end of a failed run it first fired (median), and the steps and
tokens failed runs spent after it first fired: what ending them there would have
saved. Tokens come from the trace where its format counts them per step, else are
estimated from the text (4 bytes a token; the table says so).

A run's answer file and outcome are not shown to the guard, which at run time could
not have seen them. --json prints {policy, runs, failed, succeeded, tokens_estimated,
rules[], decisions[] (with --decisions), ingest}: each rule {rule, mode, action,
fired_failed, fired_succeeded, fired_unknown, decisions, steps_after_on_failed,
tokens_after_on_failed, median_steps_before_end}.`,
		Example: `  faultline guard replay examples/
  faultline guard replay --policy examples/guard.yaml ../runs/
  faultline guard replay --model gpt-oss-120b --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			policy, err := a.loadPolicy(*policyPath)
			if err != nil {
				return err
			}
			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			in, err := a.prepareCohort(cmd, st, args, &sf, inf, asJSON)
			if err != nil {
				return err
			}
			// Model names are matched as every other command matches them,
			// through the aliases of the settings file.
			f := filter
			if f.Aliases, err = a.modelAliases(); err != nil {
				return err
			}
			if in.ids != nil {
				f.Select = &store.Selection{IDs: in.ids}
			}
			traces, err := st.List(ctx, f)
			if err != nil {
				return err
			}
			if len(traces) == 0 {
				// Say which filter left nothing, as report does.
				why, err := noMatch(ctx, st, f)
				if err != nil {
					return err
				}
				return errors.New("no traces to replay: " + why)
			}
			out := guardReplayJSON{Policy: policy.Name, Ingest: in.ingest}
			tally := guard.NewTally(policy)
			for _, sum := range traces {
				t, err := st.Load(ctx, sum.ID)
				if err != nil {
					return err
				}
				s := guard.Replay(t, policy)
				var success *bool
				if sum.Outcome != nil {
					success = sum.Outcome.Success
				}
				tally.Add(t, s, success)
				if withDecisions {
					out.Decisions = append(out.Decisions, s.Decisions()...)
				}
			}
			out.Runs, out.Failed, out.Succeeded, out.TokensEstimated = tally.Runs, tally.Failed, tally.Succeeded, tally.TokensEstimated
			for _, r := range tally.Rules {
				row := guardRuleJSON{RuleTally: r}
				if lead := r.MedianLead(); lead >= 0 {
					row.MedianLead = &lead
				}
				out.Rules = append(out.Rules, row)
			}
			switch {
			case asJSON:
				return writeJSON(a.stdout, out)
			case markdown:
				return replayTable(out).WriteMarkdown(a.stdout)
			}
			return writeReplay(a.stdout, out)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (fields in --help)")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the table as Markdown")
	cmd.Flags().BoolVar(&withDecisions, "decisions", false, "with --json, list every decision too")
	cmd.MarkFlagsMutuallyExclusive("json", "markdown")
	sf.register(cmd)
	inf.register(cmd)
	registerFilters(cmd, &filter, filterNames(filterScenario, filterMode, filterSource)...)
	return cmd
}

// writeReplay prints the replay's table and what its columns mean.
func writeReplay(w io.Writer, out guardReplayJSON) error {
	fmt.Fprintf(w, "policy %s: %s replayed, %d failed, %d succeeded, %d of unknown outcome\n\n",
		out.Policy, text.Plural(out.Runs, "run", "runs"), out.Failed, out.Succeeded, out.Runs-out.Failed-out.Succeeded)
	if err := replayTable(out).Write(w); err != nil {
		return err
	}
	note := "\nFIRED: failed / successful runs it fired on. LEAD: median steps before a failed run's end at its first firing.\nSAVED: steps and tokens failed runs spent after it first fired."
	if out.TokensEstimated {
		note += " Tokens estimated from text (4 bytes a token) where the trace gives none."
	}
	_, err := fmt.Fprintln(w, note)
	return err
}

func replayTable(out guardReplayJSON) *report.Table {
	t := &report.Table{Header: []string{"RULE", "MODE", "ACTION", "FIRED ON FAILED", "FIRED ON SUCCESSFUL", "LEAD", "STEPS SAVED", "TOKENS SAVED"}}
	share := func(n, of int) string {
		if of == 0 {
			return strconv.Itoa(n)
		}
		return fmt.Sprintf("%d/%d (%.0f%%)", n, of, 100*float64(n)/float64(of))
	}
	for _, r := range out.Rules {
		lead := "-"
		if r.MedianLead != nil {
			lead = strconv.Itoa(*r.MedianLead)
		}
		t.Rows = append(t.Rows, []string{r.Rule, r.Mode, r.Action.String(), share(r.Failed, out.Failed), share(r.Succeeded, out.Succeeded),
			lead, strconv.Itoa(r.StepsAfter), strconv.Itoa(r.TokensAfter)})
	}
	return t
}

// loadPolicy reads the policy file named, whose rules may name the user's
// own detectors (see ruleSet), or gives the built-in one.
func (a *app) loadPolicy(path string) (*guard.Policy, error) {
	if path == "" {
		return guard.Default(), nil
	}
	set, err := a.ruleSet()
	if err != nil {
		return nil, err
	}
	return guard.Load(path, set.Detectors()...)
}
