package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/taxonomy"
)

type detectorJSON struct {
	Name     string `json:"name"`
	Mode     string `json:"mode"`
	ModeName string `json:"mode_name"`
	Summary  string `json:"summary"`
	Doc      string `json:"doc"`
}

func (a *app) detectorsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "detectors [NAME]",
		Short: "List the deterministic detectors, or document one",
		Long: `List the deterministic detectors: the MAST mode each reports and what it finds.
With NAME, print that detector's full documentation: what it looks for and its
known blind spots. --json prints [{name, mode, mode_name, summary, doc}].`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ds := detect.All
			if len(args) == 1 {
				d, ok := detect.Lookup(args[0])
				if !ok {
					return fmt.Errorf("no detector named %q; faultline detectors lists them", args[0])
				}
				ds = []*detect.Detector{d}
			}
			var list []detectorJSON
			for _, d := range ds {
				list = append(list, detectorJSON{Name: d.Name, Mode: d.Mode, ModeName: taxonomy.Name(d.Mode), Summary: d.Summary(), Doc: d.Doc})
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
