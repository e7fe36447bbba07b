package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/rules"
)

type detectorJSON struct {
	Name     string `json:"name"`
	Mode     string `json:"mode"`
	ModeName string `json:"mode_name"`
	Summary  string `json:"summary"`
	Doc      string `json:"doc"`
	// Rule is the rule file a user's rule comes from; "" for a built-in.
	Rule string `json:"rule,omitempty"`
}

func (a *app) detectorsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "detectors [NAME]",
		Short: "List the deterministic detectors, or document one",
		Long: `List the deterministic detectors: the MAST mode each reports and what it finds.
With NAME, print that detector's full documentation: what it looks for and its
known blind spots. The rules of your rule file (--rules, or the rules section of
faultline.yaml) are listed after the built-in detectors.
--json prints [{name, mode, mode_name, summary, doc, rule}].`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ds, err := a.detectors()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				i := slices.IndexFunc(ds, func(d *detect.Detector) bool { return d.Name == args[0] })
				if i < 0 {
					return fmt.Errorf("no detector named %q; faultline detectors lists them", args[0])
				}
				ds = ds[i : i+1]
			}
			set, err := a.ruleSet()
			if err != nil {
				return err
			}
			var list []detectorJSON
			for _, d := range ds {
				dj := detectorJSON{Name: d.Name, Mode: d.Mode, ModeName: rules.ModeName(d.Mode, set.CodeNames()), Summary: d.Summary(), Doc: d.Doc}
				if d.Version != "" {
					dj.Rule = set.Path
				}
				list = append(list, dj)
			}
			if asJSON {
				return writeJSON(a.stdout, list)
			}
			if len(args) == 1 {
				d := list[0]
				fmt.Fprintf(a.stdout, "%s  (%s %s)\n\n%s\n", d.Name, d.Mode, d.ModeName, d.Doc)
				return nil
			}
			table := report.Table{Header: []string{"DETECTOR", "MODE", "FINDS"}}
			for _, d := range list {
				table.Rows = append(table.Rows, []string{d.Name, d.Mode + " " + d.ModeName, strings.TrimSuffix(d.Summary, ".")})
			}
			return table.Write(a.stdout)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
