package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/score"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// traceView is the trace viewer: what the run was, how it went and what
// its diagnosis was worth, what each source found, what the judges said,
// and the steps.
type traceView struct {
	Trace      *trace.Trace
	Steps      int
	TaskTitle  string
	Duration   string
	Outcome    string // the primary outcome in words
	Result     string // success, failure or unknown
	Outcomes   []outcomeView
	Diagnosis  *diagnosisView
	Summary    findingsSummary
	Matrix     matrix
	Judgements []store.JudgeRecord
	Timeline   timeline
	Waterfall  *waterfall // nil when the page's steps are not timed
	Cost       string     // the run's cost in USD, when the format records it
	Label      *labelPanel
	Elapsed    time.Duration
}

type outcomeView struct {
	trace.Outcome
	Primary bool
	Text    string
	Scoring *scoreDetail // the detail of faultline's ITBench scoring
}

// scoreDetail is what score.TraceScore.Outcome keeps in an ITBench
// outcome's detail.
type scoreDetail struct {
	Status       string             `json:"status"`
	Diagnosis    string             `json:"diagnosis"`
	Problem      string             `json:"problem"`
	Precision    float64            `json:"precision"`
	Recall       float64            `json:"recall"`
	F1           float64            `json:"f1"`
	MatchedRoots []string           `json:"matched_roots"`
	RootClasses  int                `json:"root_classes"`
	Predictions  []score.Prediction `json:"predictions"`
}

// diagnosisView is the run's diagnosis: the entities it blamed and, when
// the server has the ground truth, what each of them matched.
type diagnosisView struct {
	Source      string
	Problem     string
	Predictions []score.Prediction
	Scored      bool // Predictions carry their matches
	Score       *score.TraceScore
}

func (s *Server) traceView(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.PathValue("id")
	q := r.URL.Query()
	if step := q.Get("step"); step != "" {
		// Jump to a step: the page that holds it, scrolled to it.
		n, err := strconv.Atoi(step)
		if err != nil || n < 0 {
			s.fail(w, r, badRequestf("step %q: a step number from 0", step))
			return
		}
		q.Del("step")
		q.Set("from", strconv.Itoa(n/stepsPerPage*stepsPerPage))
		http.Redirect(w, r, traceURL(id)+"?"+q.Encode()+"#step-"+strconv.Itoa(n), http.StatusSeeOther)
		return
	}
	ctx := r.Context()
	t, total, err := s.cfg.Store.LoadHeader(ctx, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	from, _ := strconv.Atoi(q.Get("from"))
	from = pageStart(from, total)
	detected, err := s.cfg.Store.DetectedWith(ctx, []string{id})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := traceView{Trace: t, Steps: total, TaskTitle: report.TaskTitle(t.Task, 160), Matrix: newMatrix(t.Findings, detected[id] != ""), Cost: t.Meta["cost_usd"]}
	v.Summary = summarize(v.Matrix)
	if !t.Started.IsZero() && !t.Ended.IsZero() {
		v.Duration = t.Ended.Sub(t.Started).Round(time.Second).String()
	}
	primary := trace.PrimaryOutcome(t.Outcomes)
	v.Outcome, v.Result = report.OutcomeText(primary), store.OutcomeClass(primary)
	for i, o := range t.Outcomes {
		v.Outcomes = append(v.Outcomes, outcomeView{Outcome: o, Primary: primary == &t.Outcomes[i], Text: report.OutcomeText(&t.Outcomes[i]), Scoring: scoringOf(o)})
	}
	var stored *scoreDetail // faultline's scoring, as stored
	for _, o := range v.Outcomes {
		if o.Scoring != nil {
			stored = o.Scoring
			break
		}
	}
	if v.Diagnosis, err = s.diagnosis(ctx, t, stored); err != nil {
		s.fail(w, r, err)
		return
	}
	if v.Judgements, err = s.cfg.Store.TraceJudgements(ctx, id); err != nil {
		s.fail(w, r, err)
		return
	}
	source := labellerSource(r)
	var page []trace.Step
	if v.Timeline, page, err = s.timeline(ctx, t, from, total, ""); err != nil {
		s.fail(w, r, err)
		return
	}
	v.Waterfall = newWaterfall(page, from, t.Spans(), t.Meta["otel.root_span_id"], stepFindings(t.Findings))
	v.Timeline.Labelling = source != ""
	if source != "" {
		v.Label = newLabelPanel(t, source, queueOf(r))
		v.Label.Saved = q.Get("saved") != ""
		if v.Label.Saved {
			// Only names a labeller can have: the address is anyone's to write.
			for _, owner := range strings.Fields(q.Get("changed")) {
				if _, err := labels.HumanSource(strings.TrimPrefix(owner, "human:")); err == nil && strings.HasPrefix(owner, "human:") {
					v.Label.Changed = append(v.Label.Changed, owner)
				}
			}
		}
	}
	v.Elapsed = time.Since(start).Round(time.Millisecond)
	s.render(w, r, http.StatusOK, "trace", "", view{Title: "Trace " + t.ID, Nav: "traces", Body: v})
}

// timeline reads a page of steps, with the steps of other pages paired
// with its calls, and lays it out; it returns the page's steps too.
func (s *Server) timeline(ctx context.Context, t *trace.Trace, from, total int, dir string) (timeline, []trace.Step, error) {
	page, err := s.cfg.Store.StepRange(ctx, t.ID, from, from+stepsPerPage)
	if err != nil {
		return timeline{}, nil, err
	}
	outside := map[int]*trace.Step{}
	if idx := pairsOutside(page, from); len(idx) > 0 {
		steps, err := s.cfg.Store.StepsAt(ctx, t.ID, idx)
		if err != nil {
			return timeline{}, nil, err
		}
		for i := range steps {
			outside[steps[i].Index] = &steps[i]
		}
	}
	tl := buildTimeline(t, page, outside, from, total)
	tl.Dir = dir
	return tl, page, nil
}

// pageStart is the first step of the page that holds step n: pages start
// at multiples of stepsPerPage, so that pages loaded one after another
// never overlap.
func pageStart(n, total int) int {
	n = max(0, min(n, total-1))
	return n / stepsPerPage * stepsPerPage
}

// stepsFragment is a page of steps for htmx to add before or after those
// shown.
func (s *Server) stepsFragment(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	from, err := strconv.Atoi(r.URL.Query().Get("from"))
	dir := r.URL.Query().Get("dir")
	if err != nil || from < 0 || (dir != "prev" && dir != "next") {
		s.fail(w, r, badRequestf("steps need from (a step number) and dir (prev or next)"))
		return
	}
	t, total, err := s.cfg.Store.LoadHeader(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tl, _, err := s.timeline(r.Context(), t, pageStart(from, total), total, dir)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tl.Labelling = labellerSource(r) != ""
	s.render(w, r, http.StatusOK, "trace", "timeline", view{Body: tl})
}

// stepText is the whole text (or arguments) of one step: as a fragment
// with its quotes marked for htmx, as plain text otherwise.
func (s *Server) stepText(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 0 {
		s.fail(w, r, badRequestf("step %q: a step number from 0", r.PathValue("n")))
		return
	}
	steps, err := s.cfg.Store.StepsAt(r.Context(), id, []int{n})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(steps) == 0 {
		http.NotFound(w, r)
		return
	}
	st := steps[0]
	whole := fmt.Sprintf("%s/steps/%d", traceURL(id), n)
	text := st.Text
	args := r.URL.Query().Get("field") == "args"
	if args {
		text, whole = st.Args, whole+"?field=args"
	}
	if !htmx(r) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, text)
		return
	}
	findings, err := s.cfg.Store.Findings(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	shell := false
	if args {
		// The arguments, laid out as the timeline lays them out.
		laid := formatArgs(st.Tool, text)
		text, shell = laid.Text, laid.Shell
	}
	tv := newTextView(whole, text, stepFindings(findings)[n], len(text))
	tv.Folded, tv.Shell = false, shell
	s.render(w, r, http.StatusOK, "trace", "textfragment", view{Body: tv})
}

// diagnosis reads the run's diagnosis when there is one to show: the
// answer file attached to the trace, or, for a run scored against ground
// truth (or when the server has some), the answer found in its steps.
func (s *Server) diagnosis(ctx context.Context, t *trace.Trace, stored *scoreDetail) (*diagnosisView, error) {
	if s.cfg.GroundTruth == nil && stored != nil && stored.Predictions != nil {
		// Scored when it was stored: what each entity matched then, with
		// no need to read the steps again.
		return &diagnosisView{Source: stored.Diagnosis, Problem: stored.Problem, Predictions: stored.Predictions, Scored: true}, nil
	}
	scored := slices.ContainsFunc(t.Outcomes, func(o trace.Outcome) bool { return o.Source == score.OutcomeSource })
	if t.Diagnosis == nil && !scored && s.cfg.GroundTruth == nil {
		return nil, nil
	}
	full := t
	if t.Diagnosis == nil {
		// The answer may be a write in any step: read them all.
		var err error
		if full, err = s.cfg.Store.Load(ctx, t.ID); err != nil {
			return nil, err
		}
	}
	v := &diagnosisView{}
	if s.cfg.GroundTruth != nil {
		ts := score.ScoreTrace(full, s.cfg.GroundTruth, "", score.Options{})
		if ts.Status != score.NoGroundTruth {
			v.Score, v.Scored, v.Source, v.Problem = &ts, true, ts.Diagnosis, ts.Problem
			if ts.EntityScore != nil {
				v.Predictions = ts.Predictions
			}
			return v, nil
		}
	}
	d, err := score.DiagnosisOf(full)
	if err != nil {
		v.Problem = err.Error()
		return v, nil
	}
	v.Source = d.Source
	for _, p := range d.Predictions() {
		v.Predictions = append(v.Predictions, score.Prediction{Entity: p})
	}
	return v, nil
}

// scoringOf reads the detail of an outcome of faultline's ITBench scoring;
// nil for any other outcome.
func scoringOf(o trace.Outcome) *scoreDetail {
	if o.Source != score.OutcomeSource {
		return nil
	}
	var d scoreDetail
	if json.Unmarshal([]byte(o.Detail), &d) != nil {
		return nil
	}
	return &d
}

// matrix sets the findings of each source side by side, one row per mode.
type matrix struct {
	Sources []string
	Rows    []matrixRow
}

type matrixRow struct {
	Code  string
	Title string
	Cells []matrixCell // by source
}

// matrixCell is what one source says of one mode: its verdict and the
// findings behind it.
type matrixCell struct {
	Verdict  string
	Findings []trace.Finding
}

// newMatrix lays out the findings, modes in taxonomy order (MAST, then
// system failures, then labels no mode was found for). When the detectors
// ran on the trace they have a column even if they found nothing: their
// silence is a result too.
func newMatrix(findings []trace.Finding, detected bool) matrix {
	var m matrix
	if detected {
		m.Sources = append(m.Sources, detect.Source)
	}
	for _, f := range findings {
		if !slices.Contains(m.Sources, f.Source) {
			m.Sources = append(m.Sources, f.Source)
		}
	}
	slices.Sort(m.Sources)
	rank := map[string]int{}
	for i, mode := range slices.Concat(taxonomy.MAST.Modes, taxonomy.System.Modes) {
		rank[mode.Code] = i
	}
	key := func(f trace.Finding) string {
		if f.Mode == "" {
			return "\x00" + f.RawLabel
		}
		return f.Mode
	}
	rows := map[string]*matrixRow{}
	var keys []string
	for _, f := range findings {
		k := key(f)
		row := rows[k]
		if row == nil {
			row = &matrixRow{Code: f.Mode, Title: report.FindingTitle(f), Cells: make([]matrixCell, len(m.Sources))}
			rows[k] = row
			keys = append(keys, k)
		}
		c := &row.Cells[slices.Index(m.Sources, f.Source)]
		c.Findings = append(c.Findings, f)
		// Several findings of one source on one mode: present wins.
		if c.Verdict != string(trace.Present) {
			c.Verdict = string(f.Verdict)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		ra, oka := rank[a]
		rb, okb := rank[b]
		switch {
		case oka && okb:
			return ra - rb
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		m.Rows = append(m.Rows, *rows[k])
	}
	return m
}

// findingsSummary is what the trace page says first: the modes some
// source found present, with their steps, and the other verdicts folded.
type findingsSummary struct {
	Present []summaryRow
	Other   []summaryRow // modes only judged absent or unsure
	Absent  int          // verdicts of absence among Other's
	Unsure  int
}

// summaryRow is one mode: the sources with each verdict, and for a present
// mode the steps its findings cite.
type summaryRow struct {
	Code, Title string
	Sources     []sourceVerdict
	Steps       []int
}

type sourceVerdict struct{ Source, Verdict string }

// summarize reads the summary off the matrix: a mode is present when any
// source says so, whatever the others say (the matrix below shows the
// disagreement).
func summarize(m matrix) findingsSummary {
	var s findingsSummary
	for _, row := range m.Rows {
		sr := summaryRow{Code: row.Code, Title: row.Title}
		present := false
		for i, c := range row.Cells {
			if c.Verdict == "" {
				continue
			}
			sr.Sources = append(sr.Sources, sourceVerdict{m.Sources[i], c.Verdict})
			if c.Verdict != string(trace.Present) {
				continue
			}
			present = true
			for _, f := range c.Findings {
				if f.Verdict == trace.Present {
					sr.Steps = append(sr.Steps, f.Steps...)
				}
			}
		}
		slices.Sort(sr.Steps)
		sr.Steps = slices.Compact(sr.Steps)
		if present {
			s.Present = append(s.Present, sr)
			continue
		}
		for _, sv := range sr.Sources {
			switch trace.Verdict(sv.Verdict) {
			case trace.Absent:
				s.Absent++
			case trace.Unsure:
				s.Unsure++
			}
		}
		s.Other = append(s.Other, sr)
	}
	return s
}

// queueOf is the labelling queue a trace was opened from, as the filter's
// query ("" when none), read back through parseFilter so that only a
// filter goes into the page's links.
func queueOf(r *http.Request) string {
	raw := r.URL.Query().Get("queue")
	if raw == "" {
		return ""
	}
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return ""
	}
	f, err := parseFilter(&http.Request{URL: &url.URL{RawQuery: vals.Encode()}})
	if err != nil {
		return ""
	}
	f.Todo = true
	return f.encode()
}
