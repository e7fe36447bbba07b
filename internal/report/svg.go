package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/taxonomy"
)

// Charts are inline SVG written by hand: no script, no font or file to
// fetch, so an HTML report opens anywhere, offline. Every label that comes
// from a trace (group names) is escaped; each chart sits above the table
// that holds its numbers.

// Colours of failed and successful runs.
const (
	failedColour    = "#c0392b"
	succeededColour = "#2e86c1"
)

// svg collects the elements of one chart.
type svg struct {
	b    strings.Builder
	w, h float64
}

func newSVG(w, h float64, title string) *svg {
	s := &svg{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%s">`, w, h, w, h, esc(title))
	return s
}

func (s *svg) add(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

// linked writes what draw draws inside a link to href, or bare when href
// is "" (linker.to has kept only addresses relative to the page).
func (s *svg) linked(href string, draw func()) {
	if href != "" {
		s.add(`<a href="%s">`, esc(href))
	}
	draw()
	if href != "" {
		s.add(`</a>`)
	}
}

// text places escaped text; anchor is start, middle or end.
func (s *svg) text(x, y float64, anchor, class, text string) {
	s.add(`<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, esc(text))
}

func (s *svg) html() template.HTML {
	s.b.WriteString(`</svg>`)
	return template.HTML(s.b.String()) // every piece of text in it went through esc
}

func esc(s string) string { return html.EscapeString(Printable(s)) }

// clipName shortens a group name to fit a label.
func clipName(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// heatMap draws groups (rows) by modes (columns), each cell shaded by the
// share of the group's traces with the mode, with the modes named above
// their columns (code and name, slanted to fit) and the colour scale
// explained under the grid.
func heatMap(groups []*analyze.Group, codes []string, l linker) template.HTML {
	const left, cw, ch, nameLen = 150.0, 52.0, 26.0, 28
	// Labels slant up and to the right at 40°: the longest takes this
	// much height above the grid and this much width past its column.
	const labelW = nameLen * 5.6
	top := labelW*math.Sin(40*math.Pi/180) + 16
	right := labelW * math.Cos(40*math.Pi/180)
	gridH := ch * float64(len(groups))
	const legendH = 62.0
	width := max(left+cw*float64(len(codes))+right, left+310) // room for the scale's caption
	s := newSVG(width, top+gridH+legendH, "Share of traces with each MAST mode, by group")
	for j, code := range codes {
		x, y := left+cw*float64(j)+cw/2, top-6
		label := strings.TrimPrefix(code, "FM-") + " " + clipName(modeNameOf(groups, code), nameLen)
		s.add(`<text transform="translate(%.1f,%.1f) rotate(-40)" class="axis"><title>%s</title>%s</text>`, x, y, esc(code+" "+modeNameOf(groups, code)), esc(label))
	}
	for i, g := range groups {
		y := top + ch*float64(i)
		s.text(left-8, y+ch/2+4, "end", "label", clipName(g.Name, 22))
		for j, code := range codes {
			p := g.Mode(code).All
			share, _ := p.Share()
			x := left + cw*float64(j)
			s.linked(l.to(g, "", code), func() {
				s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="#fff"><title>%s</title></rect>`,
					x, y, cw, ch, heat(share), esc(fmt.Sprintf("%s · %s: %s", g.Name, code, countShare(p))))
				if p.K > 0 {
					class := "cell"
					if share > 0.55 {
						class = "cell light"
					}
					s.text(x+cw/2, y+ch/2+4, "middle", class, percent(p))
				}
			})
		}
	}
	// The scale: white for none, deepening to red for every trace.
	const scaleW = 160.0
	y := top + gridH + 14
	s.add(`<defs><linearGradient id="heat-scale"><stop offset="0" stop-color="%s"/><stop offset="1" stop-color="%s"/></linearGradient></defs>`, heat(0), heat(1))
	s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="10" fill="url(#heat-scale)" stroke="#ccc"/>`, left, y, scaleW)
	for _, tick := range []float64{0, 0.5, 1} {
		s.text(left+scaleW*tick, y+22, "middle", "axis", fmt.Sprintf("%.0f%%", 100*tick))
	}
	s.text(left, y+38, "start", "axis", "share of the group's traces with the mode (blank: none)")
	return s.html()
}

// heat shades a share from white to deep red.
func heat(share float64) string {
	lerp := func(a, b float64) int { return int(math.Round(a + (b-a)*share)) }
	return fmt.Sprintf("rgb(%d,%d,%d)", lerp(255, 153), lerp(255, 27), lerp(255, 30))
}

// outcomeBars draws, for each mode of a group, its share of failed and of
// successful traces with Wilson intervals as whiskers.
func outcomeBars(g *analyze.Group, l linker) template.HTML {
	const left, top, barH, gap, width = 70.0, 24.0, 9.0, 8.0, 360.0
	rowH := 2*barH + gap
	s := newSVG(left+width+60, top+rowH*float64(len(g.Modes))+24, "Share of failed and successful traces with each mode in "+g.Name)
	s.add(`<rect x="%.1f" y="4" width="10" height="10" fill="%s"/>`, left, failedColour)
	s.text(left+14, 13, "start", "axis", "failed")
	s.add(`<rect x="%.1f" y="4" width="10" height="10" fill="%s"/>`, left+70, succeededColour)
	s.text(left+84, 13, "start", "axis", "successful")
	for i, m := range g.Modes {
		y := top + rowH*float64(i)
		s.text(left-8, y+barH+4, "end", "label", m.Mode)
		for k, side := range []struct {
			p       analyze.Proportion
			colour  string
			outcome string
		}{{m.Failed, failedColour, "failure"}, {m.Succeeded, succeededColour, "success"}} {
			by := y + float64(k)*barH
			share, ok := side.p.Share()
			if !ok {
				continue
			}
			s.linked(l.to(g, side.outcome, m.Mode), func() {
				s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`,
					left, by, width*share, barH-1, side.colour, esc(m.Mode+": "+shareWithInterval(side.p)))
			})
			if iv, ok := side.p.Interval(); ok {
				x1, x2, y := left+width*iv.Lo, left+width*iv.Hi, by+barH/2
				s.add(`<path d="M%.1f,%.1f V%.1f M%.1f,%.1f H%.1f M%.1f,%.1f V%.1f" class="whisker"/>`, x1, y-3, y+3, x1, y, x2, x2, y-3, y+3)
			}
		}
	}
	axisY := top + rowH*float64(len(g.Modes))
	for _, tick := range []float64{0, 0.25, 0.5, 0.75, 1} {
		x := left + width*tick
		s.add(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/>`, x, x, top-2, axisY)
		s.text(x, axisY+14, "middle", "axis", fmt.Sprintf("%.0f%%", 100*tick))
	}
	return s.html()
}

// densityChart draws, for each group, its failed traces split by how many
// distinct MAST modes they show (0, 1, 2, …) as one bar of 100%: a row per
// group, so that a dozen groups read as easily as two, and colours that
// stand for the number of modes (light for few, dark for many) rather
// than for the group.
func densityChart(groups []*analyze.Group, l linker) template.HTML {
	maxK := 0
	for _, g := range groups {
		maxK = max(maxK, len(g.Density.Distribution)-1)
	}
	const left, top, rowH, barW, legendSlot = 150.0, 40.0, 22.0, 420.0, 44.0
	s := newSVG(max(left+barW+220, left+legendSlot*float64(maxK+1)+40), top+rowH*float64(len(groups))+24, "Distinct MAST modes per failed trace, by group")
	s.text(left, 12, "start", "axis", "distinct MAST modes in a failed trace:")
	for k := 0; k <= maxK; k++ {
		x := left + legendSlot*float64(k)
		s.add(`<rect x="%.1f" y="18" width="12" height="12" fill="%s" stroke="#999" stroke-width=".5"/>`, x, densityColour(k, maxK))
		s.text(x+16, 28, "start", "axis", fmt.Sprint(k))
	}
	for i, g := range groups {
		y := top + rowH*float64(i)
		s.text(left-8, y+rowH/2+4, "end", "label", clipName(g.Name, 22))
		if g.Failed == 0 {
			s.text(left, y+rowH/2+4, "start", "axis", "no failed trace")
			continue
		}
		x := left
		for k, n := range g.Density.Distribution {
			if n == 0 {
				continue
			}
			w := barW * float64(n) / float64(g.Failed)
			modes := k
			s.linked(l.traces(g, Traces{Outcome: "failure", ModeCount: &modes}), func() {
				s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="#fff"><title>%s</title></rect>`,
					x, y+2, w, rowH-4, densityColour(k, maxK),
					esc(fmt.Sprintf("%s: %d of %d failed traces with %s", g.Name, n, g.Failed, text.Plural(k, "mode", "modes"))))
				if w >= 22 {
					class := "cell"
					if 2*k > maxK {
						class = "cell light"
					}
					s.text(x+w/2, y+rowH/2+4, "middle", class, fmt.Sprint(n))
				}
			})
			x += w
		}
		note := text.Plural(g.Failed, "failed trace", "failed traces")
		if m := g.Density.Failed.Value; m != nil {
			note += fmt.Sprintf(" · mean %.1f", *m)
		}
		s.text(left+barW+8, y+rowH/2+4, "start", "axis", note)
	}
	return s.html()
}

// densityRamp runs from pale yellow through orange and red to deep
// purple, so that neighbouring counts of modes stay apart.
var densityRamp = [][3]float64{{254, 235, 160}, {245, 150, 70}, {200, 50, 80}, {84, 39, 143}}

// densityColour shades k modes of at most maxK along densityRamp.
func densityColour(k, maxK int) string {
	t := 0.0
	if maxK > 0 {
		t = float64(k) / float64(maxK)
	}
	seg := min(int(t*float64(len(densityRamp)-1)), len(densityRamp)-2)
	f := t*float64(len(densityRamp)-1) - float64(seg)
	a, b := densityRamp[seg], densityRamp[seg+1]
	lerp := func(i int) int { return int(math.Round(a[i] + (b[i]-a[i])*f)) }
	return fmt.Sprintf("rgb(%d,%d,%d)", lerp(0), lerp(1), lerp(2))
}

// cascadeGraph draws a group's transitions between modes as an arc
// diagram: the modes in one row, ordered so that as many cascades as can be
// run left to right; each transition A → B an arc from A to B, above the
// row when it runs right (below, dashed, in the few that must run back),
// as thick as its count and labelled with it. Arcs of one side never
// share a label's place: two with the same midpoint differ in span, and so
// in height.
func cascadeGraph(g *analyze.Group, l linker) template.HTML {
	c := g.Cascades
	onsets := map[string]int{}
	for _, o := range c.Onsets {
		onsets[o.Mode] = o.Traces
	}
	order := cascadeOrder(c)
	at := map[string]int{}
	for i, m := range order {
		at[m] = i
	}
	maxCount, above, below := 1, 0, 0
	for _, t := range c.Transitions {
		maxCount = max(maxCount, t.Count)
		if span := at[t.To] - at[t.From]; span > 0 {
			above = max(above, span)
		} else {
			below = max(below, -span)
		}
	}
	const margin, spacing, nodeW, nodeH, rise = 20.0, 100.0, 78.0, 34.0, 20.0
	arcHeight := func(span int) float64 { return 14 + rise*float64(span) }
	baseY := 22 + arcHeight(above) + 12
	height := baseY + nodeH + 12
	if below > 0 {
		height += arcHeight(below) + 12
	}
	height += 20 // the key
	width := max(2*margin+spacing*float64(len(order)-1)+nodeW, 560)
	s := newSVG(width, height, "Transitions between modes in the failed traces of "+g.Name)
	centre := func(m string) float64 { return margin + nodeW/2 + spacing*float64(at[m]) }
	// Every arc leaves and enters its nodes at a point of its own: on top,
	// arcs leave from the right half of a node and enter at the left half;
	// below, the other way round. Along each half the longest arc takes the
	// point nearest the middle, so that it encloses the shorter ones
	// rather than crossing them.
	type side struct {
		mode string
		out  bool
		back bool
	}
	ports := map[side][]int{}
	for i, t := range c.Transitions {
		back := at[t.To] < at[t.From]
		ports[side{t.From, true, back}] = append(ports[side{t.From, true, back}], i)
		ports[side{t.To, false, back}] = append(ports[side{t.To, false, back}], i)
	}
	offset := map[side]map[int]float64{}
	for sd, arcs := range ports {
		span := func(i int) int { return abs(at[c.Transitions[i].To] - at[c.Transitions[i].From]) }
		slices.SortFunc(arcs, func(a, b int) int { return span(b) - span(a) })
		sign := 1.0 // right of the middle
		if sd.out == sd.back {
			sign = -1
		}
		offset[sd] = map[int]float64{}
		for k, i := range arcs {
			offset[sd][i] = sign * (4 + (float64(k)+0.5)*(nodeW/2-8)/float64(len(arcs)))
		}
	}
	for i, t := range c.Transitions {
		span := at[t.To] - at[t.From]
		back := span < 0
		x1, x2 := centre(t.From)+offset[side{t.From, true, back}][i], centre(t.To)+offset[side{t.To, false, back}][i]
		y, dir, class := baseY, -1.0, "edge"
		if back {
			span = -span
			y, dir, class = baseY+nodeH, 1, "edge back"
		}
		// A cubic curve with both control points at 4/3 of the apex height
		// peaks at the apex.
		h := arcHeight(span)
		ctl := y + dir*h*4/3
		width := 1.2 + 4*float64(t.Count)/float64(maxCount)
		s.linked(l.to(g, "failure", t.From, t.To), func() {
			s.add(`<path d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" class="%s" stroke-width="%.1f"><title>%s</title></path>`,
				x1, y, x1, ctl, x2, ctl, x2, y, class, width, esc(fmt.Sprintf("%s → %s: %s", t.From, t.To, text.Plural(t.Count, "cascade", "cascades"))))
			// The arrowhead, pointing into the node.
			s.add(`<path d="M%.1f,%.1f L%.1f,%.1f L%.1f,%.1f z" class="head"/>`, x2-4, y+dir*8, x2+4, y+dir*8, x2, y)
			label := fmt.Sprint(t.Count)
			mid, apex := (x1+x2)/2, y+dir*h
			w := 8 + 6.5*float64(len(label))
			s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="14" rx="3" class="count"/>`, mid-w/2, apex-7, w)
			s.text(mid, apex+4, "middle", "count", label)
		})
	}
	for _, m := range order {
		x := centre(m) - nodeW/2
		class := "node"
		if onsets[m] > 0 {
			class = "node onset"
		}
		name := ""
		if mode, _, ok := taxonomy.Lookup(m); ok {
			name = mode.Name
		}
		s.linked(l.to(g, "failure", m), func() {
			s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="5" class="%s"><title>%s</title></rect>`,
				x, baseY, nodeW, nodeH, class, esc(fmt.Sprintf("%s %s: first in %s", m, name, text.Plural(onsets[m], "cascade", "cascades"))))
			if n := onsets[m]; n > 0 {
				s.text(x+nodeW/2, baseY+15, "middle", "label", m)
				s.text(x+nodeW/2, baseY+28, "middle", "axis", fmt.Sprintf("first in %d", n))
			} else {
				s.text(x+nodeW/2, baseY+nodeH/2+4, "middle", "label", m)
			}
		})
	}
	key := "An arc A → B: B came directly after A, in as many cascades as its number says; arcs above run left to right"
	if below > 0 {
		key += ", dashed arcs below run back"
	}
	s.text(margin, height-6, "start", "axis", key+".")
	return s.html()
}

func abs(x int) int { return max(x, -x) }

// cascadeOrder orders the modes of a group's cascades so that most
// transitions, weighted by count, run forward: Eades, Lin and Smyth's
// greedy ordering, which places modes nothing follows last, modes nothing
// precedes first, and otherwise the mode that leads most more often than
// it follows; ties go to the mode that began more cascades, then to
// taxonomy order, so the same report draws the same graph.
func cascadeOrder(c analyze.Cascades) []string {
	// Modes are numbered, and the transitions read as numbers: the search
	// below weighs every transition for every mode at every step.
	number := map[string]int{}
	var codes []string
	numberOf := func(m string) int {
		n, ok := number[m]
		if !ok {
			n = len(codes)
			number[m] = n
			codes = append(codes, m)
		}
		return n
	}
	var onsets []int
	for _, o := range c.Onsets {
		n := numberOf(o.Mode)
		onsets = append(onsets, make([]int, max(0, n+1-len(onsets)))...)
		onsets[n] = o.Traces
	}
	type edge struct{ from, to, count int }
	edges := make([]edge, len(c.Transitions))
	for i, t := range c.Transitions {
		edges[i] = edge{numberOf(t.From), numberOf(t.To), t.Count}
	}
	onsets = append(onsets, make([]int, len(codes)-len(onsets))...)
	left := make([]bool, len(codes))
	for n := range left {
		left[n] = true
	}
	var modes []int // in taxonomy order
	for _, m := range taxonomy.MAST.Modes {
		if n, ok := number[m.Code]; ok {
			modes = append(modes, n)
		}
	}
	// in and out weigh each mode's transitions among those left.
	degrees := func(m int) (in, out int) {
		for _, e := range edges {
			if !left[e.from] || !left[e.to] {
				continue
			}
			if e.to == m {
				in += e.count
			}
			if e.from == m {
				out += e.count
			}
		}
		return in, out
	}
	var first, last []string
	for len(first)+len(last) < len(modes) {
		pick, bestScore, placeLast := -1, 0, false
		for _, m := range modes {
			if !left[m] {
				continue
			}
			in, out := degrees(m)
			switch {
			case out == 0 && in > 0:
				pick, placeLast = m, true
			case in == 0:
				pick = m
			}
			if pick >= 0 {
				break
			}
		}
		if pick < 0 {
			for _, m := range modes {
				if !left[m] {
					continue
				}
				in, out := degrees(m)
				score := out - in
				if pick < 0 || score > bestScore || score == bestScore && onsets[m] > onsets[pick] {
					pick, bestScore = m, score
				}
			}
		}
		left[pick] = false
		if placeLast {
			last = append([]string{codes[pick]}, last...)
		} else {
			first = append(first, codes[pick])
		}
	}
	return append(first, last...)
}
