package web

import (
	"fmt"
	"hash/fnv"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/pipeline"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// A labeller names themself once (a cookie); their labels are the
// annotation source human:<name>, one finding per trace and mode.

const labellerCookie = "faultline_labeller"

// labellerOf is the name the request's labeller gave, "" when none.
func labellerOf(r *http.Request) string {
	c, err := r.Cookie(labellerCookie)
	if err != nil {
		return ""
	}
	if _, err := labels.HumanSource(c.Value); err != nil {
		return ""
	}
	return c.Value
}

// labellerSource is the current labeller's annotation source, "" when
// they have not named themself.
func labellerSource(r *http.Request) string {
	if name := labellerOf(r); name != "" {
		return "human:" + name
	}
	return ""
}

// setLabeller names (or, with an empty name, forgets) the labeller, then
// goes back to the page the form was on.
func (s *Server) setLabeller(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if _, err := labels.HumanSource(name); name != "" && err != nil {
		s.fail(w, r, badRequest{err.Error()})
		return
	}
	c := &http.Cookie{Name: labellerCookie, Value: name, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: 365 * 24 * 3600}
	if name == "" {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
	http.Redirect(w, r, localPath(r.PostFormValue("back")), http.StatusSeeOther)
}

// localPath keeps an address inside the application (a path, with its
// query), for redirects a form names.
func localPath(p string) string {
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(p, "//") {
		return "/labels"
	}
	// RawPath keeps an escaped slash of a trace id (a%2Fb) escaped.
	return (&url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}).String()
}

// labelPanel is the labelling form of one trace.
type labelPanel struct {
	TraceID string
	Source  string
	Rows    []labelRow
	Errors  []string
	Saved   bool
	Queue   string // the queue's filter, for "next"
	NextURL string // the next trace of the queue
	// Others are the other labellers of the trace, as the form was drawn;
	// Seen is their labels' fingerprint, which the form sends back so that
	// a save can tell who changed theirs meanwhile (Changed).
	Others  []otherLabeller
	Seen    string
	Changed []string
}

// otherLabeller is what another labeller said about the trace.
type otherLabeller struct {
	Source  string
	Present []string // the modes they found
	Decided int      // how many modes they decided
}

// labelRow is the labeller's decision on one mode.
type labelRow struct {
	Code, Name, Definition string
	Verdict                string // present, absent, unsure, or "" when undecided
	Steps                  string
	Quote                  string
	Note                   string
	Error                  string
}

// verdicts a labeller can give.
var verdicts = []trace.Verdict{trace.Present, trace.Absent, trace.Unsure}

// newLabelPanel fills the form with what the labeller said before.
func newLabelPanel(t *trace.Trace, source, queue string) *labelPanel {
	p := &labelPanel{TraceID: t.ID, Source: source, Queue: queue}
	p.Others, p.Seen = otherLabellers(t, source)
	if queue != "" {
		p.NextURL = "/label/next?" + queue
	}
	mine := map[string]trace.Finding{}
	for _, f := range t.Findings {
		if f.Source == source {
			mine[f.Mode] = f
		}
	}
	for _, m := range taxonomy.MAST.Modes {
		row := labelRow{Code: m.Code, Name: m.Name, Definition: m.Definition}
		if f, ok := mine[m.Code]; ok {
			row.Verdict, row.Steps, row.Quote, row.Note = string(f.Verdict), stepsText(f.Steps), f.Quote, f.Explanation
		}
		p.Rows = append(p.Rows, row)
	}
	return p
}

// otherLabellers lists the labellers of t other than source, and a
// fingerprint of their labels: their source names, each with a hash of its
// findings. Each labeller's labels are their own source, so two people
// labelling one trace never overwrite each other; the fingerprint lets the
// page say when someone else's labels changed while this form was open.
func otherLabellers(t *trace.Trace, source string) ([]otherLabeller, string) {
	byOwner := map[string][]trace.Finding{}
	for _, f := range t.Findings {
		if f.Source != source && strings.HasPrefix(f.Source, "human:") {
			byOwner[f.Source] = append(byOwner[f.Source], f)
		}
	}
	var others []otherLabeller
	var seen []string
	for _, owner := range slices.Sorted(maps.Keys(byOwner)) {
		o := otherLabeller{Source: owner}
		h := fnv.New64a()
		for _, f := range byOwner[owner] {
			o.Decided++
			if f.Verdict == trace.Present && !slices.Contains(o.Present, f.Mode) {
				o.Present = append(o.Present, f.Mode)
			}
			fmt.Fprintf(h, "%s\x00%s\x00%v\x00%s\x00%s\x00", f.Mode, f.Verdict, f.Steps, f.Quote, f.Explanation)
		}
		slices.Sort(o.Present)
		others = append(others, o)
		seen = append(seen, owner+"="+strconv.FormatUint(h.Sum64(), 36))
	}
	return others, strings.Join(seen, " ")
}

// changedSince names the labellers whose labels differ between two
// fingerprints of otherLabellers: changed, added or removed.
func changedSince(before, now string) []string {
	was := map[string]string{}
	for _, entry := range strings.Fields(before) {
		if owner, hash, ok := strings.Cut(entry, "="); ok {
			was[owner] = hash
		}
	}
	var changed []string
	for _, entry := range strings.Fields(now) {
		owner, hash, _ := strings.Cut(entry, "=")
		if was[owner] != hash {
			changed = append(changed, owner)
		}
		delete(was, owner)
	}
	for owner := range was {
		changed = append(changed, owner)
	}
	slices.Sort(changed)
	return changed
}

func stepsText(steps []int) string {
	parts := make([]string, len(steps))
	for i, s := range trace.SortedSteps(steps) {
		parts[i] = strconv.Itoa(s)
	}
	return strings.Join(parts, ", ")
}

// saveLabels stores the labeller's verdicts on a trace, every mode
// decided, each quote checked against the steps it cites. A form with
// problems comes back with them marked and nothing is stored.
func (s *Server) saveLabels(w http.ResponseWriter, r *http.Request) {
	source := labellerSource(r)
	if source == "" {
		s.fail(w, r, badRequestf("name yourself before labelling (on the Label page)"))
		return
	}
	ctx := r.Context()
	t, err := s.cfg.Store.Load(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := &labelPanel{TraceID: t.ID, Source: source, Queue: queueOf(r)}
	p.Others, p.Seen = otherLabellers(t, source)
	p.Changed = changedSince(r.PostFormValue("seen"), p.Seen)
	rest := r.PostFormValue("rest") // "absent": undecided modes are absent
	var findings []trace.Finding
	var undecided []string
	for _, m := range taxonomy.MAST.Modes {
		row := labelRow{Code: m.Code, Name: m.Name, Definition: m.Definition,
			Verdict: r.PostFormValue("v-" + m.Code), Steps: r.PostFormValue("steps-" + m.Code),
			Quote: r.PostFormValue("quote-" + m.Code), Note: strings.TrimSpace(r.PostFormValue("note-" + m.Code))}
		if row.Verdict == "" && rest == string(trace.Absent) {
			row.Verdict = string(trace.Absent)
		}
		l := labels.ModeLabel{Trace: t.ID, Mode: m.Code, Verdict: trace.Verdict(row.Verdict), Note: row.Note}
		switch {
		case row.Verdict == "":
			undecided = append(undecided, m.Code)
			row.Error = "undecided"
		case !slices.Contains(verdicts, l.Verdict):
			row.Error = fmt.Sprintf("%q is no verdict", row.Verdict)
		case l.Verdict == trace.Present:
			l.Quote = strings.TrimSpace(row.Quote)
			if l.Steps, err = labels.ParseSteps(row.Steps); err != nil {
				row.Error = "steps: " + err.Error()
				break
			}
			slices.Sort(l.Steps)
			l.Steps = slices.Compact(l.Steps)
			f, err := pipeline.LabelFinding(t, l, source)
			if err != nil {
				row.Error = err.Error()
				break
			}
			findings = append(findings, f)
		default:
			// Evidence says where a mode is: an absent or unsure mode has none.
			findings = append(findings, labels.Finding(l, source))
		}
		if row.Error != "" && row.Verdict != "" {
			p.Errors = append(p.Errors, m.Code+": "+row.Error)
		}
		p.Rows = append(p.Rows, row)
	}
	if len(undecided) > 0 {
		p.Errors = append(p.Errors, fmt.Sprintf("decide every mode: %s undecided (or save with the rest absent)", strings.Join(undecided, ", ")))
	}
	if len(p.Errors) > 0 {
		s.render(w, r, http.StatusUnprocessableEntity, "trace", "label", view{Body: p})
		return
	}
	if err := s.cfg.Store.ReplaceFindings(ctx, t.ID, source, findings, ""); err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("labels saved", "trace", t.ID, "source", source, "modes", len(findings))
	q := url.Values{"saved": {"1"}}
	if p.Queue != "" {
		q.Set("queue", p.Queue)
	}
	if len(p.Changed) > 0 {
		q.Set("changed", strings.Join(p.Changed, " "))
	}
	to := traceURL(t.ID) + "?" + q.Encode() + "#label-panel"
	if htmx(r) {
		// A redirect would be followed inside the panel; have the page go.
		w.Header().Set("HX-Redirect", to)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// nextUnlabelled opens the first trace of the queue's selection that the
// labeller has not labelled.
func (s *Server) nextUnlabelled(w http.ResponseWriter, r *http.Request) {
	source := labellerSource(r)
	if source == "" {
		http.Redirect(w, r, "/labels", http.StatusSeeOther)
		return
	}
	f, err := parseFilter(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f.Todo = true
	q := f.query(source, s.cfg.Aliases)
	q.Limit = 1
	page, err := s.cfg.Store.Browse(r.Context(), q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(page.Traces) == 0 {
		s.message(w, r, http.StatusOK, "Nothing left to label", fmt.Sprintf("Every trace of this selection has labels of %s.", source))
		return
	}
	http.Redirect(w, r, traceURL(page.Traces[0].ID)+"?"+url.Values{"queue": {f.encode()}}.Encode(), http.StatusSeeOther)
}
