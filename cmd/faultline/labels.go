package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/pipeline"
)

func (a *app) labelsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "labels",
		Short: "Export or import failure-mode labels in faultline's label format",
		Long: `Move labels in and out of the database in faultline's label format (CSV with a
header, or JSON Lines: trace, mode, present, steps, quote, note), as the Label page of
faultline serve does. Human labels are the annotation source human:<name>.`,
	}
	cmd.AddCommand(a.labelsExportCommand(), a.labelsImportCommand())
	return cmd
}

func (a *app) labelsExportCommand() *cobra.Command {
	var source, format, out string
	cmd := &cobra.Command{
		Use:   "export --source SOURCE",
		Short: "Write one annotation source's labels, every verdict stated",
		Long: `Write the labels of one annotation source (human:<name>, or any other, such as a
judge's) in faultline's label format, one record per trace and mode it decided,
present, absent or unsure, with the cited steps, the quoted evidence and the note.
faultline eval --labels FILE and faultline labels import read the file back.`,
		Example: `  faultline labels export --source human:alice -o alice.csv
  faultline labels export --source judge:gpt-4.1-mini --format jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !oneOf(format, labels.WriteFormats) {
				return fmt.Errorf("--format must be one of %s, not %q", strings.Join(labels.WriteFormats, ", "), format)
			}
			st, err := a.readStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			ls, err := st.ExportLabels(cmd.Context(), source)
			if err != nil {
				return err
			}
			var b bytes.Buffer
			if err := labels.Write(&b, format, ls); err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err = a.stdout.Write(b.Bytes())
			} else {
				err = os.WriteFile(out, b.Bytes(), 0o644)
			}
			if err == nil && !a.quiet {
				fmt.Fprintf(a.stderr, "exported %d labels of %s\n", len(ls), source)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&source, "source", "", "the annotation `SOURCE` whose labels to write (human:alice, judge:<model>, ...)")
	f.StringVar(&format, "format", "csv", "`FORMAT`: csv or jsonl")
	f.StringVarP(&out, "output", "o", "", "write to `FILE` instead of standard output")
	cmd.MarkFlagRequired("source")
	return cmd
}

func (a *app) labelsImportCommand() *cobra.Command {
	var labeller string
	cmd := &cobra.Command{
		Use:   "import FILE --labeller NAME",
		Short: "Store a label file as a human labeller's labels",
		Long: `Store the labels of a file in faultline's label format (CSV with a header, JSON
or JSON Lines) as the annotation source human:NAME, replacing that source's labels on
every trace the file labels. A trace labelled anywhere in the file is labelled for
every mode the file labels (silence is absence). Quotes are checked against the steps
they cite; a label whose evidence is not in its trace, and the labels of traces not in
the database, are reported as file:line: message and left out, and the exit status
is then 1.`,
		Example: `  faultline labels import alice.csv --labeller alice
  faultline eval --labels human:alice --source judge:gpt-4.1-mini`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			source, err := labels.HumanSource(labeller)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			set, issues := labels.Parse(args[0], data)
			stored, more, err := pipeline.ImportLabels(cmd.Context(), st, set, source)
			if err != nil {
				return err
			}
			failed := false
			for _, i := range append(issues, more...) {
				failed = failed || i.Severity == ingest.Error
				if !a.quiet || i.Severity == ingest.Error {
					fmt.Fprintf(a.stderr, "%s: %s\n", i.Severity, i)
				}
			}
			if !a.quiet {
				fmt.Fprintf(a.stderr, "stored %d labels as %s\n", stored, source)
			}
			if failed {
				return errDataProblems
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&labeller, "labeller", "", "the labeller's `NAME`: the labels become the source human:NAME")
	cmd.MarkFlagRequired("labeller")
	return cmd
}
