package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/pipeline"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/text"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// ingestResult is the JSON form of an ingest run.
type ingestResult struct {
	Files     int `json:"files"`
	Unchanged int `json:"unchanged"`
	// Redetected counts the traces of unchanged files whose findings came
	// from another detector set (a rule added or changed) and were renewed.
	Redetected int            `json:"redetected"`
	Skipped    int            `json:"skipped"`
	Traces     int            `json:"traces"`
	Refused    int            `json:"refused"`  // traces not stored: fewer steps than the stored version
	Replaced   int            `json:"replaced"` // traces stored over a version of more steps (--replace)
	Errors     int            `json:"errors"`
	Notices    int            `json:"notices"`
	Issues     []ingestIssue  `json:"issues"`
	TraceIDs   []string       `json:"trace_ids"`
	summary    ingest.Summary `json:"-"`
}

type ingestIssue struct {
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	Message  string `json:"message"`
}

// ingestFlags are the flags of every command that ingests files.
type ingestFlags struct {
	replace      bool
	textLimitKiB int
}

func (f *ingestFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.replace, "replace", false, "store a trace even over a stored version of more steps (refused otherwise, as a truncated copy would cut it short)")
	cmd.Flags().IntVar(&f.textLimitKiB, "text-limit-kib", ingest.DefaultTextLimit>>10, "keep at most this much of one text (a tool output, a message), its head and tail around a mark of the cut, so that memory stays bounded whatever the input; negative keeps every text whole")
}

// textLimit is the limit in bytes, as ingest.Options takes it.
func (f ingestFlags) textLimit() int {
	if f.textLimitKiB < 0 {
		return -1
	}
	return max(f.textLimitKiB, 1) << 10
}

func (a *app) ingestCommand() *cobra.Command {
	var asJSON, noDetect bool
	var inf ingestFlags
	cmd := &cobra.Command{
		Use:   "ingest PATH...",
		Short: "Read trace files into the database",
		Long: `Read trace files into the database. PATH is a file, a directory (read recursively;
hidden directories are skipped) or - for standard input. Each file's format is
recognised from its content, through gzip compression when the file has it. Detectors
run on every new trace unless --no-detect.

Symbolic links to files are followed (a file reached twice is read once); links to
directories are followed only when named. A named pipe named as PATH, such as
<(zcat runs.jsonl.gz), is read as a stream; pipes and devices met in a walk are
skipped, each with its reason. A text longer than --text-limit-kib keeps its head
and tail around a mark of the cut, and the trace records the size it had.

Re-ingesting a file whose content has not changed does not read it again, but
its traces are detected again when their findings came from other detectors
(a rule of --rules added, changed or removed); a changed file
replaces the traces it held, which keep the labels and scores added to them. A trace already stored with more steps (from this
file before it changed, or from another) is not replaced by a version with fewer,
such as a truncated copy's: that is reported as an error of the file, and the
file's other traces are stored. --replace stores it anyway. Problems are reported
as file:line: message, and the rest of the input is still ingested; the exit
status is 1 when any input could not be read or a trace was refused.`,
		Example: `  faultline ingest examples/
  faultline ingest runs/2/1/sessions/2026/01/15/rollout-*.jsonl
  cat rollout.jsonl | faultline ingest -
  faultline ingest --replace rollout-cut-short.jsonl`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			res, err := a.ingest(cmd.Context(), st, args, inf, !noDetect, asJSON, nil)
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
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (fields: files, unchanged, redetected, skipped, traces, refused, replaced, errors, notices, issues, trace_ids)")
	cmd.Flags().BoolVar(&noDetect, "no-detect", false, "store traces without running the detectors")
	inf.register(cmd)
	return cmd
}

// ingest reads paths into the store, running the detectors on the way in
// when detectOn is set. Issues are printed as they are found unless they are
// being collected for JSON.
func (a *app) ingest(ctx context.Context, st database, paths []string, flags ingestFlags, detectOn, collect bool, skipped func(path string)) (*ingestResult, error) {
	res := &ingestResult{Issues: []ingestIssue{}, TraceIDs: []string{}}
	if flags.replace {
		st.ReplaceFewerSteps(func(f ingest.FewerSteps) {
			res.Replaced++
			a.log.Info("replacing a stored trace with a version of fewer steps", "trace", f.ID,
				"stored", f.Stored, "from", f.StoredFrom, "steps", f.Incoming, "file", f.File)
		})
	}
	// Many small files share a transaction: one commit per file made an
	// ingest of small traces spend most of its time committing.
	batch := st.Batch()
	recording := &recordingSink{next: batch, ids: &res.TraceIDs}
	var sink ingest.Sink = recording
	var ds []*detect.Detector
	if detectOn {
		var err error
		if ds, err = a.detectors(); err != nil {
			return nil, err
		}
		sink = pipeline.Detecting(sink, ds, a.rejectedFinding)
		// The tools are counted only for the rules' check, when there
		// are rules and the check is printed.
		if set, err := a.ruleSet(); err == nil && len(set.Rules) > 0 && !collect && !a.quiet {
			recording.tools = map[string]int{}
		}
	}
	printer := newIssuePrinter(a.stderr)
	report := func(i ingest.Issue) {
		res.Issues = append(res.Issues, ingestIssue{Severity: i.Severity.String(), Path: i.Path, Line: i.Line, Message: i.Message})
		if collect || (a.quiet && i.Severity != ingest.Error) {
			return
		}
		printer.print(i)
	}
	opts := ingest.Options{Report: report, Stdin: a.stdin, TextLimit: flags.textLimit(), Workers: readWorkers(),
		// The files of a walk in no trace format (a run's prompt and answer
		// file, say) are handed on, not kept: a walk of many runs would
		// hold all their paths to its end.
		Skipped: func(p string) {
			a.log.Debug("skipped: no trace format", "file", p)
			if skipped != nil {
				skipped(p)
			}
		}}
	sum, err := ingest.Paths(ctx, paths, sink, opts)
	if cerr := batch.Close(ctx); err == nil {
		err = cerr
	}
	slices.Sort(res.TraceIDs) // files finish in any order
	printer.flush()
	res.summary = sum
	res.Files, res.Unchanged, res.Skipped, res.Traces, res.Refused, res.Errors, res.Notices = sum.Files, sum.Unchanged, sum.Skipped, sum.Traces, sum.Refused, sum.Errors, sum.Notices
	if recording.tools != nil && res.Traces > 0 {
		a.lintRules(recording.tools)
	}
	if err == nil && detectOn && len(sum.UnchangedFiles) > 0 {
		// An unchanged file is not read again, but its traces' findings
		// may be of another detector set than this one.
		var unchanged []store.Summary
		if unchanged, err = st.List(ctx, store.Filter{Select: &store.Selection{Files: sum.UnchangedFiles}}); err == nil {
			res.Redetected, err = pipeline.Redetect(ctx, st, summaryIDs(unchanged), ds, a.rejectedFinding)
		}
	}
	return res, err
}

func (r *ingestResult) line() string {
	var parts []string
	parts = append(parts, "ingested "+text.Plural(r.Traces, "trace", "traces")+" from "+text.Plural(r.Files, "file", "files"))
	if r.Unchanged > 0 {
		parts = append(parts, fmt.Sprintf("%d unchanged", r.Unchanged))
	}
	if r.Redetected > 0 {
		parts = append(parts, text.Plural(r.Redetected, "unchanged trace detected again", "unchanged traces detected again")+" (the detectors or rules changed)")
	}
	if r.Skipped > 0 {
		parts = append(parts, text.Plural(r.Skipped, "other file skipped", "other files skipped"))
	}
	if r.Refused > 0 {
		parts = append(parts, fmt.Sprintf("%d refused", r.Refused))
	}
	if r.Replaced > 0 {
		parts = append(parts, fmt.Sprintf("%d replaced with fewer steps", r.Replaced))
	}
	parts = append(parts, text.Plural(r.Errors, "error", "errors"))
	return strings.Join(parts, ", ")
}

// recordingSink notes the id of every trace stored, and tells how to store
// one the store refused for its fewer steps.
// It is safe for concurrent use, as ingest.Options.Workers needs.
type recordingSink struct {
	next ingest.Sink
	mu   sync.Mutex
	ids  *[]string
	// tools counts the steps of the stored traces by tool name, for the
	// rules' check of tools no trace calls; nil when nothing checks.
	tools map[string]int
}

func (r *recordingSink) File(ctx context.Context, f ingest.FileInfo) (ingest.FileSink, error) {
	fs, err := r.next.File(ctx, f)
	if fs == nil || err != nil {
		return fs, err
	}
	return &recordingFile{FileSink: fs, sink: r}, nil
}

type recordingFile struct {
	ingest.FileSink
	sink    *recordingSink
	pending []string
	tools   map[string]int
}

func (r *recordingFile) Trace(ctx context.Context, t *trace.Trace) error {
	err := r.FileSink.Trace(ctx, t)
	if fewer := (*ingest.FewerSteps)(nil); errors.As(err, &fewer) {
		return fmt.Errorf("%w. Use --replace to replace it", err)
	}
	if err == nil {
		r.pending = append(r.pending, t.ID)
		if r.sink.tools != nil {
			for i := range t.Steps {
				if tool := t.Steps[i].Tool; tool != "" {
					if r.tools == nil {
						r.tools = map[string]int{}
					}
					r.tools[tool]++
				}
			}
		}
	}
	return err
}

func (r *recordingFile) Close(ctx context.Context, res ingest.FileResult) error {
	if err := r.FileSink.Close(ctx, res); err != nil {
		return err
	}
	r.sink.mu.Lock()
	defer r.sink.mu.Unlock()
	*r.sink.ids = append(*r.sink.ids, r.pending...)
	for tool, n := range r.tools {
		r.sink.tools[tool] += n
	}
	return nil
}

// readWorkers is how many files a walk reads at once: one more than the
// cores, so that the cores decode and check files while one file's traces
// wait for the store, which writes one at a time (on 2 cores and 5,000
// small runs, three workers took 5-8% less time than two). Each worker
// holds a file's trace, so there are at most 8; small files are read ten
// times as many at once (see ingest.Options.Workers).
func readWorkers() int { return min(runtime.GOMAXPROCS(0)+1, 8) }
