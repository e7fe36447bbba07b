package synth

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Options says what Generate writes.
type Options struct {
	Seed uint64
	// Traces is how many traces to write. Every third, starting with the
	// first, is a control; the others get the modes in turn.
	Traces int
	// Modes are the modes to plant, one per planted trace, in turn; nil
	// plants every mode synth knows (see Modes).
	Modes []string
}

// DefaultTraces is enough traces for five of each plantable mode (one of
// each variant) and 25 controls.
const DefaultTraces = 75

// The simulated models of generated corpora: others than the examples',
// so that the two are never mistaken for one another.
var models = []string{"sim-delta", "sim-epsilon", "sim-zeta"}

// Generate makes a corpus of o.Traces runs of the two incidents. Each run
// is an investigation that would be clean, in which one mode is then
// planted (a variant of it: each mode has several, used in turn); controls
// are left clean. The same options give the same bytes.
func Generate(o Options) (*Corpus, error) {
	modes := o.Modes
	if modes == nil {
		modes = Modes()
	}
	if err := checkModes(modes); err != nil {
		return nil, err
	}
	if o.Traces < 1 {
		return nil, fmt.Errorf("the number of traces must be positive, not %d", o.Traces)
	}
	if planted := o.Traces - controls(o.Traces); planted < len(modes) {
		need := len(modes)
		for need-controls(need) < len(modes) {
			need++
		}
		return nil, fmt.Errorf("%d traces leave %d to plant in (the rest are controls), fewer than the %d modes asked for: ask for %d traces or more", o.Traces, planted, len(modes), need)
	}
	scs := scenarios()
	seed := o.Seed
	// The runs are made as the corpus is rendered, one at a time, so that a
	// corpus of any size is written in the memory of one run.
	runs := func(yield func(run) bool) {
		trials := map[string]int{}
		used := map[string]int{} // mode → traces planted with it so far
		planted := 0
		for i := range o.Traces {
			// Blocks of six traces cover every model and scenario, rotated
			// from block to block so that the controls do too.
			pair := (i + i/6) % 6
			model, sc := models[pair/2], scs[pair%2]
			trials[model+sc.id]++
			// Each trace has a random stream of its own, so that a trace
			// does not change when traces are added after it.
			rng := rand.New(rand.NewPCG(o.Seed, uint64(i)))
			d := newDraft(rng, sc)
			if i%3 != 0 {
				mode := modes[planted%len(modes)]
				planted++
				p := planters[mode][used[mode]%len(planters[mode])]
				used[mode]++
				how := p.apply(d)
				d.plants = append([]plant{{mode, p.variant, how}}, d.plants...)
			}
			r := d.finish()
			r.model, r.trial = model, trials[model+sc.id]
			r.start = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC).Add(time.Duration(i)*23*time.Minute + time.Duration(rng.IntN(60))*time.Second)
			r.salt = fmt.Sprintf("seed %d/", o.Seed)
			if !yield(r) {
				return
			}
		}
	}
	return &Corpus{kind: "seeded", seed: &seed, scs: scs, runs: runs}, nil
}

// controls is how many of n traces are controls: every third, from the first.
func controls(n int) int { return (n + 2) / 3 }

// listing is the first call of every generated run.
var listing = lead{key: "ls", plan: "List the snapshot",
	announce: "List what the snapshot holds before picking tools.",
	learned:  "The snapshot holds alerts, events, logs, metrics, object specs and traces, and a ground_truth.yaml I must not open."}

// draft is a run being put together: a clean investigation that planters
// change before finish turns it into a script.
type draft struct {
	rng *rand.Rand
	sc  *scenario

	// items are the investigation, in order: the listing, the alerts, then
	// the evidence calls.
	items []item

	// How the model talks: announcing a call in the imperative ("Read the
	// logs") or in the first person ("I'll read the logs"), a habit that
	// holds for the whole run.
	voice string

	// The plan, when the model keeps one: a checklist at the start, updated
	// before the answer is written; its items name the tools or not.
	plans      bool
	toolPlans  bool
	planMarks  []string // modes marked at the update
	planRepeat int      // times the update is sent again, unchanged (FM-1.3)
	planVary   bool     // the repeats reword the explanation
	fakeDone   string   // a plan item reported done though no call did it (FM-2.6)

	// The answer: written by patch and checked by check, then the steps in
	// after, then final, whose text the diagnosis's summary is added to.
	// ending, when set, replaces all of it.
	patch  step
	check  []step
	after  []item
	final  step
	ending []step

	// What the diagnosis says and how it is written.
	blame       *suspect                // nil: the root cause
	invent      bool                    // cite log text no tool returned (FM-3.3)
	unexplained bool                    // leave the last alert unexplained
	rename      func(string) string     // how entity names are written; nil keeps ns/Kind/name
	render      func(*diagnosis) string // how the file is written; nil: as JSON

	plants []plant
}

// item is one investigation step: a lead followed, or a step of its own
// (marked as a step is).
type item struct {
	lead  *lead
	says  *lead  // the lead the reasoning announces, when not lead (FM-2.6)
	think string // reasoning instead of the lead's announcement
	text  string // a message written before the call
	marks []mark // planted modes, on a lead's step
	step  *step  // a step of its own, instead of a lead
}

func (it item) mark(mode string, at part) item {
	it.marks = append(append([]mark(nil), it.marks...), mark{mode, at})
	return it
}

// newDraft is a clean investigation: the listing, the alerts and three to
// five evidence calls in the scenario's order, the decisive ones always
// among them; the answer written, checked with jq, and summed up.
func newDraft(rng *rand.Rand, sc *scenario) *draft {
	d := &draft{rng: rng, sc: sc, plans: rng.IntN(2) == 0, toolPlans: rng.IntN(2) == 0}
	d.voice = []string{"", "I'll ", "Let me ", "Next I will "}[rng.IntN(4)]
	alerts := sc.lead("alerts")
	d.items = []item{{lead: &listing}, {lead: alerts}}
	pick := map[*lead]bool{}
	var optional []*lead
	for i := range sc.leads {
		switch l := &sc.leads[i]; {
		case l == alerts:
		case l.decisive:
			pick[l] = true
		default:
			optional = append(optional, l)
		}
	}
	rng.Shuffle(len(optional), func(i, j int) { optional[i], optional[j] = optional[j], optional[i] })
	for _, l := range optional[:3+rng.IntN(3)-len(pick)] {
		pick[l] = true
	}
	for i := range sc.leads {
		if pick[&sc.leads[i]] {
			d.items = append(d.items, item{lead: &sc.leads[i]})
		}
	}
	d.patch = patch()
	d.check = []step{validate()}
	d.final = say("Diagnosis written to " + answerFile + " and validated with jq.")
	return d
}

// plant records a mode planted in the run; the planter marks its steps.
func (d *draft) plant(mode, variant, how string) {
	d.plants = append(d.plants, plant{mode, variant, how})
}

// followed reports whether the investigation already calls the lead.
func (d *draft) followed(key string) bool {
	for _, it := range d.items {
		if it.lead != nil && it.lead.key == key {
			return true
		}
	}
	return false
}

// unfollowed returns the scenario's leads the investigation does not call.
func (d *draft) unfollowed() []*lead {
	var out []*lead
	for i := range d.sc.leads {
		if !d.followed(d.sc.leads[i].key) {
			out = append(out, &d.sc.leads[i])
		}
	}
	return out
}

// insert puts items at position i of the investigation.
func (d *draft) insert(i int, its ...item) {
	d.items = append(d.items[:i], append(its, d.items[i:]...)...)
}

// finish turns the draft into a run: the script, and the answer file.
func (d *draft) finish() run {
	r := run{sc: d.sc, plants: d.plants}
	var steps []step
	items := d.planItems()
	if d.plans {
		steps = append(steps, plan("Inventory the snapshot, read the alerts, gather evidence, then write the answer.", 0, items...).
			thinking("Offline root-cause analysis. Make a plan before touching the data."))
	}
	learned := ""
	for _, it := range d.items {
		steps = append(steps, d.follow(it, &learned))
	}
	if d.ending != nil {
		r.steps = append(steps, d.ending...)
		return r
	}
	diag := d.diagnosis()
	if d.render != nil {
		r.answer = d.render(diag)
	} else {
		r.answer = jsonAnswer(diag)
	}
	if d.plans {
		update := plan("Evidence gathered; writing the answer.", len(items)-1, items...)
		for _, m := range d.planMarks {
			update = update.mark(m)
		}
		steps = append(steps, update)
		for n := range d.planRepeat {
			again := update
			if d.planVary {
				again = plan(fmt.Sprintf("Still writing the answer (%d).", n+2), len(items)-1, items...)
				again.marks = update.marks
			}
			steps = append(steps, again)
		}
	}
	if d.patch.think == "" {
		d.patch.think = strings.TrimSpace(learned + " The cause is " + diag.Entities[0].Name + "; write " + answerFile + ".")
		if d.blame != nil {
			// A run that blames the wrong entity has talked itself into it;
			// what the last call showed would argue against it.
			d.patch.think = "The cause is " + diag.Entities[0].Name + ": " + diag.Entities[0].Reasoning + " Write " + answerFile + "."
		}
	}
	steps = append(steps, d.patch)
	steps = append(steps, d.check...)
	for _, it := range d.after {
		steps = append(steps, d.follow(it, &learned))
	}
	d.final.text += "\n\n" + d.summary(diag)
	r.steps = append(steps, d.final)
	return r
}

// follow makes the step of an investigation item. learned carries what
// the previous lead showed, which the model's next reasoning starts from.
func (d *draft) follow(it item, learned *string) step {
	if it.step != nil {
		return *it.step
	}
	says := it.lead
	if it.says != nil {
		says = it.says
	}
	think := it.think
	if think == "" {
		think = strings.TrimSpace(*learned + " " + d.say(says.announce))
	}
	*learned = it.lead.learned
	s := do(d.sc.calls[it.lead.key]).thinking(think).saying(it.text)
	s.marks = it.marks
	return s
}

// say puts an imperative announcement in the model's voice.
func (d *draft) say(announce string) string {
	if d.voice == "" {
		return announce
	}
	return d.voice + strings.ToLower(announce[:1]) + announce[1:]
}

// planItems is the checklist: one item per kind of evidence the run
// gathers, between the listing and the answer.
func (d *draft) planItems() []string {
	items := []string{}
	for _, it := range d.items {
		if it.lead == nil {
			continue
		}
		item := it.lead.plan
		if d.toolPlans {
			item += " with " + d.sc.tool(it.lead)
		}
		if !slices.Contains(items, item) {
			items = append(items, item)
		}
	}
	if d.fakeDone != "" {
		items = append(items, d.fakeDone)
	}
	return append(items, "Write and validate "+answerFile)
}

// diagnosis is what the run concludes, from the evidence its calls
// returned: the suspect it blames, with the facts about it, then the
// entities it saw impacted, each with its own facts.
func (d *draft) diagnosis() *diagnosis {
	sc := d.sc
	blame := &sc.root
	if d.blame != nil {
		blame = d.blame
	}
	evidence := d.evidence()
	cause := entity{Name: blame.name, Cause: true, Reasoning: blame.asCause, Evidence: evidence[blame.name]}
	if d.invent {
		cause.Evidence = strings.TrimPrefix(cause.Evidence+"; log_analysis: '"+sc.invented+"'", "; ")
	}
	diag := &diagnosis{Entities: []entity{cause}}
	others := append(append([]suspect{}, sc.victims...), sc.decoy)
	for _, s := range others {
		if s.name != blame.name && evidence[s.name] != "" {
			diag.Entities = append(diag.Entities, entity{Name: s.name, Reasoning: s.asImpact, Evidence: evidence[s.name]})
		}
	}
	if blame == &sc.root {
		diag.Propagations = append(diag.Propagations, sc.chain...)
		diag.Alerts = append(diag.Alerts, sc.alerts...)
	} else {
		diag.Propagations = []propagation{blame.spread}
		for _, a := range sc.alerts {
			diag.Alerts = append(diag.Alerts, alertNote{a.Alert, "Follows from " + blame.name + ".", true})
		}
	}
	if d.unexplained {
		last := &diag.Alerts[len(diag.Alerts)-1]
		last.Explanation, last.Explained = "Not yet explained.", false
	}
	if d.rename != nil {
		for i := range diag.Entities {
			diag.Entities[i].Name = d.rename(diag.Entities[i].Name)
		}
		for i := range diag.Propagations {
			p := &diag.Propagations[i]
			p.Source, p.Target = d.rename(p.Source), d.rename(p.Target)
		}
	}
	return diag
}

// evidence is, by entity, the facts the run's calls returned, each quoted
// with the tool it came from.
func (d *draft) evidence() map[string]string {
	out := map[string]string{}
	for _, it := range d.items {
		if it.lead == nil {
			continue
		}
		tool := strings.TrimPrefix(d.sc.calls[it.lead.key].name, mcpServer)
		for _, f := range it.lead.facts {
			if !strings.Contains(out[f.entity], "'"+f.quote+"'") {
				out[f.entity] = strings.TrimPrefix(out[f.entity]+"; "+tool+": '"+f.quote+"'", "; ")
			}
		}
	}
	return out
}

// summary is the final message's account of the diagnosis.
func (d *draft) summary(diag *diagnosis) string {
	c := diag.Entities[0]
	s := "Root cause: " + c.Name + ". " + c.Reasoning
	if d.invent {
		s += " The logs show it plainly: '" + d.sc.invented + "'."
	}
	return s
}
