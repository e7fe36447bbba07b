package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/faultline/faultline/internal/eval"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// The agreement page compares annotation sources on the stored traces, as
// `faultline eval --labels SOURCE` does: two of them mode by mode (Cohen's
// kappa, and precision, recall and F1 of the first against the second),
// and three or more together (Fleiss' kappa).

// maxConflicts caps the disagreements listed.
const maxConflicts = 200

type agreementView struct {
	Sources []string // sources and shared prefixes to choose from
	A, B    string
	Pair    *eval.Agreement
	Rows    []agreementRow
	// PairError says why the two could not be compared.
	PairError string
	// Disagreements are the traces and modes the two decide differently,
	// grouped by mode; Conflicts counts them all, More those not listed.
	Disagreements []modeConflicts
	Conflicts     int
	More          int

	Raters     []string // selected for Fleiss' kappa
	Multi      *eval.Raters
	MultiError string
	Elapsed    time.Duration
	// Built is how long the comparison took; Cached says it was kept from
	// an earlier view of the same database.
	Built       time.Duration
	Cached      bool
	Replicates  int
	WithinSteps int
}

type agreementRow struct {
	Label string
	Row   *eval.Row
}

func (s *Server) agreement(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	q := r.URL.Query()
	// The parameters in a fixed order: the same comparison, the same key.
	v, cached, err := s.agreements.get(r.Context(), s.cfg.Store, q.Encode(), func() (agreementView, error) {
		return s.compareSources(r.Context(), q)
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v.Cached = cached
	v.Elapsed = time.Since(start).Round(time.Millisecond)
	s.render(w, r, http.StatusOK, "agreement", "", view{Title: "Agreement", Nav: "agreement", Body: v})
}

// compareSources computes the agreement page for its parameters.
func (s *Server) compareSources(ctx context.Context, q url.Values) (agreementView, error) {
	start := time.Now()
	all, err := s.cfg.Store.AllSources(ctx)
	if err != nil {
		return agreementView{}, err
	}
	if !slices.Contains(all, detect.Source) {
		// Detectors that ran and found nothing are a source too.
		all = append([]string{detect.Source}, all...)
		slices.Sort(all)
	}
	v := agreementView{Sources: withPrefixes(all), Replicates: eval.DefaultOptions.Replicates, WithinSteps: eval.DefaultOptions.Within}
	v.A, v.B = q.Get("a"), q.Get("b")
	if v.A == "" && v.B == "" {
		if v.A, v.B, err = s.defaultPair(ctx, all); err != nil {
			return agreementView{}, err
		}
	}
	v.Raters = q["rater"]
	if len(v.Raters) == 0 && !q.Has("raters") {
		v.Raters = defaultRaters(all)
	}
	if v.A != "" && v.B != "" {
		ids, err := s.comparable(ctx, []string{v.A, v.B})
		if err != nil {
			return agreementView{}, err
		}
		sets, err := eval.StoredLabelSets(ctx, s.cfg.Store, []string{v.A, v.B}, ids)
		if err != nil {
			v.PairError = err.Error()
		} else {
			var conflicts []eval.Conflict
			v.Pair, conflicts = eval.AgreeAndConflicts(sets[0], sets[1], eval.DefaultOptions)
			v.Rows = agreementRows(v.Pair)
			v.Conflicts = len(conflicts)
			if len(conflicts) > maxConflicts {
				v.More = len(conflicts) - maxConflicts
				conflicts = conflicts[:maxConflicts]
			}
			v.Disagreements = byMode(conflicts)
			if len(v.Rows) == 0 {
				v.PairError = "no trace has a mode both decide"
			}
		}
	}
	if len(v.Raters) >= 2 {
		ids, err := s.comparable(ctx, v.Raters)
		if err != nil {
			return agreementView{}, err
		}
		sets, err := eval.StoredLabelSets(ctx, s.cfg.Store, v.Raters, ids)
		if err != nil {
			v.MultiError = err.Error()
		} else {
			v.Multi = eval.AgreeRaters(sets, eval.DefaultOptions)
			if v.Multi.Overall == nil {
				v.MultiError = "no trace has a mode every one of them decided"
			}
		}
	}
	v.Built = time.Since(start).Round(time.Millisecond)
	return v, nil
}

// comparable lists the traces the sources can be compared on: those every
// one of them annotated. The detectors' silence is a verdict, so they take
// part on any trace; the traces of a human labeller are few, and reading
// only those keeps the page fast on a large store.
func (s *Server) comparable(ctx context.Context, sources []string) ([]string, error) {
	annotators := slices.DeleteFunc(slices.Clone(sources), func(src string) bool { return store.MatchSource(detect.Source, []string{src}) })
	if len(annotators) == 0 {
		return s.cfg.Store.IDs(ctx, store.TraceQuery{})
	}
	return s.cfg.Store.TracesAnnotatedBy(ctx, annotators)
}

// agreementRows lists a comparison's rows as eval prints them: modes,
// merged verification, all modes pooled.
func agreementRows(ag *eval.Agreement) []agreementRow {
	var out []agreementRow
	for i := range ag.Modes {
		out = append(out, agreementRow{ag.Modes[i].Mode + " " + ag.Modes[i].Name, &ag.Modes[i]})
	}
	if ag.Merged != nil {
		out = append(out, agreementRow{"FM-3.2+3.3 verification, merged", ag.Merged})
	}
	if ag.Micro != nil {
		out = append(out, agreementRow{"all modes (micro)", ag.Micro})
	}
	return out
}

// modeConflicts are the disagreements on one mode: where only the source
// says present (its false positives against the reference) and where only
// the reference does (what the source missed).
type modeConflicts struct {
	Mode, Name                string
	SourceOnly, ReferenceOnly int
	Conflicts                 []eval.Conflict
}

// byMode groups disagreements, which come in taxonomy order, by mode.
func byMode(conflicts []eval.Conflict) []modeConflicts {
	var out []modeConflicts
	for _, c := range conflicts {
		if len(out) == 0 || out[len(out)-1].Mode != c.Mode {
			g := modeConflicts{Mode: c.Mode}
			if m, _, ok := taxonomy.Lookup(c.Mode); ok {
				g.Name = m.Name
			}
			out = append(out, g)
		}
		g := &out[len(out)-1]
		if c.Source == trace.Present {
			g.SourceOnly++
		} else {
			g.ReferenceOnly++
		}
		g.Conflicts = append(g.Conflicts, c)
	}
	return out
}

// defaultPair is the comparison the page opens with: a source read as the
// prediction against a reference, as faultline eval reads --source against
// --labels. The reference is the first human labeller, else the first
// annotator of a dataset, that decides modes (Who&When's decisive errors
// name none), else a judge; the prediction is a judge when the reference is
// not one, else the detectors. Without any of these, the first two sources.
func (s *Server) defaultPair(ctx context.Context, sources []string) (source, reference string, err error) {
	first := func(kind string) (string, error) {
		for _, src := range sources {
			if !strings.HasPrefix(src, kind) {
				continue
			}
			decides, err := s.cfg.Store.DecidesModes(ctx, src)
			if err != nil || decides {
				return src, err
			}
		}
		return "", nil
	}
	for _, kind := range []string{"human:", "mad:"} {
		if reference, err = first(kind); err != nil || reference != "" {
			break
		}
	}
	if err != nil {
		return "", "", err
	}
	judge, err := first("judge:")
	if err != nil {
		return "", "", err
	}
	switch {
	case reference != "" && judge != "":
		return judge, reference, nil
	case reference != "":
		return detect.Source, reference, nil
	case judge != "":
		return detect.Source, judge, nil
	case len(sources) >= 2:
		return sources[0], sources[1], nil
	}
	return "", "", nil
}

// defaultRaters are the human labellers, or the MAD annotators, when
// there are at least two.
func defaultRaters(sources []string) []string {
	for _, prefix := range []string{"human:", "mad:annotator"} {
		var out []string
		for _, s := range sources {
			if strings.HasPrefix(s, prefix) {
				out = append(out, s)
			}
		}
		if len(out) >= 2 {
			return out
		}
	}
	return nil
}
