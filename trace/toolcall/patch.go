package toolcall

import (
	"errors"
	"strings"
)

// Hunk is one "@@" section of an apply_patch update: the lines it expects
// (context and removed) and the lines it leaves (context and added), found
// after the Anchor line when the "@@" header names one.
type Hunk struct {
	Anchor string
	Old    []string
	New    []string
}

// patchWrite reads what an apply_patch body ("*** Begin Patch" … "***
// End Patch") does to the file with base name name: "*** Add File" with
// its "+" lines, "*** Update File" with its hunks, "*** Delete File".
// When the patch names the file more than once, the last section wins.
func patchWrite(body, name string) (Write, bool) {
	lines := strings.Split(body, "\n")
	var w Write
	found := false
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		op, target, ok := patchHeader(line)
		if !ok || !baseIs(target, name) {
			continue
		}
		found = true
		section := sectionLines(lines[i+1:])
		switch op {
		case "Add":
			var content strings.Builder
			for _, l := range section {
				content.WriteString(strings.TrimPrefix(l, "+"))
				content.WriteString("\n")
			}
			w = Write{Change: Whole, How: "apply_patch", Content: content.String()}
		case "Update":
			w = Write{Change: Patched, How: "apply_patch", Hunks: hunks(section)}
		case "Delete":
			w = Write{Change: Deleted, How: "apply_patch"}
		}
	}
	return w, found
}

// patchHeader reads a "*** Add File: p", "*** Update File: p" or "***
// Delete File: p" line.
func patchHeader(line string) (op, target string, ok bool) {
	for _, op := range []string{"Add", "Update", "Delete"} {
		if t, ok := strings.CutPrefix(line, "*** "+op+" File: "); ok {
			return op, strings.TrimSpace(t), true
		}
	}
	return "", "", false
}

// sectionLines returns the lines of one file's section: up to the next
// "*** " line (another file, "*** End Patch"), with "*** Move to:" and
// "*** End of File" markers dropped.
func sectionLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimRight(l, "\r")
		if strings.HasPrefix(l, "*** ") {
			if strings.HasPrefix(l, "*** Move to:") || strings.HasPrefix(l, "*** End of File") {
				continue
			}
			break
		}
		out = append(out, l)
	}
	return out
}

// hunks splits an update section on its "@@" lines.
func hunks(section []string) []Hunk {
	var out []Hunk
	var cur *Hunk
	for _, l := range section {
		if anchor, ok := strings.CutPrefix(l, "@@"); ok {
			out = append(out, Hunk{Anchor: strings.TrimSpace(anchor)})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			out = append(out, Hunk{})
			cur = &out[len(out)-1]
		}
		switch {
		case strings.HasPrefix(l, "+"):
			cur.New = append(cur.New, l[1:])
		case strings.HasPrefix(l, "-"):
			cur.Old = append(cur.Old, l[1:])
		default:
			// A context line: " text", or an empty line standing for an
			// empty context line.
			text := strings.TrimPrefix(l, " ")
			cur.Old = append(cur.Old, text)
			cur.New = append(cur.New, text)
		}
	}
	return out
}

// errPatch means a patch's context is not in the file it is applied to.
var errPatch = errors.New("the patch's context lines are not in the file as the trace shows it")

// applyHunks applies hunks to content in order, as apply_patch does: each
// hunk's old lines are looked for after the previous hunk (and after its
// anchor line), first exactly, then ignoring trailing and then surrounding
// whitespace.
func applyHunks(content string, hs []Hunk) (string, error) {
	trailingNewline := strings.HasSuffix(content, "\n")
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	if content == "" {
		lines = nil
	}
	pos := 0
	for _, h := range hs {
		if h.Anchor != "" {
			at := find(lines, []string{h.Anchor}, pos)
			if at < 0 {
				return "", errPatch
			}
			pos = at + 1
		}
		old := h.Old
		// A trailing empty context line stands for the end of the file.
		for len(old) > 0 && old[len(old)-1] == "" && len(h.New) > 0 && h.New[len(h.New)-1] == "" {
			old, h.New = old[:len(old)-1], h.New[:len(h.New)-1]
		}
		at := len(lines)
		if len(old) > 0 {
			if at = find(lines, old, pos); at < 0 {
				return "", errPatch
			}
		}
		next := make([]string, 0, len(lines)-len(old)+len(h.New))
		next = append(next, lines[:at]...)
		next = append(next, h.New...)
		next = append(next, lines[at+len(old):]...)
		lines = next
		pos = at + len(h.New)
	}
	out := strings.Join(lines, "\n")
	if trailingNewline || content == "" {
		out += "\n"
	}
	return out, nil
}

// find returns the first index at or after from where want occurs in
// lines, comparing exactly, then without trailing whitespace, then without
// surrounding whitespace; -1 when it does not occur.
func find(lines, want []string, from int) int {
	for _, norm := range []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.TrimRight(s, " \t") },
		strings.TrimSpace,
	} {
	next:
		for i := from; i+len(want) <= len(lines); i++ {
			for k, w := range want {
				if norm(lines[i+k]) != norm(w) {
					continue next
				}
			}
			return i
		}
	}
	return -1
}
