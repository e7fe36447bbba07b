package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/faultline/faultline/internal/eval"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store"
)

// evalJSON is the JSON form of `eval`.
type evalJSON struct {
	Ingest      *ingestResult     `json:"ingest,omitempty"`
	Issues      []ingestIssue     `json:"issues"`
	Agreement   *eval.Agreement   `json:"agreement"`
	Attribution *eval.Attribution `json:"attribution,omitempty"`
	// Detectors holds each detector against the labels of its mode, when
	// the source evaluated is the detectors.
	Detectors []eval.DetectorRow `json:"detectors,omitempty"`
}

func (a *app) evalCommand() *cobra.Command {
	var (
		asJSON, markdown        bool
		labelsArg, labelsSource string
		ingestPaths             []string
		inf                     ingestFlags
		source                  = detect.Source
		filter                  store.Filter
		opt                     = eval.DefaultOptions
	)
	cmd := &cobra.Command{
		Use:   "eval --labels FILE|SOURCE [--source SOURCE]",
		Short: "Compare an annotation source with failure-mode labels: precision, recall, F1, kappa",
		Long: `Compare the failure modes an annotation source found with reference labels, mode
by mode: the traces compared, the confusion counts (TP, FP, FN, TN, the source
read as the prediction), precision, recall, F1 and Cohen's kappa, each with a 95%
interval: Wilson's score interval for precision, recall and accuracy, which
stays honest with few traces or none in disagreement; a percentile bootstrap
for F1 and kappa (traces resampled with replacement --bootstrap times from
--seed, so the same inputs give the same output; where every resample gives
the same value, no interval is shown); then all modes pooled (micro)
and averaged (macro), and FM-3.2 and FM-3.3 merged into one extra row, as
sources confuse the two. Where labels cite steps, it also counts how often the
source places a true positive at one of those steps, or within --within of one.
A statistic whose denominator is zero is printed as undefined (null in JSON).

--source is any annotation source in the database, picked as analyze --source
does: detector (the default), judge:<model>, human:<name>, mad:annotator_1, or
a prefix such as mad (several sources are pooled: present when any says so).

--labels is a label file, or the name of a source in the database when no such
file exists (to compare two stored sources, e.g. two annotators):
  - MAD's human-labelled dataset: by default the annotators' consensus, present
    or absent when at least 2 of the 3 agree, otherwise unsure; or one of its
    sources with --labels-source (mad:annotator_1, mad:annotator_2, ...).
  - faultline's label format, JSON (an array of objects, or one object a line)
    or CSV with a header, one label per record: trace (the trace id, as
    faultline ls shows it), mode (FM-1.3, 1.3 or the mode's name), present
    (true, false, or unsure: null or empty), and optionally steps (step
    indices as faultline show numbers them; a JSON array, or "4;9" in CSV) and
    note (ignored). Silence is absence: a trace with any label in the file is
    labelled for every mode the file labels anywhere, absent where not listed.

Which pairs count: a trace and mode is compared when both sides say present
or absent; a pair unsure on either side, or decided by one side only, is left
out (and counted). Detectors only report what they find: on the traces they
ran on, a mode they look for and did not report is absent, and eval first
re-runs them on traces whose findings came from another detector set. Any
other source's silence is no verdict.

The filters --model, --system, --scenario, --trace-format, --outcome, --search and
--path (those of ls) narrow the traces compared, and their labels.

Labels name traces by id, and the traces must be in the database: ingest them
first, or give their files with --ingest (read as faultline ingest does).
Labels that cannot be used (a bad record, an unknown trace, a step the trace
does not have) are reported as file:line: message and the rest are compared;
the exit status is then 1.

Decisive errors: where the traces compared carry labels naming the agent and
step at which a run went irrecoverably wrong (Who&When's mistake agent and
step, stored as source human:whowhen), eval also measures failure attribution
as that benchmark does: on how many of them the source's earliest located
finding (of any MAST mode) is at a step of the labelled agent, at the labelled
step, and within --within steps of it; a trace the source located nothing on
counts as a miss. To evaluate on Who&When alone: --labels human:whowhen.

--json prints {ingest, issues, agreement, attribution}. agreement holds source and labels
(each {name, detail, sources, traces, decided, implied, unsure}), traces,
bootstrap {replicates, seed, level}, within, modes[], merged, micro and macro.
Each row is {mode, name, pairs, excluded, tp, fp, fn, tn, accuracy, precision,
recall, f1, kappa, location}: each statistic {value, lo, hi}, null when
undefined; location {pairs, exact, within} or null; macro {modes, accuracy,
precision, recall, f1, kappa}. attribution, present when decisive errors are
labelled, is {source, labels, traces, attributed, bootstrap, within, agent,
step, near, rows}: agent, step and near each {correct, value, lo, hi}, each
row {trace, label_agent, label_step, mode, agent, step, agent_hit, step_hit,
near_hit}.`,
		Example: `  faultline eval --ingest MAD_human_labelled_dataset.json --labels MAD_human_labelled_dataset.json
  faultline eval --labels MAD_human_labelled_dataset.json --source mad:annotator_1
  faultline eval --labels MAD_human_labelled_dataset.json --labels-source mad:annotator_2 --source mad:annotator_1
  faultline eval --labels mad:annotator_1 --source mad:annotator_2
  faultline eval --labels reviewed.csv --source judge:gpt-4o --within 2
  faultline eval --labels reviewed.jsonl --json > agreement.json
  faultline eval --ingest whowhen/ --labels human:whowhen`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.Replicates < 0 || opt.Within < 0 {
				return fmt.Errorf("--bootstrap and --within take a number from 0")
			}
			ctx := cmd.Context()
			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			var out evalJSON
			reportIssue := func(i ingest.Issue) {
				out.Issues = append(out.Issues, ingestIssue{Severity: i.Severity.String(), Path: i.Path, Line: i.Line, Message: i.Message})
				if !asJSON && (!a.quiet || i.Severity == ingest.Error) {
					fmt.Fprintf(a.stderr, "%s: %s\n", i.Severity, i)
				}
			}
			if len(ingestPaths) > 0 {
				res, err := a.ingest(ctx, st, ingestPaths, inf, true, asJSON, nil)
				if err != nil {
					return err
				}
				out.Ingest = res
				if !asJSON && !a.quiet {
					fmt.Fprintln(a.stderr, res.line())
				}
			}
			ref, traces, err := a.referenceLabels(cmd, st, labelsArg, labelsSource, source, reportIssue)
			if err != nil {
				return err
			}
			if traces, err = a.narrowLabels(cmd, st, filter, ref, traces); err != nil {
				return err
			}
			// The compared source is read indexed, as the comparison reads
			// it, not made a label set first only to be indexed again.
			src, err := eval.StoredLabelSets(ctx, st, []string{source}, summaryIDs(traces))
			if err != nil {
				return err
			}
			refx := eval.Index(ref)
			out.Agreement = eval.AgreeLabels(src[0], refx, opt)
			out.Attribution, err = eval.Attribute(ctx, st, source, summaryIDs(traces), opt)
			if err != nil {
				return err
			}
			if source == detect.Source {
				if out.Detectors, err = eval.AgreeDetectors(ctx, st, refx); err != nil {
					return err
				}
			}
			compared := len(out.Agreement.Modes) > 0 || out.Agreement.Merged != nil || len(out.Agreement.System) > 0
			if !compared && out.Attribution == nil {
				return fmt.Errorf("nothing to compare: no trace has a mode decided by both %s (on %d traces) and the labels (on %d traces)",
					source, out.Agreement.Source.Traces, out.Agreement.Labels.Traces)
			}
			switch {
			case asJSON:
				if out.Issues == nil {
					out.Issues = []ingestIssue{}
				}
				err = writeJSON(a.stdout, out)
			case markdown:
				err = writeAgreementMarkdown(a.stdout, out.Agreement, out.Detectors)
			default:
				if compared {
					err = writeAgreement(a.stdout, out.Agreement, out.Detectors)
				}
				if err == nil && out.Attribution != nil {
					err = writeAttribution(a.stdout, out.Attribution, compared)
				}
			}
			if err != nil {
				return err
			}
			for _, i := range out.Issues {
				if i.Severity == ingest.Error.String() {
					return errDataProblems
				}
			}
			if out.Ingest != nil && out.Ingest.Errors > 0 {
				return errDataProblems
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&labelsArg, "labels", "", "label `FILE` (MAD human-labelled dataset, JSON, JSON Lines or CSV), or a source in the database")
	cmd.Flags().StringVar(&labelsSource, "labels-source", "", "from a MAD file, the labels of one `SOURCE` (mad:annotator_1, ...) instead of the annotators' consensus")
	cmd.Flags().StringVar(&source, "source", source, "annotation `SOURCE` to evaluate (detector, judge:<model>, human:<name>, mad:annotator_1, or a prefix such as mad)")
	cmd.Flags().StringSliceVar(&ingestPaths, "ingest", nil, "ingest the trace files or directories at `PATH` first (as faultline ingest does; repeatable)")
	inf.register(cmd)
	// --mode and --source would select traces by what the compared source
	// says, which biases its agreement (traces it marks a mode on have no
	// true negatives of it); --source names the source compared instead.
	registerFilters(cmd, &filter, filterNames(filterMode, filterSource, filterLimit)...)
	cmd.Flags().IntVar(&opt.Replicates, "bootstrap", opt.Replicates, "`N` bootstrap resamples for the 95% intervals of F1 and kappa (0: no intervals at all)")
	cmd.Flags().Uint64Var(&opt.Seed, "seed", opt.Seed, "seed of the bootstrap resampling")
	cmd.Flags().IntVar(&opt.Within, "within", opt.Within, "location tolerance: a true positive placed within `K` steps of a labelled step counts as near")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (fields in --help)")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the tables (per mode, per system code, per detector) as Markdown, without intervals")
	cmd.MarkFlagsMutuallyExclusive("json", "markdown")
	cmd.MarkFlagRequired("labels")
	return cmd
}

// referenceLabels loads the labels --labels names and the stored traces to
// compare on: a file's labels on the traces they name that are in the
// database, or a stored source's on the whole database. It re-runs the
// detectors first where a side is the detectors.
func (a *app) referenceLabels(cmd *cobra.Command, st database, arg, pick, source string, report func(ingest.Issue)) (*labels.Set, []store.Summary, error) {
	ctx := cmd.Context()
	detectors := func(s string) bool { return store.MatchSource(detect.Source, []string{s}) }
	_, statErr := os.Stat(arg)
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("--labels: %w", statErr)
	}
	if statErr != nil {
		// Not a file: a stored source, compared on every stored trace.
		if pick != "" {
			return nil, nil, fmt.Errorf("--labels-source picks one source of a MAD file; %s is not a file", arg)
		}
		traces, err := st.List(ctx, store.Filter{})
		if err != nil {
			return nil, nil, err
		}
		if detectors(source) || detectors(arg) {
			if err := a.redetect(cmd, st, traces); err != nil {
				return nil, nil, err
			}
		}
		ref, err := eval.StoredLabels(ctx, st, arg, summaryIDs(traces))
		if err != nil {
			return nil, nil, fmt.Errorf("--labels %s is no file, and %w", arg, err)
		}
		return ref, traces, nil
	}

	ref, issues, err := labels.ReadFile(ctx, arg, pick)
	for _, i := range issues {
		report(i)
	}
	if err != nil {
		return nil, nil, err
	}
	named := map[string]bool{}
	var ids []string
	for _, l := range ref.Labels {
		if !named[l.Trace] {
			named[l.Trace] = true
			ids = append(ids, l.Trace)
		}
	}
	if len(ids) == 0 {
		return nil, nil, fmt.Errorf("%s holds no usable labels", arg)
	}
	traces, err := st.List(ctx, store.Filter{Select: &store.Selection{IDs: ids}})
	if err != nil {
		return nil, nil, err
	}
	if len(traces) == 0 {
		return nil, nil, fmt.Errorf("none of the %d traces %s labels is in the database (%s): ingest them first, or give their files with --ingest", len(ids), arg, a.dbName())
	}
	steps := make(map[string]int, len(traces))
	for _, t := range traces {
		steps[t.ID] = t.Steps
	}
	for _, i := range ref.Check(steps) {
		report(i)
	}
	if detectors(source) {
		if err := a.redetect(cmd, st, traces); err != nil {
			return nil, nil, err
		}
	}
	return ref, traces, nil
}

// narrowLabels keeps, of the traces to compare on and their labels, those
// the filters select (all when none is set).
func (a *app) narrowLabels(cmd *cobra.Command, st database, f store.Filter, ref *labels.Set, traces []store.Summary) ([]store.Summary, error) {
	if !filtered(f) {
		return traces, nil
	}
	var err error
	if f.Aliases, err = a.modelAliases(); err != nil {
		return nil, err
	}
	f.Select = &store.Selection{IDs: summaryIDs(traces)}
	kept, err := st.List(cmd.Context(), f)
	if err != nil {
		return nil, err
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("the filters keep none of the %d traces to compare on", len(traces))
	}
	keep := make(map[string]bool, len(kept))
	for _, t := range kept {
		keep[t.ID] = true
	}
	ref.Labels = slices.DeleteFunc(ref.Labels, func(l labels.ModeLabel) bool { return !keep[l.Trace] })
	return kept, nil
}

func summaryIDs(traces []store.Summary) []string {
	ids := make([]string, len(traces))
	for i, t := range traces {
		ids[i] = t.ID
	}
	return ids
}

// writeAgreement prints the comparison as text: what was compared, one
// table of the statistics per mode, and one of locations when labels cite
// steps.
func writeAgreement(w io.Writer, ag *eval.Agreement, detectors []eval.DetectorRow) error {
	var b strings.Builder
	for _, side := range []struct {
		role string
		s    eval.Side
	}{{"source", ag.Source}, {"labels", ag.Labels}} {
		fmt.Fprintf(&b, "%s  %s: %d traces, %d decisions", side.role, side.s.Name, side.s.Traces, side.s.Decided)
		if side.s.Implied > 0 {
			fmt.Fprintf(&b, " (%d absences implied by silence)", side.s.Implied)
		}
		if side.s.Unsure > 0 {
			fmt.Fprintf(&b, ", %d unsure", side.s.Unsure)
		}
		b.WriteString("\n")
		if len(side.s.Sources) > 0 && (len(side.s.Sources) > 1 || side.s.Sources[0] != side.s.Name) {
			fmt.Fprintf(&b, "        sources: %s\n", strings.Join(side.s.Sources, ", "))
		}
		if side.s.Detail != "" {
			fmt.Fprintf(&b, "        %s\n", side.s.Detail)
		}
	}
	fmt.Fprintf(&b, "\n%d traces compared", ag.Traces)
	b.WriteString("; " + ag.Bootstrap.IntervalsText())
	b.WriteString("\n\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	modes, undefined := modeTable(ag, true)
	if err := modes.Write(w); err != nil {
		return err
	}
	if undefined {
		if _, err := io.WriteString(w, "\nundefined: a zero denominator. Precision needs the source to say present, recall the labels to;\nF1 either; kappa is undefined when both sides give one and the same verdict on every trace.\n"); err != nil {
			return err
		}
	}
	if degenerate(ag) {
		if _, err := io.WriteString(w, "\nno interval: every bootstrap resample gives the same value (nothing in disagreement to resample),\nwhich says nothing of how exact the value is.\n"); err != nil {
			return err
		}
	}
	if len(ag.System) > 0 {
		if _, err := io.WriteString(w, "\nSystem failures (not MAST modes, not pooled above)\n"); err != nil {
			return err
		}
		if err := systemTable(ag).Write(w); err != nil {
			return err
		}
	}
	if len(detectors) > 0 {
		if _, err := io.WriteString(w, "\nBy detector: each against the labels of the mode it claims (a mode's row above pools its detectors)\n"); err != nil {
			return err
		}
		if err := detectorTable(detectors).Write(w); err != nil {
			return err
		}
	}
	loc := report.Table{Header: []string{"mode", "pairs", "exact", fmt.Sprintf("within ±%d", ag.Within)}, NumericRight: true}
	for _, r := range rowsOf(ag) {
		if l := r.row.Location; l != nil {
			loc.Rows = append(loc.Rows, []string{r.label, fmt.Sprint(l.Pairs), shareCell(l.Exact, l.Pairs), shareCell(l.Within, l.Pairs)})
		}
	}
	if len(loc.Rows) == 0 {
		return nil
	}
	if _, err := io.WriteString(w, "\nLocation: true positives whose labels cite steps, placed by the source at one of them (exact) or near one\n"); err != nil {
		return err
	}
	return loc.Write(w)
}

// writeAgreementMarkdown prints the per-mode, per-system-code and
// per-detector tables as Markdown, point estimates only: the form the
// README's accuracy table is regenerated from.
func writeAgreementMarkdown(w io.Writer, ag *eval.Agreement, detectors []eval.DetectorRow) error {
	modes, _ := modeTable(ag, false)
	if err := modes.WriteMarkdown(w); err != nil {
		return err
	}
	if len(ag.System) > 0 {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		if err := systemTable(ag).WriteMarkdown(w); err != nil {
			return err
		}
	}
	if len(detectors) > 0 {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		return detectorTable(detectors).WriteMarkdown(w)
	}
	return nil
}

// modeTable lays out the per-mode rows (merged and micro included) and the
// macro row; undefined reports whether a statistic was undefined. Without
// intervals, only point estimates are shown.
func modeTable(ag *eval.Agreement, intervals bool) (report.Table, bool) {
	t := report.Table{Header: []string{"mode", "n", "TP", "FP", "FN", "TN", "left out", "precision", "recall", "F1", "kappa"}, NumericRight: true}
	undefined := false
	row := func(label string, counts []string, m eval.Metrics) {
		cells := append([]string{label}, counts...)
		for _, x := range []eval.Metric{m.Precision, m.Recall, m.F1, m.Kappa} {
			if !intervals {
				x.Lo, x.Hi = nil, nil
			}
			cells = append(cells, metricCell(x))
			undefined = undefined || x.Value == nil
		}
		t.Rows = append(t.Rows, cells)
	}
	for _, r := range rowsOf(ag) {
		row(r.label, countCells(r.row), r.row.Metrics)
	}
	if ag.Macro != nil {
		row("mean over modes (macro)", make([]string, 6), ag.Macro.Metrics)
	}
	return t, undefined
}

// degenerate reports whether a bootstrap interval of the mode table was
// degenerate.
func degenerate(ag *eval.Agreement) bool {
	var all []eval.Metrics
	for _, r := range rowsOf(ag) {
		all = append(all, r.row.Metrics)
	}
	if ag.Macro != nil {
		all = append(all, ag.Macro.Metrics)
	}
	for _, m := range all {
		if m.F1.Degenerate || m.Kappa.Degenerate || m.Precision.Degenerate || m.Recall.Degenerate {
			return true
		}
	}
	return false
}

func countCells(r *eval.Row) []string {
	return []string{fmt.Sprint(r.Pairs), fmt.Sprint(r.TP), fmt.Sprint(r.FP), fmt.Sprint(r.FN), fmt.Sprint(r.TN), fmt.Sprint(r.Excluded)}
}

// systemTable lays out the system codes' rows: counts, precision, recall.
func systemTable(ag *eval.Agreement) *report.Table {
	t := report.Table{Header: []string{"system code", "n", "TP", "FP", "FN", "TN", "left out", "precision", "recall"}, NumericRight: true}
	for i := range ag.System {
		r := &ag.System[i]
		p, rc := r.Precision, r.Recall
		p.Lo, p.Hi, rc.Lo, rc.Hi = nil, nil, nil, nil
		t.Rows = append(t.Rows, append(append([]string{r.Mode + " " + r.Name}, countCells(r)...), metricCell(p), metricCell(rc)))
	}
	return &t
}

// detectorTable lays out each detector against the labels of its mode.
func detectorTable(rows []eval.DetectorRow) *report.Table {
	t := report.Table{Header: []string{"detector", "mode", "n", "TP", "FP", "FN", "precision", "recall", "at a labelled step"}, NumericRight: true}
	for _, d := range rows {
		at := "-"
		if d.Located > 0 {
			at = shareCell(d.Exact, d.Located)
		}
		t.Rows = append(t.Rows, []string{d.Detector, d.Mode, fmt.Sprint(d.Pairs), fmt.Sprint(d.TP), fmt.Sprint(d.FP), fmt.Sprint(d.FN),
			metricCell(eval.Metric{Value: d.Precision}), metricCell(eval.Metric{Value: d.Recall}), at})
	}
	return &t
}

type labelledRow struct {
	label string
	row   *eval.Row
}

// rowsOf lists the rows with counts in print order: modes, merged, micro.
func rowsOf(ag *eval.Agreement) []labelledRow {
	var out []labelledRow
	for i := range ag.Modes {
		r := &ag.Modes[i]
		out = append(out, labelledRow{r.Mode + " " + r.Name, r})
	}
	if ag.Merged != nil {
		out = append(out, labelledRow{"FM-3.2+3.3 verification, merged", ag.Merged})
	}
	if ag.Micro != nil {
		out = append(out, labelledRow{"all modes (micro)", ag.Micro})
	}
	return out
}

// writeAttribution prints how well the source locates the decisive errors,
// beside the best results published on Who&When; after the agreement
// tables when there are some.
func writeAttribution(w io.Writer, at *eval.Attribution, after bool) error {
	var b strings.Builder
	if after {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Decisive errors: %d traces labelled with the agent and step that made the run fail (%s);\n", at.Traces, strings.Join(at.Labels, ", "))
	fmt.Fprintf(&b, "%s located a finding on %d. Its earliest located finding names:\n", at.Source, at.Attributed)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	t := report.Table{Header: []string{"attribution", "correct", "accuracy"}, NumericRight: true}
	for _, r := range []struct {
		label string
		s     eval.Share
	}{{"agent", at.Agent}, {"step", at.Step}, {fmt.Sprintf("step within ±%d", at.Within), at.Near}} {
		t.Rows = append(t.Rows, []string{r.label, shareCell(r.s.Correct, at.Traces), metricCell(r.s.Metric)})
	}
	if err := t.Write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "Best published on Who&When: %.1f%% agent-level, %.1f%% step-level accuracy.\n", 100*eval.WhoWhenBestAgent, 100*eval.WhoWhenBestStep)
	return err
}

// metricCell shows a value with its interval, or says it is undefined.
func metricCell(m eval.Metric) string {
	switch {
	case m.Value == nil:
		return "undefined"
	case m.Degenerate:
		return fmt.Sprintf("%.2f (no interval)", *m.Value)
	case m.Lo == nil:
		return fmt.Sprintf("%.2f", *m.Value)
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f]", *m.Value, *m.Lo, *m.Hi)
}

func shareCell(n, of int) string {
	return fmt.Sprintf("%d (%.0f%%)", n, 100*float64(n)/float64(of))
}
