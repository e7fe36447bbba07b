// Command faultline tells people who build LLM agents why their agents fail:
// it ingests agent traces, finds MAST failure modes in them, and summarises a
// cohort per model.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/config"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/rules"
)

// Exit statuses.
const (
	exitOK        = 0
	exitDataError = 1 // the command ran, but some input could not be read
	exitFailure   = 2 // the command could not do its job (bad flags, no database)
)

// gcPercent is the garbage collector's target unless $GOGC sets one: the
// heap may grow to three times what is live between collections, not
// twice. faultline's heavy work builds large live structures (a label set,
// a trace, the rows of a batch) from a stream of short-lived values, and at
// Go's default of 100 the collector rescans them again and again while
// they grow. Measured on 2 cores: 5,000 small traces ingested in 10.9–11.8
// s instead of 12.4–12.6 (peak RSS 70 MB against 57).
const gcPercent = 200

// reportGCPercent is the target of faultline report, which reads a whole
// store into a cohort whose live structures hold few pointers for the
// collector to scan: there, collecting often costs less than the memory
// fresh from the system that a larger heap takes. Measured on 2 cores, the
// report of 100,000 traces took 0.30–0.35 s at 50 against 0.34–0.38 at
// 200, and of a million traces 2.45–2.60 s and 258–262 MB against 2.78–2.87
// s and 363–375 MB. The server keeps gcPercent: its agreement page, which
// builds label sets of many small values, took 0.54 s at 200 and 0.60 at
// 100.
const reportGCPercent = 50

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errDataProblems marks a command that finished but met bad input, which it
// already reported line by line.
var errDataProblems = errors.New("some input could not be read")

// app carries what every command shares.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	dbPath         string
	configPath     string // --config; "" reads ./faultline.yaml when present
	rulesPath      string // --rules; "" reads the settings file's rules
	rules          *rules.Set
	verbose        bool
	quiet          bool
	cpuProfile     string // --cpuprofile: where to write a CPU profile of the command
	memProfile     string // --memprofile: where to write a profile of its allocations
	stopProfile    func() error
	log            *slog.Logger
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if a.stopProfile != nil {
		if perr := a.stopProfile(); perr != nil && err == nil {
			err = perr
		}
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errDataProblems):
		return exitDataError
	default:
		// An error may quote what a trace holds (an id it matched, a name).
		fmt.Fprintf(stderr, "faultline: %s\n", report.PrintableLines(err.Error()))
		return exitFailure
	}
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "faultline",
		Short: "Find out why LLM agents fail",
		Long: `faultline reads LLM-agent traces (Codex/ITBench rollouts, MAD, Who&When, tau-bench,
Magentic-One, Inspect, ATIF, Docent, OpenAI chat logs, OpenTelemetry GenAI), finds
MAST failure modes in them with deterministic detectors and an optional LLM judge,
scores ITBench diagnoses, and reports what fails, where, and which fix buys the most.

Start with:  faultline analyze examples/
Then browse: faultline serve`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			level := slog.LevelWarn
			if a.verbose {
				level = slog.LevelDebug
			}
			a.log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level}))
			if !a.quiet {
				noticeDeprecated(cmd, a.stderr)
			}
			if a.cpuProfile != "" || a.memProfile != "" {
				stop, err := startProfiles(a.cpuProfile, a.memProfile)
				if err != nil {
					return err
				}
				a.stopProfile = stop
			}
			return nil
		},
	}
	defaultDB := store.DefaultPath
	if env := os.Getenv("FAULTLINE_DB"); env != "" {
		defaultDB = env
	}
	root.PersistentFlags().StringVar(&a.dbPath, "db", defaultDB, "database: a SQLite file, or a postgres:// URL (also $FAULTLINE_DB)")
	// Help shows a URL from the environment without its password.
	root.PersistentFlags().Lookup("db").DefValue = displayDB(defaultDB)
	root.PersistentFlags().StringVar(&a.configPath, "config", "", "settings `FILE`: model aliases, the judge's endpoint (default ./"+config.DefaultFile+" when present)")
	root.PersistentFlags().StringVar(&a.rulesPath, "rules", "", "rule `FILE`: detectors of your own, written as data (default: the rules section of the settings file)")
	root.PersistentFlags().BoolVarP(&a.verbose, "verbose", "v", false, "log what is being done, file by file")
	root.PersistentFlags().BoolVarP(&a.quiet, "quiet", "q", false, "print errors only, not notices")
	// For whoever measures faultline itself (bench/ scripts), not for users.
	root.PersistentFlags().StringVar(&a.cpuProfile, "cpuprofile", "", "write a CPU profile of the command to `FILE`")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentFlags().StringVar(&a.memProfile, "memprofile", "", "write a profile of the command's allocations to `FILE`")
	_ = root.PersistentFlags().MarkHidden("memprofile")
	root.AddCommand(a.ingestCommand(), a.lsCommand(), a.showCommand(), a.analyzeCommand(), a.reportCommand(), a.checkCommand(), a.evalCommand(), a.judgeCommand(), a.scoreCommand(), a.detectorsCommand(), a.modesCommand(), a.synthCommand(), a.receiveCommand(), a.serveCommand(), a.labelsCommand(), a.exportCommand(), a.diffCommand(), a.versionCommand(), a.workerCommand(), a.guardCommand(), a.rulesCommand(), a.discoverCommand())
	root.CompletionOptions.HiddenDefaultCmd = true
	return root
}

// settings reads the settings file --config names, or ./faultline.yaml
// when present; without either, the built-in rules alone apply.
func (a *app) settings() (*config.File, error) {
	path, err := config.Find(a.configPath)
	if err != nil {
		return nil, err
	}
	return config.Load(path)
}

// modelAliases is the alias table of the settings file.
func (a *app) modelAliases() (store.ModelAliases, error) {
	f, err := a.settings()
	if err != nil {
		return nil, err
	}
	return f.Models, nil
}
