package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/store"
	"github.com/faultline/faultline/trace"
)

// ingestResult is the JSON form of an ingest run.
type ingestResult struct {
	Files     int            `json:"files"`
	Unchanged int            `json:"unchanged"`
	Skipped   int            `json:"skipped"`
	Traces    int            `json:"traces"`
	Errors    int            `json:"errors"`
	Notices   int            `json:"notices"`
	Issues    []ingestIssue  `json:"issues"`
	TraceIDs  []string       `json:"trace_ids"`
	summary   ingest.Summary `json:"-"`
}

type ingestIssue struct {
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	Message  string `json:"message"`
}

func (a *app) ingestCommand() *cobra.Command {
	var asJSON, noDetect bool
	cmd := &cobra.Command{
		Use:   "ingest PATH...",
		Short: "Read trace files into the database",
		Long: `Read trace files into the database. PATH is a file, a directory (read recursively;
hidden directories are skipped) or - for standard input. Each file's format is
recognised from its content, through gzip compression when the file has it. Detectors
run on every new trace unless --no-detect.

Re-ingesting a file whose content has not changed does nothing; a changed file
replaces the traces it held. Problems are reported as file:line: message, and
the rest of the input is still ingested; the exit status is 1 when any input
could not be read.`,
		Example: `  faultline ingest examples/
  faultline ingest runs/2/1/sessions/2026/01/15/rollout-*.jsonl
  cat rollout.jsonl | faultline ingest -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			res, err := a.ingest(cmd.Context(), st, args, !noDetect, asJSON)
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(a.stdout, res); err != nil {
					return err
				}
			} else {
				fmt.Fprintln(a.stdout, res.line())
			}
			if res.Errors > 0 {
				return errDataProblems
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (fields: files, unchanged, skipped, traces, errors, notices, issues, trace_ids)")
	cmd.Flags().BoolVar(&noDetect, "no-detect", false, "store traces without running the detectors")
	return cmd
}

// ingest reads paths into the store, running the detectors on the way in
// when detectOn is set. Issues are printed as they are found unless they are
// being collected for JSON.
func (a *app) ingest(ctx context.Context, st *store.Store, paths []string, detectOn, collect bool) (*ingestResult, error) {
	res := &ingestResult{Issues: []ingestIssue{}, TraceIDs: []string{}}
	var sink ingest.Sink = &recordingSink{next: st, ids: &res.TraceIDs}
	if detectOn {
		st.RecordDetectors(detect.Version(detect.All))
		sink = detect.Sink(sink, detect.All, func(err error) { a.log.Error("detector finding rejected", "err", err) })
	}
	report := func(i ingest.Issue) {
		res.Issues = append(res.Issues, ingestIssue{Severity: i.Severity.String(), Path: i.Path, Line: i.Line, Message: i.Message})
		if collect || (a.quiet && i.Severity != ingest.Error) {
			return
		}
		fmt.Fprintf(a.stderr, "%s: %s\n", i.Severity, i)
	}
	sum, err := ingest.Paths(ctx, paths, sink, ingest.Options{Report: report, Stdin: a.stdin})
	res.summary = sum
	res.Files, res.Unchanged, res.Skipped, res.Traces, res.Errors, res.Notices = sum.Files, sum.Unchanged, sum.Skipped, sum.Traces, sum.Errors, sum.Notices
	for _, p := range sum.SkippedFiles {
		a.log.Debug("skipped: no trace format", "file", p)
	}
	return res, err
}

func (r *ingestResult) line() string {
	var parts []string
	parts = append(parts, fmt.Sprintf("ingested %d traces from %d files", r.Traces, r.Files))
	if r.Unchanged > 0 {
		parts = append(parts, fmt.Sprintf("%d unchanged", r.Unchanged))
	}
	if r.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d other files skipped", r.Skipped))
	}
	parts = append(parts, fmt.Sprintf("%d errors", r.Errors))
	return strings.Join(parts, ", ")
}

// recordingSink notes the id of every trace stored.
type recordingSink struct {
	next ingest.Sink
	ids  *[]string
}

func (r *recordingSink) File(ctx context.Context, f ingest.FileInfo) (ingest.FileSink, error) {
	fs, err := r.next.File(ctx, f)
	if fs == nil || err != nil {
		return fs, err
	}
	return &recordingFile{FileSink: fs, ids: r.ids}, nil
}

type recordingFile struct {
	ingest.FileSink
	ids     *[]string
	pending []string
}

func (r *recordingFile) Trace(ctx context.Context, t *trace.Trace) error {
	r.pending = append(r.pending, t.ID)
	return r.FileSink.Trace(ctx, t)
}

func (r *recordingFile) Close(ctx context.Context, res ingest.FileResult) error {
	if err := r.FileSink.Close(ctx, res); err != nil {
		return err
	}
	*r.ids = append(*r.ids, r.pending...)
	return nil
}
