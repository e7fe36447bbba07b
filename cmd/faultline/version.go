package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/taxonomy"
)

// version is set at release builds with -ldflags "-X main.version=v1.2.3".
var version = "dev"

type versionJSON struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Go        string `json:"go"`
	Taxonomy  string `json:"taxonomy"`
	Detectors string `json:"detectors"`
}

func (a *app) versionCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of faultline, its taxonomy and detector set",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ds, err := a.detectors()
			if err != nil {
				return err
			}
			v := versionJSON{Version: version, Go: runtime.Version(), Taxonomy: taxonomy.Version, Detectors: detect.Version(ds)}
			if info, ok := debug.ReadBuildInfo(); ok {
				for _, s := range info.Settings {
					if s.Key == "vcs.revision" {
						v.Commit = s.Value
					}
				}
			}
			if asJSON {
				return writeJSON(a.stdout, v)
			}
			fmt.Fprintf(a.stdout, "faultline %s", v.Version)
			if v.Commit != "" {
				fmt.Fprintf(a.stdout, " (%.12s)", v.Commit)
			}
			fmt.Fprintf(a.stdout, " %s, taxonomy %s, detectors %s\n", v.Go, v.Taxonomy, v.Detectors)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
