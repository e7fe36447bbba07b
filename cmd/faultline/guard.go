package main

import (
	"github.com/spf13/cobra"
)

func (a *app) guardCommand() *cobra.Command {
	var policyPath string
	cmd := &cobra.Command{
		Use:   "guard",
		Short: "Apply the study's interventions at run time: loop control, budgets, answer and verification gates",
		Long: `faultline guard applies the interventions the MAST study recommends to runs as they
happen, with the same detectors as offline analysis: loop control (FM-1.3), a step and
token budget with an explicit end (FM-1.5), an answer gate (FM-3.1) and a verification
gate (FM-3.2, FM-3.3) before the agent may finish, and a clarification branch for
ambiguous tasks (FM-2.2).

A policy (--policy FILE, YAML; see examples/guard.yaml) lists the rules, each with its
detectors or budget, thresholds, action (observe, annotate, inject, block) and message.
Without one, the built-in policy observes only.`,
		Args: cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&policyPath, "policy", "", "guard policy `FILE` (YAML); default: the built-in policy, observe only")
	cmd.AddCommand(a.guardReplayCommand(&policyPath))
	return cmd
}
