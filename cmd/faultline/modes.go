package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/taxonomy"
)

// modeJSON is one mode as `faultline modes --json` prints it.
type modeJSON struct {
	Code         string           `json:"code"`
	Name         string           `json:"name"`
	Taxonomy     string           `json:"taxonomy"`
	Category     string           `json:"category"`
	CategoryName string           `json:"category_name"`
	Stage        string           `json:"stage"`
	Definition   string           `json:"definition"`
	Example      string           `json:"example"`
	Detectors    []modeDetector   `json:"detectors"`
	Intervention modeIntervention `json:"intervention"`
}

type modeDetector struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
}

type modeIntervention struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

func (a *app) modesCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "modes [CODE]",
		Short: "List the failure modes faultline finds, or explain one",
		Long: `List the 14 MAST failure modes and faultline's system modes (failures of the
infrastructure around an agent, kept out of MAST statistics): each mode's code, name,
category, the detectors that look for it and the intervention that addresses it.
With CODE (FM-1.3, 1.3 or SYS-1), print that mode in full: its definition, an example,
what each of its detectors finds, and the intervention. A mode no detector looks for
is found by the LLM judge (faultline judge) and by human labels only.

--json prints [{code, name, taxonomy, category, category_name, stage, definition,
example, detectors: [{name, summary}], intervention: {id, name, description}}].`,
		Example: `  faultline modes
  faultline modes FM-3.3
  faultline modes --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			modes := allModes()
			if len(args) == 1 {
				code := taxonomy.CanonicalCode(strings.TrimSpace(args[0]))
				var found []modeJSON
				for _, m := range modes {
					if strings.EqualFold(m.Code, code) {
						found = append(found, m)
					}
				}
				if len(found) == 0 {
					return fmt.Errorf("no mode %q; the codes are FM-1.1 to FM-3.3 and SYS-1 to SYS-%d (faultline modes lists them)", args[0], len(taxonomy.System.Modes))
				}
				modes = found
			}
			if asJSON {
				return writeJSON(a.stdout, modes)
			}
			if len(args) == 1 {
				writeMode(a.stdout, modes[0])
				return nil
			}
			table := report.Table{Header: []string{"CODE", "NAME", "CATEGORY", "DETECTORS", "INTERVENTION"}}
			for _, m := range modes {
				table.Rows = append(table.Rows, []string{m.Code, m.Name, m.Category + " " + m.CategoryName, fmt.Sprint(len(m.Detectors)), m.Intervention.Name})
			}
			if err := table.Write(a.stdout); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, "\nfaultline modes CODE explains one, with an example.")
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// allModes lists MAST's modes, then the system modes, with their detectors
// and interventions.
func allModes() []modeJSON {
	var out []modeJSON
	for _, e := range detect.Catalog() {
		m := e.Mode
		mj := modeJSON{Code: m.Code, Name: m.Name, Taxonomy: e.Taxonomy.Version, Category: m.Category, CategoryName: e.CategoryName,
			Stage: m.Stage, Definition: m.Definition, Example: m.Example, Detectors: []modeDetector{},
			Intervention: modeIntervention{ID: e.Intervention.ID, Name: e.Intervention.Name, Description: e.Intervention.Description}}
		for _, d := range e.Detectors {
			mj.Detectors = append(mj.Detectors, modeDetector{Name: d.Name, Summary: d.Summary()})
		}
		out = append(out, mj)
	}
	return out
}

// writeMode prints one mode in full, wrapped for a terminal.
func writeMode(w io.Writer, m modeJSON) {
	const width = 88
	fmt.Fprintf(w, "%s  %s\n%s %s, stage: %s\n\n", m.Code, m.Name, m.Category, m.CategoryName, m.Stage)
	fmt.Fprintln(w, report.Wrap("Definition: "+m.Definition, width, ""))
	fmt.Fprintln(w, report.Wrap("Example: "+m.Example, width, ""))
	fmt.Fprintln(w)
	if len(m.Detectors) == 0 {
		fmt.Fprintln(w, report.Wrap("Detectors: none; the LLM judge (faultline judge) and human labels find it.", width, ""))
	} else {
		fmt.Fprintln(w, "Detectors (faultline detectors NAME documents one):")
		for _, d := range m.Detectors {
			fmt.Fprintf(w, "  %s\n%s\n", d.Name, report.Wrap(d.Summary, width, "    "))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, report.Wrap("Intervention: "+m.Intervention.Name+". "+m.Intervention.Description, width, ""))
}
