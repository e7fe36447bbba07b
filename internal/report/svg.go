package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/taxonomy"
)

// Charts are inline SVG written by hand: no script, no font or file to
// fetch, so an HTML report opens anywhere, offline. Every label that comes
// from a trace (group names) is escaped; each chart sits above the table
// that holds its numbers.

// Colours: failed and successful runs, and a palette for groups.
const (
	failedColour    = "#c0392b"
	succeededColour = "#2e86c1"
)

var palette = []string{"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"}

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
// share of the group's traces with the mode.
func heatMap(groups []*analyze.Group, codes []string, l linker) template.HTML {
	const left, top, cw, ch = 150.0, 34.0, 52.0, 26.0
	s := newSVG(left+cw*float64(len(codes))+10, top+ch*float64(len(groups))+10, "Share of traces with each MAST mode, by group")
	for j, code := range codes {
		s.text(left+cw*float64(j)+cw/2, top-10, "middle", "axis", strings.TrimPrefix(code, "FM-"))
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

// densityChart draws, for each group, the share of its failed traces that
// show 0, 1, 2, … distinct MAST modes, as grouped bars.
func densityChart(groups []*analyze.Group, l linker) template.HTML {
	maxK := 0
	for _, g := range groups {
		maxK = max(maxK, len(g.Density.Distribution)-1)
	}
	const left, top, height, slot = 44.0, 30.0, 150.0, 16.0
	const legendW = 120.0
	binW := slot*float64(len(groups)) + 10
	width := max(left+binW*float64(maxK+1)+10, legendW*float64(len(groups)))
	s := newSVG(width, top+height+40, "Distinct MAST modes per failed trace, by group")
	for i, g := range groups {
		x := float64(i) * legendW
		s.add(`<rect x="%.1f" y="6" width="10" height="10" fill="%s"/>`, x, palette[i%len(palette)])
		s.text(x+14, 15, "start", "axis", clipName(g.Name, 16))
	}
	base := top + height
	for _, tick := range []float64{0, 0.5, 1} {
		y := base - height*tick
		s.add(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/>`, left, left+binW*float64(maxK+1), y, y)
		s.text(left-6, y+4, "end", "axis", fmt.Sprintf("%.0f%%", 100*tick))
	}
	for k := 0; k <= maxK; k++ {
		x0 := left + binW*float64(k)
		s.text(x0+binW/2, base+16, "middle", "axis", fmt.Sprint(k))
		for i, g := range groups {
			n := 0
			if k < len(g.Density.Distribution) {
				n = g.Density.Distribution[k]
			}
			if n == 0 || g.Failed == 0 {
				continue
			}
			share := float64(n) / float64(g.Failed)
			modes := k
			s.linked(l.traces(g, Traces{Outcome: "failure", ModeCount: &modes}), func() {
				s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`,
					x0+5+slot*float64(i), base-height*share, slot-2, height*share, palette[i%len(palette)],
					esc(fmt.Sprintf("%s: %d of %d failed traces with %d modes", g.Name, n, g.Failed, k)))
			})
		}
	}
	s.text(left+binW*float64(maxK+1)/2, base+34, "middle", "axis", "distinct MAST modes in a failed trace")
	return s.html()
}

// cascadeGraph draws a group's transitions between modes as arrows, the
// modes in columns by stage (before, during, after execution), each node
// saying how many cascades began with it.
func cascadeGraph(g *analyze.Group, l linker) template.HTML {
	c := g.Cascades
	onsets := map[string]int{}
	used := map[string]bool{}
	for _, o := range c.Onsets {
		onsets[o.Mode] = o.Traces
		used[o.Mode] = true
	}
	maxCount := 1
	for _, t := range c.Transitions {
		used[t.From], used[t.To] = true, true
		maxCount = max(maxCount, t.Count)
	}
	stages := []string{"pre", "exec", "post"}
	stageNames := map[string]string{"pre": "before execution", "exec": "during execution", "post": "after execution"}
	const colW, rowH, nodeW, nodeH, top = 240.0, 46.0, 150.0, 28.0, 40.0
	pos := map[string][2]float64{}
	rows := 0
	for col, stage := range stages {
		row := 0
		for _, m := range taxonomy.MAST.Modes {
			if m.Stage == stage && used[m.Code] {
				pos[m.Code] = [2]float64{30 + colW*float64(col), top + rowH*float64(row)}
				row++
			}
		}
		rows = max(rows, row)
	}
	s := newSVG(30+colW*3, top+rowH*float64(rows)+10, "Transitions between modes in the failed traces of "+g.Name)
	s.add(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>`)
	for col, stage := range stages {
		s.text(30+colW*float64(col)+nodeW/2, 18, "middle", "axis", stageNames[stage])
	}
	for _, t := range c.Transitions {
		a, b := pos[t.From], pos[t.To]
		x1, y1 := a[0]+nodeW, a[1]+nodeH/2
		x2, y2 := b[0], b[1]+nodeH/2
		if b[0] <= a[0] { // same column or backwards: leave and enter on the right
			x2 = b[0] + nodeW
		}
		bend := 40.0 + 10*math.Abs(y2-y1)/rowH
		d := fmt.Sprintf("M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f", x1, y1, x1+bend, y1, x2+bend, y2, x2, y2)
		if x2 > x1 {
			d = fmt.Sprintf("M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f", x1, y1, (x1+x2)/2, y1, (x1+x2)/2, y2, x2, y2)
		}
		width := 1 + 5*float64(t.Count)/float64(maxCount)
		s.add(`<path d="%s" class="edge" stroke-width="%.1f" marker-end="url(#arrow)"><title>%s</title></path>`,
			d, width, esc(fmt.Sprintf("%s → %s: %d cascades", t.From, t.To, t.Count)))
	}
	for _, m := range taxonomy.MAST.Modes {
		p, ok := pos[m.Code]
		if !ok {
			continue
		}
		class := "node"
		if onsets[m.Code] > 0 {
			class = "node onset"
		}
		s.linked(l.to(g, "failure", m.Code), func() {
			s.add(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="5" class="%s"><title>%s</title></rect>`,
				p[0], p[1], nodeW, nodeH, class, esc(fmt.Sprintf("%s %s: first in %d cascades", m.Code, m.Name, onsets[m.Code])))
			label := m.Code
			if n := onsets[m.Code]; n > 0 {
				label += fmt.Sprintf(" · first in %d", n)
			}
			s.text(p[0]+nodeW/2, p[1]+nodeH/2+4, "middle", "label", label)
		})
	}
	return s.html()
}
