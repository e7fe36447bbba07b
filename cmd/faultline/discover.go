package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"gopkg.in/yaml.v3"

	"github.com/faultline/faultline/internal/config"
	"github.com/faultline/faultline/internal/discover"
	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/rules"
)

// discoverFlags are the flags of faultline discover.
type discoverFlags struct {
	filter     store.Filter
	minFailed  int
	limit      int
	kind       string
	lastCalls  int
	similarity float64
	markdown   bool
	json       bool
	// name asks the judge's model to name each pattern shown; judge holds
	// the judge's flags discover takes.
	name      bool
	nameModel string
	judge     judgeFlags
	// saveRule turns the pattern of this ID into a rule, appended to the
	// rules file, of mode ruleMode (or the one the pattern has).
	saveRule, ruleMode string
}

func (a *app) discoverCommand() *cobra.Command {
	var f discoverFlags
	cmd := &cobra.Command{
		Use:   "discover [filters]",
		Short: "Group failing runs into recurring failure patterns, without a model",
		Long: `Find the failures that recur across runs, with no model and no labels: each failed run
contributes signatures, and signatures that many failed runs share (and few successful
ones) are patterns worth a name, a rule, or a fix.

  errors    the first meaningful line of each tool result that failed (an error, or
            a non-zero exit code), prefixed by the tool's name
  endings   the run's last 3 tool calls (tool and command head: shell:kubectl get)
            and how it ended (a final answer, a message, an error, a failed result);
            and how it ended whatever the calls before ("… ⇒ ends with a message")
  findings  each detector finding's mode and the text at the first step it cites

Texts are normalised first: numbers, hex ids, UUIDs, pod and replica-set suffixes,
IP addresses, URLs, times and dates, quoted ids and long quoted texts are masked, and a
path keeps its last element only (the directories are where a run worked; the file is
what failed). Signatures alike in at least 75% of their words are merged (--similarity);
endings merge only when their calls are the same (--last-calls sets how many).

Patterns that exactly the same runs show are one, the others listed with it. Each
pattern is counted once per run, over the runs with a decided outcome (the primary
outcome, as report takes it); runs with none are left out and counted. For each: the
failed and successful runs with it, the lift (how much more common in failures), Fisher's
exact test with its Benjamini-Hochberg q over every pattern tested, and the class the
cohort report's rule gives (fatal, non-fatal, inconclusive, too few to call), the runs
by model, and quotes of the steps, with their trace and step. Patterns are ranked by the
failed runs they cover, then by lift; an ID (a hash of the pattern's signature) names
each one from run to run.

The filters are those of ls and report (--model, --system, --scenario, --trace-format,
--outcome, --mode, --source, --search, --path); --source also chooses the annotation
sources whose findings make finding signatures (the detectors by default).

Output: a ranked table (default), --markdown, or --json (every pattern with its traces).

--name asks a model, as faultline judge does (the judge section of faultline.yaml, or
--name-model, --base-url, --api-key-env, ...), to name each pattern shown (the first --limit,
10 by default): a name, a sentence, and the MAST mode it is an instance of or "new".
An answer that is not that is asked for once more; a pattern left unnamed is reported as
failed, and the exit status is then 1.

--save-rule ID turns pattern ID (or a unique prefix) into a rule of the rule file format
and appends it to the rule file (--rules FILE, else the settings file: --config, or
./faultline.yaml, made when there is none), then loads the file to check
it: an error pattern becomes a match on the tool's results whose text matches the
pattern's template (its masked parts as \d+, [0-9A-Fa-f]+, \S+ ..., the rest literally),
a finding pattern a match on the text or arguments of steps of its kind. The rule's mode
is --rule-mode, else the mode a model named (with --name), else a finding pattern's own.`,
		Example: `  faultline discover
  faultline discover --model gpt-oss-120b --kind errors --limit 10
  faultline discover --json > patterns.json
  faultline discover --name --name-model gpt-4.1-mini --limit 5
  faultline discover --save-rule 3fc0203b2a --rule-mode FM-2.3 --rules rules.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runDiscover(cmd, &f)
		},
	}
	registerFilters(cmd, &f.filter, filterNames(filterLimit)...)
	cmd.Flags().IntVar(&f.minFailed, "min-failed", 2, "report only patterns that at least `N` failed runs show")
	cmd.Flags().IntVar(&f.limit, "limit", 0, "show the first `N` patterns of the ranking (0: all)")
	cmd.Flags().StringVar(&f.kind, "kind", "all", "signatures to find: errors, endings, findings or all (several: comma-separated)")
	cmd.Flags().IntVar(&f.lastCalls, "last-calls", discover.DefaultLastCalls, "how many of a run's last tool calls its ending shows")
	cmd.Flags().Float64Var(&f.similarity, "similarity", discover.DefaultSimilarity, "merge signatures whose words are at least this alike (Jaccard, 0 to 1; 1: the same words)")
	cmd.Flags().BoolVar(&f.markdown, "markdown", false, "print GitHub Markdown")
	cmd.Flags().BoolVar(&f.json, "json", false, "print JSON")
	cmd.MarkFlagsMutuallyExclusive("markdown", "json")
	cmd.Flags().BoolVar(&f.name, "name", false, "ask the judge's model to name each pattern shown (its name, a sentence, a MAST mode or new)")
	cmd.Flags().StringVar(&f.nameModel, "name-model", "", "the model that names patterns, as the endpoint knows it (default: judge.model of faultline.yaml; --model selects the traces' model)")
	cmd.Flags().StringVar(&f.judge.baseURL, "base-url", judge.DefaultClientOptions.BaseURL, "API root of an OpenAI-compatible endpoint")
	cmd.Flags().StringVar(&f.judge.apiKeyEnv, "api-key-env", "", "environment variable holding the API key (default FAULTLINE_API_KEY, then OPENAI_API_KEY)")
	cmd.Flags().DurationVar(&f.judge.timeout, "timeout", defaultTimeout, "time limit of one call")
	cmd.Flags().IntVar(&f.judge.retries, "retries", defaultRetries, "retries of a call after a 429, a 5xx, a timeout or a network error")
	cmd.Flags().Float64Var(&f.judge.temperature, "temperature", 0, "sampling temperature (negative: send none)")
	cmd.Flags().StringVar(&f.saveRule, "save-rule", "", "append pattern `ID` to the rules file as a rule")
	cmd.Flags().StringVar(&f.ruleMode, "rule-mode", "", "the mode (a MAST or SYS `CODE`, or one the rules file declares) of the rule --save-rule writes")
	return cmd
}

// parseKinds reads --kind.
func parseKinds(s string) ([]discover.Kind, error) {
	var kinds []discover.Kind
	for _, k := range strings.Split(s, ",") {
		switch k = strings.TrimSpace(k); k {
		case "all":
			return nil, nil
		case string(discover.KindError), string(discover.KindEnding), string(discover.KindFinding):
			kinds = append(kinds, discover.Kind(k))
		default:
			return nil, fmt.Errorf("--kind: %q is not errors, endings, findings or all", k)
		}
	}
	return kinds, nil
}

// namedByDefault is how many patterns --name names without --limit.
const namedByDefault = 10

func (a *app) runDiscover(cmd *cobra.Command, f *discoverFlags) error {
	ctx := cmd.Context()
	kinds, err := parseKinds(f.kind)
	if err != nil {
		return err
	}
	if f.minFailed < 1 || f.limit < 0 || f.lastCalls < 1 || f.similarity <= 0 || f.similarity > 1 {
		return errors.New("--min-failed and --last-calls must be at least 1, --limit not negative, and --similarity above 0 and at most 1")
	}
	var namer *judge.OpenAI
	var nameOpt discover.NameOptions
	if f.name {
		if namer, nameOpt, err = a.namer(cmd, f); err != nil {
			return err
		}
	}
	st, err := a.readStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	limit := f.limit
	switch {
	case f.saveRule != "":
		limit = 0 // any pattern may be saved, shown or not
	case f.name && limit == 0:
		limit = namedByDefault
	}
	res, err := a.discover(ctx, st, f, kinds, limit)
	if err != nil {
		return err
	}
	if f.saveRule != "" {
		return a.saveRule(ctx, f, res, namer, nameOpt)
	}
	failed := 0
	if namer != nil {
		if failed, err = a.namePatterns(ctx, namer, nameOpt, res.Patterns); err != nil {
			return err
		}
	}
	switch {
	case f.json:
		err = writeJSON(a.stdout, res)
	case f.markdown:
		err = writeDiscoveryMarkdown(a.stdout, res)
	default:
		err = writeDiscoveryText(a.stdout, res)
	}
	if err == nil && failed > 0 {
		fmt.Fprintf(a.stderr, "%d of %d patterns could not be named: see the errors above\n", failed, len(res.Patterns))
		return errDataProblems
	}
	return err
}

// namer is the client --name asks, with the judge's settings (the judge
// section of the settings file under the flags given), and the model.
func (a *app) namer(cmd *cobra.Command, f *discoverFlags) (*judge.OpenAI, discover.NameOptions, error) {
	var none discover.NameOptions
	file, err := a.settings()
	if err != nil {
		return nil, none, err
	}
	cfg, err := f.judge.settings(cmd, file.Path)
	if err != nil {
		return nil, none, err
	}
	// --model selects traces here: the model that names is the settings
	// file's, or --name-model.
	cfg.Model = ""
	if file.Path != "" {
		fc, err := judge.LoadConfig(file.Path)
		if err != nil {
			return nil, none, err
		}
		cfg.Model = fc.Model
	}
	if f.nameModel != "" {
		cfg.Model = f.nameModel
	}
	if cfg.Model == "" {
		return nil, none, errors.New("--name: no model: give --name-model or set judge.model in the settings file")
	}
	key, keyFrom := apiKey(cfg.APIKeyEnv)
	if err := judge.Preflight(cmd.Context(), cfg.BaseURL, key, keyFrom+" (or name another variable with --api-key-env)"); err != nil {
		return nil, none, err
	}
	// The client's json_schema format is the judge's annotation schema: a
	// name is asked for as any JSON object, and checked here.
	format := judge.FormatObject
	if cfg.ResponseFormat == string(judge.FormatNone) {
		format = judge.FormatNone
	}
	temperature := cfg.Temperature
	if *temperature < 0 {
		temperature = nil
	}
	return a.judgeClient(cfg, key, format, 2), discover.NameOptions{Model: cfg.Model, Temperature: temperature, MaxTokens: cfg.MaxTokens}, nil
}

// discover runs discovery over the traces the filters keep, with a
// progress line on stderr while steps are read.
func (a *app) discover(ctx context.Context, st database, f *discoverFlags, kinds []discover.Kind, limit int) (*discover.Result, error) {
	aliases, err := a.modelAliases()
	if err != nil {
		return nil, err
	}
	opt := discover.Options{Sources: f.filter.Sources, Kinds: kinds, MinFailed: f.minFailed, Limit: limit,
		LastCalls: f.lastCalls, Similarity: f.similarity, Aliases: aliases}
	if filtered(f.filter) {
		filter := f.filter
		filter.Aliases = aliases
		traces, err := st.List(ctx, filter)
		if err != nil {
			return nil, err
		}
		if len(traces) == 0 {
			why, err := noMatch(ctx, st, filter)
			if err != nil {
				return nil, err
			}
			return nil, errors.New(why)
		}
		opt.IDs = summaryIDs(traces)
	}
	if !a.quiet {
		opt.Progress = a.discoverProgress()
	}
	return discover.Discover(ctx, st, opt)
}

// namePatterns has the model name each pattern, saying on stderr what it
// does and each pattern it could not name; it returns how many those were.
func (a *app) namePatterns(ctx context.Context, c *judge.OpenAI, opt discover.NameOptions, patterns []*discover.Pattern) (int, error) {
	if !a.quiet {
		fmt.Fprintf(a.stderr, "discover: asking %s to name %d patterns\n", opt.Model, len(patterns))
	}
	if err := discover.NamePatterns(ctx, c, patterns, opt); err != nil {
		return 0, err
	}
	failed := 0
	for _, p := range patterns {
		if p.Naming.Status != discover.Named {
			failed++
			fmt.Fprintf(a.stderr, "pattern %s: naming failed: %s\n", p.ID, report.Printable(p.Naming.Error))
		}
	}
	return failed, nil
}

// saveRule turns the pattern --save-rule names into a rule, appends it to
// the rules file, and loads the file again to check that it holds the
// rule, which it prints.
func (a *app) saveRule(ctx context.Context, f *discoverFlags, res *discover.Result, namer *judge.OpenAI, opt discover.NameOptions) error {
	var p *discover.Pattern
	for _, c := range res.Patterns {
		if strings.HasPrefix(c.ID, strings.ToLower(f.saveRule)) {
			if p != nil {
				return fmt.Errorf("--save-rule %s: more than one pattern has an ID that starts so (%s, %s)", f.saveRule, p.ID, c.ID)
			}
			p = c
		}
	}
	if p == nil {
		return fmt.Errorf("--save-rule %s: no pattern of these traces has that ID (with --min-failed %d, --kind %s and the same filters it was found with)",
			f.saveRule, f.minFailed, f.kind)
	}
	if namer != nil {
		if _, err := a.namePatterns(ctx, namer, opt, []*discover.Pattern{p}); err != nil {
			return err
		}
	}
	sp, err := discover.RuleFor(p, f.ruleMode)
	if err != nil {
		return err
	}
	file, load, err := a.rulesFile()
	if err != nil {
		return err
	}
	if file == "" {
		file = config.DefaultFile
	}
	if err := rules.AppendRule(file, sp); err != nil {
		return err
	}
	set, err := load(file)
	if err != nil {
		return fmt.Errorf("the rule was added, but %s no longer loads: %w", file, err)
	}
	for _, r := range set.Rules {
		if r.Name == sp.Name {
			text, err := yaml.Marshal([]rules.Spec{sp})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Added rule %s (line %d of %s), which loads:\n\n%s", sp.Name, r.Line, file, report.PrintableLines(string(text)))
			return nil
		}
	}
	return fmt.Errorf("the rule %s was added, but %s loads without it", sp.Name, file)
}

// discoverProgress prints how many traces have been read: in place at
// most every second on a terminal, otherwise a line every ten seconds,
// and the last count always.
func (a *app) discoverProgress() func(done, total int) {
	terminal := isTerminal(a.stderr)
	every := 10 * time.Second
	if terminal {
		every = time.Second
	}
	start := time.Now()
	last := start
	return func(done, total int) {
		now := time.Now()
		final := done == total
		if !final && now.Sub(last) < every {
			return
		}
		last = now
		line := fmt.Sprintf("discover: read the steps of %d of %d traces (%s)", done, total, now.Sub(start).Round(100*time.Millisecond))
		switch {
		case terminal && final:
			fmt.Fprintf(a.stderr, "\r\033[K%s\n", line)
		case terminal:
			fmt.Fprintf(a.stderr, "\r\033[K%s", line)
		default:
			fmt.Fprintln(a.stderr, line)
		}
	}
}

// discoverySummary is what the output says before the patterns.
func discoverySummary(res *discover.Result) []string {
	kinds := make([]string, len(res.Kinds))
	for i, k := range res.Kinds {
		kinds[i] = string(k)
	}
	endings := ""
	if slices.Contains(res.Kinds, discover.KindEnding) {
		endings = fmt.Sprintf(" (endings show the last %d calls)", res.LastCalls)
	}
	lines := []string{
		fmt.Sprintf("%d traces: %d failed, %d succeeded, %d undecided (left out: no decided outcome).", res.Traces, res.Failed, res.Succeeded, res.Undecided),
		fmt.Sprintf("Signatures: %s%s; %d distinct. %d patterns cover at least %d failed runs; q-values are adjusted over them.",
			strings.Join(kinds, ", "), endings, res.Signatures, res.Tested, res.MinFailed),
	}
	if len(res.Patterns) < res.Tested {
		lines = append(lines, fmt.Sprintf("The first %d are shown.", len(res.Patterns)))
	}
	return lines
}

// patternRow is a pattern's cells in the ranked table.
func patternRow(rank int, p *discover.Pattern, width int) []string {
	return []string{fmt.Sprint(rank), p.ID, string(p.Kind), cut(p.Title(), width), share(p.Failed.K, p.Failed.N), share(p.Succeeded.K, p.Succeeded.N),
		p.LiftText(), fmt.Sprintf("%.3g", p.Test.Q), p.Class}
}

var patternHeader = []string{"#", "id", "kind", "pattern", "failed", "succeeded", "lift", "q", "class"}

func share(k, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d/0", k)
	}
	return fmt.Sprintf("%d/%d %.0f%%", k, n, 100*float64(k)/float64(n))
}

func cut(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	return string([]rune(s)[:width-1]) + "…"
}

func modelsText(p *discover.Pattern) string {
	var parts []string
	for _, m := range p.Models {
		parts = append(parts, fmt.Sprintf("%s %d failed, %d succeeded", m.Model, m.Failed, m.Succeeded))
	}
	return strings.Join(parts, "; ")
}

// namingText is what a model made of a pattern, or that it failed.
func namingText(n *discover.Naming) string {
	if n.Status != discover.Named {
		return "naming failed: " + n.Error
	}
	return fmt.Sprintf("named: %s (%s): %s", n.Name, n.Code, n.Description)
}

func quoteText(q discover.Quote) string {
	at := fmt.Sprintf("trace %s", q.Trace)
	if q.Step >= 0 {
		at += fmt.Sprintf(", step %d", q.Step)
	}
	return fmt.Sprintf("%q (%s)", q.Text, at)
}

// ruleText says how a pattern's class is called.
func ruleText(res *discover.Result) string {
	return "Class: the cohort report's rule, a pattern in place of a mode and the traces selected as the group. " + res.Rule.Text
}

// writeDiscoveryText prints the ranked table, then each pattern whole: its
// signature, its variants, its runs by model and a quote.
func writeDiscoveryText(w io.Writer, res *discover.Result) error {
	var b strings.Builder
	b.WriteString("faultline discover: recurring failure patterns\n")
	for _, line := range discoverySummary(res) {
		b.WriteString(report.Wrap(line, 100, "") + "\n")
	}
	if len(res.Patterns) == 0 {
		why := "no signature is shared by enough failed runs (see --min-failed)."
		switch {
		case res.Failed == 0 && res.Undecided > 0:
			why = "no run of a decided outcome failed, and runs with none are left out: " +
				"score them first (faultline score --ground-truth PATH, or --labels FILE)."
		case res.Failed == 0:
			why = "no run among these failed."
		}
		b.WriteString("\n" + report.Wrap("No pattern: "+why, 100, "") + "\n")
		return writeString(w, report.PrintableLines(b.String()))
	}
	b.WriteString("\n")
	t := report.Table{Header: patternHeader}
	for i, p := range res.Patterns {
		t.Rows = append(t.Rows, patternRow(i+1, p, 60))
	}
	if err := writeString(w, b.String()); err != nil {
		return err
	}
	if err := t.Write(w); err != nil {
		return err
	}
	b.Reset()
	for i, p := range res.Patterns {
		fmt.Fprintf(&b, "\n%d. %s  %s %s\n", i+1, p.ID, p.Kind, p.Title())
		if n := p.Naming; n != nil {
			fmt.Fprintf(&b, "   %s\n", namingText(n))
		}
		if p.Merged > 0 {
			fmt.Fprintf(&b, "   merged with %d similar signatures, such as: %s\n", p.Merged, p.Variants[0])
		}
		for _, also := range p.Also {
			fmt.Fprintf(&b, "   the same runs show: %s\n", also)
		}
		fmt.Fprintf(&b, "   by model: %s\n", modelsText(p))
		for _, q := range p.Quotes[:min(1, len(p.Quotes))] {
			fmt.Fprintf(&b, "   %s\n", quoteText(q))
		}
	}
	fmt.Fprintf(&b, "\n%s\n", ruleText(res))
	return writeString(w, report.PrintableLines(b.String()))
}

func writeString(w io.Writer, s string) error {
	_, err := io.WriteString(w, s)
	return err
}

// writeDiscoveryMarkdown prints the same as a Markdown table, with a
// quote per pattern in its last column.
func writeDiscoveryMarkdown(w io.Writer, res *discover.Result) error {
	var b strings.Builder
	b.WriteString("## Recurring failure patterns\n\n")
	for _, line := range discoverySummary(res) {
		b.WriteString(report.Printable(line) + "\n")
	}
	b.WriteString("\n")
	if err := writeString(w, b.String()); err != nil {
		return err
	}
	t := report.Table{Header: append(append([]string{}, patternHeader...), "by model", "quote")}
	for i, p := range res.Patterns {
		quote := ""
		if len(p.Quotes) > 0 {
			quote = quoteText(p.Quotes[0])
		}
		row := append(patternRow(i+1, p, 0), modelsText(p), quote)
		if p.Naming != nil {
			row[3] = namingText(p.Naming) + ". " + row[3]
		}
		t.Rows = append(t.Rows, row)
	}
	if err := t.WriteMarkdown(w); err != nil {
		return err
	}
	return writeString(w, "\n"+report.Printable(ruleText(res))+"\n")
}
