package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/score"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/web"
)

func (a *app) serveCommand() *cobra.Command {
	var addr, token, groundTruth string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "A local web application: dashboard, trace viewer, labelling, agreement",
		Long: `Serve the database as a web application in the browser, offline (every asset is
built in): the cohort report's figures, each linked to the traces behind it, filtered
by model, system, scenario, outcome and annotation source; the traces, searched
(full text over every step), filtered, sorted and paged; each trace as a timeline of
its steps with every finding at its steps, its quote marked, the sources side by side,
the outcome and diagnosis and the judges' records; labelling (a queue of the traces
you have not labelled, 14 modes each present, absent or unsure, steps and quotes as
evidence, checked against the trace) with label files in and out; and agreement
between any sources (Cohen's kappa, precision, recall, F1 with bootstrap intervals,
Fleiss' kappa for three or more, and the list of disagreements).

It listens on 127.0.0.1:7474 (loopback) unless --addr says otherwise. Anywhere else
it needs a token (--token or $FAULTLINE_TOKEN: at least ` + strconv.Itoa(web.MinTokenLength) + ` characters of printable
ASCII, no spaces), required on every request: open the address it prints once (the
token in it sets a cookie) or send "Authorization: Bearer <token>". The token travels in clear over plain HTTP: beyond
a trusted network, put TLS in front (or use an SSH tunnel to the loopback address).

Labels are stored as the annotation source human:<name>, with the name you give on
the Label page. The trace viewer shows which ground-truth group each blamed entity
matched when the run was scored (faultline analyze or score); --ground-truth scores
every run against the given ground truth instead.`,
		Example: `  faultline serve
  faultline serve --addr 127.0.0.1:8080 --ground-truth examples/itbench-zero/ground_truths.json
  FAULTLINE_TOKEN=$(openssl rand -hex 16) faultline serve --addr 0.0.0.0:7474`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			token, err := serveToken(token, cmd.Flags().Changed("token"))
			if err != nil {
				return err
			}
			// The address is checked before anything is said of serving on it.
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			defer ln.Close()
			if err := web.CheckAddress(ln.Addr(), token); err != nil {
				return err
			}
			var set score.Set
			if groundTruth != "" {
				var problems []string
				if set, problems, err = score.LoadPath(groundTruth, ""); err != nil {
					return fmt.Errorf("ground truth: %w", err)
				}
				for _, p := range problems {
					fmt.Fprintf(a.stderr, "notice: %s\n", p)
				}
			}
			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			aliases, err := a.modelAliases()
			if err != nil {
				return err
			}
			ruleSet, err := a.ruleSet()
			if err != nil {
				return err
			}
			srv, err := web.New(web.Config{Store: st, Token: token, GroundTruth: set, Aliases: aliases, CodeNames: ruleSet.CodeNames(), Log: a.log})
			if err != nil {
				return err
			}
			if n, err := st.Count(ctx, store.TraceQuery{}); err != nil {
				return err
			} else if n == 0 {
				fmt.Fprintf(a.stderr, "notice: %s holds no traces yet: faultline ingest PATH (or faultline analyze examples/) fills it, and the pages show them on reload\n", a.dbName())
			}
			where := "http://" + ln.Addr().String() + "/"
			if token != "" {
				where += "?" + url.Values{"token": {token}}.Encode()
			}
			fmt.Fprintf(a.stderr, "serving %s on %s (Ctrl-C stops)\n", a.dbName(), where)
			return srv.Serve(ctx, ln)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:7474", "address to listen on, as `HOST:PORT`; beyond loopback a token is required")
	f.StringVar(&token, "token", "", "require this `TOKEN` on every request (also $FAULTLINE_TOKEN)")
	f.StringVar(&groundTruth, "ground-truth", "", "ITBench ground truth (a file or directory), to show what each diagnosed entity matched")
	return cmd
}

// serveToken is the token serve requires: --token when given, else
// $FAULTLINE_TOKEN when set. A token given either way must be one (see
// web.CheckToken): an empty one is a mistake, an unset shell variable as
// often as not, rather than a wish to serve without.
func serveToken(flag string, flagGiven bool) (string, error) {
	name, token := "--token", flag
	if !flagGiven {
		var set bool
		if token, set = os.LookupEnv("FAULTLINE_TOKEN"); !set {
			return "", nil
		}
		name = "$FAULTLINE_TOKEN"
	}
	if token == "" {
		return "", fmt.Errorf("%s is empty: give a token, e.g. $(openssl rand -hex 16), or none at all to serve on loopback only", name)
	}
	if err := web.CheckToken(token); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return token, nil
}
