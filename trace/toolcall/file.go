package toolcall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/faultline/faultline/trace"
)

// File is what a run's tool calls show of one file by the end of the run.
type File struct {
	Name string
	// Attempts are the calls that tried to write it, in order; Writes those
	// of them that succeeded. A write counts only when its call succeeded.
	Attempts []int
	Writes   []int
	// Reads are the successful calls that read or printed it.
	Reads []int
	// Exists is true when some step shows the file was there at the end
	// (a successful write, read or print, and no delete after it).
	Exists bool
	// Content is the file's final content, when Known. Printed copies (cat,
	// jq ., json.tool) after the last write are the best evidence of what is
	// on disk; otherwise the last write that showed the whole file, with any
	// patches or edits after it applied.
	Content string
	Known   bool
	// At is the step Content was read from (a call that wrote or printed
	// it; the last that showed it, when several agree), and Evidence says
	// how, for a reader; At is -1 when not Known.
	At       int
	Evidence string
	// Blind is the last successful write whose effect the trace does not
	// show (a script, a redirected command, a patch whose context does not
	// match), when nothing printed the file after it; -1 otherwise. Why
	// says what could not be read.
	Blind int
	Why   string
}

// Final follows the file with base name name through a run's tool calls
// and returns what the trace shows of it at the end.
func Final(t *trace.Trace, name string) File {
	return FinalOf(t, name, func(i int) Call { return Decode(t.Steps[i].Args) })
}

// FinalOf is Final reading the tool call at step i through call(i), for a
// caller that keeps its calls decoded.
func FinalOf(t *trace.Trace, name string, call func(i int) Call) File {
	f := File{Name: name, At: -1, Blind: -1}
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Kind != trace.KindToolCall || !strings.Contains(s.Args, name) {
			continue
		}
		c := call(i)
		cmd := c.Command
		w, writes := writeOf(s.Tool, name, c)
		ok := Succeeded(t, i)
		if writes {
			f.Attempts = append(f.Attempts, i)
		}
		printAt, prints := printsWhole(cmd, name)
		if ok && writes && (!prints || printAt > w.at) {
			f.apply(i, w)
		}
		if ok && (prints || reads(cmd, name)) {
			f.Reads = append(f.Reads, i)
			if !writes || w.Change != Deleted {
				f.Exists = true
			}
		}
		if ok && prints {
			f.printed(i, Output(t, i), cmd[printAt:])
		}
		if ok && writes && prints && printAt <= w.at {
			f.apply(i, w)
		}
	}
	return f
}

func (f *File) apply(step int, w Write) {
	f.Exists = true
	if w.Change == Touched {
		// touch creates the file when it is missing and changes nothing
		// otherwise; whether it was missing the trace does not say, so the
		// content stays as known (or unknown), and nothing was written.
		return
	}
	f.Writes = append(f.Writes, step)
	blind := func(why string) {
		f.Known, f.Content, f.At, f.Evidence = false, "", -1, ""
		f.Blind, f.Why = step, why
	}
	switch w.Change {
	case Whole:
		f.know(step, w.Content, fmt.Sprintf("written by step %d (%s)", step, w.How))
	case Deleted:
		f.Exists, f.Known, f.Content, f.At, f.Evidence = false, false, "", -1, ""
		f.Blind, f.Why = -1, ""
	case Patched:
		if !f.Known {
			blind(fmt.Sprintf("step %d patched it (%s) and the trace never showed the version it patched", step, w.How))
			return
		}
		next, err := applyHunks(f.Content, w.Hunks)
		if err != nil {
			blind(fmt.Sprintf("step %d patched it (%s): %v", step, w.How, err))
			return
		}
		f.know(step, next, fmt.Sprintf("patched by step %d (%s) over the version %s", step, w.How, f.Evidence))
	case Edited:
		if !f.Known || !strings.Contains(f.Content, w.Old) {
			blind(fmt.Sprintf("step %d edited it (%s) and the trace does not show the text it replaced", step, w.How))
			return
		}
		f.know(step, strings.Replace(f.Content, w.Old, w.New, 1), fmt.Sprintf("edited by step %d (%s) in the version %s", step, w.How, f.Evidence))
	default:
		blind(fmt.Sprintf("step %d wrote it by %s, which does not show what it wrote", step, w.How))
	}
}

func (f *File) know(step int, content, evidence string) {
	f.Known, f.Content, f.At, f.Evidence = true, content, step, evidence
	f.Blind, f.Why = -1, ""
}

// printed takes a printed copy of the file as evidence of its content. A
// copy that reads as the same JSON as the version already known confirms
// it and keeps its exact text (jq reformats); any other copy replaces it.
func (f *File) printed(step int, output, how string) {
	text := strings.TrimSpace(stripOutputHeader(output))
	isJSON := strings.EqualFold(filepath.Ext(f.Name), ".json")
	if text == "" || (isJSON && !json.Valid([]byte(text))) {
		return
	}
	word, _, _ := strings.Cut(strings.TrimSpace(how), " ")
	evidence := fmt.Sprintf("printed by step %d (%s)", step, filepath.Base(word))
	if f.Known && isJSON && SameJSON(f.Content, text) {
		f.At, f.Evidence = step, fmt.Sprintf("%s, then %s", f.Evidence, evidence)
		f.Blind, f.Why = -1, ""
		return
	}
	f.know(step, text+"\n", evidence)
}

// stripOutputHeader removes the line count Codex puts before long outputs
// ("Total output lines: 35" and a blank line).
func stripOutputHeader(out string) string {
	if rest, ok := strings.CutPrefix(out, "Total output lines: "); ok {
		if _, body, ok := strings.Cut(rest, "\n"); ok {
			return strings.TrimPrefix(body, "\n")
		}
	}
	return out
}

// SameJSON reports whether a and b hold equal JSON values (key order and
// layout aside).
func SameJSON(a, b string) bool {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// printsWhole finds, in a command line, a command that prints the whole
// file to the output and nothing else: cat, `jq .` (with only output
// options) or `python -m json.tool`, not piped into another command. at is
// the offset of that command.
func printsWhole(cmd, name string) (at int, ok bool) {
	found := -1
	for _, word := range []string{"cat", "jq", "json.tool"} {
		for _, at := range wordPositions(cmd, word) {
			args := restOfCommand(cmd, at+len(word))
			end := at + len(word) + len(args)
			if end < len(cmd) && cmd[end] == '|' && !strings.HasPrefix(cmd[end:], "||") {
				continue // piped on: the output is not the file
			}
			fields := strings.Fields(args)
			if len(fields) == 0 || !baseIs(fields[len(fields)-1], name) {
				continue
			}
			switch word {
			case "cat":
				if len(fields) != 1 {
					continue // several files, or options such as -n
				}
			case "jq":
				filter := ""
				for _, a := range fields[:len(fields)-1] {
					if !strings.HasPrefix(a, "-") {
						filter += a
					}
				}
				if strings.Trim(filter, `'"`) != "." {
					continue
				}
			case "json.tool":
				if !strings.HasSuffix(strings.TrimRight(cmd[:at], " "), "-m") {
					continue
				}
			}
			if at > found {
				found = at
			}
		}
	}
	return found, found >= 0
}

// reads reports whether a command reads the file in a way that succeeds
// only when it exists: cat, head, tail, less, wc, stat, ls, file, jq,
// `test -f`, `[ -f … ]`, json.tool.
func reads(cmd, name string) bool {
	for _, word := range []string{"cat", "head", "tail", "less", "wc", "stat", "ls", "file", "jq", "json.tool", "test", "["} {
		for _, at := range wordPositions(cmd, word) {
			for _, a := range strings.Fields(restOfCommand(cmd, at+len(word))) {
				if baseIs(strings.TrimSuffix(a, "]"), name) {
					return true
				}
			}
		}
	}
	return false
}
