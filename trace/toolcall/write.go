package toolcall

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/faultline/faultline/trace"
)

// Change says how a call changes a file.
type Change int

const (
	// Whole replaces the file with Content.
	Whole Change = iota
	// Patched applies Hunks (an apply_patch "*** Update File" section) to the
	// file as it was.
	Patched
	// Edited replaces Old with New in the file as it was (an editor tool's
	// string replacement).
	Edited
	// Opaque changes the file in a way the call does not show: a script
	// that writes it, a command's output redirected into it, a copy or move
	// onto it, an in-place sed, an append.
	Opaque
	// Touched creates the file empty when it does not exist, and leaves it
	// as it was otherwise.
	Touched
	// Deleted removes the file.
	Deleted
)

// Write is what one tool call does to one file.
type Write struct {
	Change Change
	// How names the means, for a reader: "heredoc", "echo", "apply_patch",
	// "script", "redirect", "tee", "copy", "sed -i", "touch", or the file
	// tool's name.
	How     string
	Content string // the whole file, for Whole
	Hunks   []Hunk // for Patched
	Old     string // for Edited
	New     string // for Edited
	at      int    // where in the command the write happens, to order it against a print
}

// fileTools are editor and file-system tools (MCP servers, coding agents)
// whose arguments name a path and carry the content or a replacement.
var fileTools = map[string]bool{
	"write_file": true, "create_file": true, "write": true, "file_write": true, "save_file": true,
	"write_to_file": true, "edit_file": true, "str_replace_editor": true, "str_replace_based_edit_tool": true,
	"edit": true, "create": true,
}

// WriteOf reports what the tool call s does to the file with base name
// name, if it writes it at all. Only the call is read, not its result:
// whether the write took effect is Succeeded's question.
func WriteOf(s *trace.Step, name string) (Write, bool) {
	if s.Kind != trace.KindToolCall || !strings.Contains(s.Args, name) {
		return Write{}, false
	}
	return writeOf(s.Tool, name, Decode(s.Args))
}

// writeOf is WriteOf of a call to tool whose arguments c decodes.
func writeOf(tool, name string, c Call) (Write, bool) {
	if name == "" {
		return Write{}, false
	}
	if w, ok := fileToolWrite(tool, c.Args, name); ok {
		return w, true
	}
	if i := strings.Index(c.Command, "*** Begin Patch"); i >= 0 {
		if w, ok := patchWrite(c.Command[i:], name); ok {
			return w, true
		}
	}
	return shellWrite(c.Command, name)
}

// baseIs reports whether path, as written in a command or argument, names
// a file with base name name.
func baseIs(path, name string) bool {
	path = strings.Trim(strings.TrimSpace(path), `'"`)
	return path != "" && filepath.Base(path) == name
}

func fileToolWrite(tool string, top map[string]json.RawMessage, name string) (Write, bool) {
	short := tool
	if i := strings.LastIndex(short, "__"); i >= 0 && i+2 < len(short) {
		short = short[i+2:]
	}
	if top == nil || !fileTools[strings.ToLower(short)] {
		return Write{}, false
	}
	str := func(keys ...string) (string, bool) {
		for _, k := range keys {
			var v string
			if json.Unmarshal(top[k], &v) == nil {
				return v, true
			}
		}
		return "", false
	}
	path, _ := str("path", "file_path", "filename", "target_file", "file")
	if !baseIs(path, name) {
		return Write{}, false
	}
	if command, _ := str("command"); command == "view" {
		return Write{}, false
	}
	if old, ok := str("old_str", "old_string", "old_text"); ok {
		repl, _ := str("new_str", "new_string", "new_text")
		return Write{Change: Edited, How: short, Old: old, New: repl}, true
	}
	if content, ok := str("content", "contents", "file_text", "text"); ok {
		return Write{Change: Whole, How: short, Content: content}, true
	}
	return Write{Change: Opaque, How: short}, true
}

// shellWrite recognises the shell's ways of writing a file: a heredoc or an
// echo redirected into it (content shown), tee, touch, and the ones that do
// not show what they write (a command's output redirected, a copy or move,
// sed -i, a script that opens the file for writing).
func shellWrite(cmd, name string) (Write, bool) {
	best, found := Write{}, false
	keep := func(w Write) {
		// The last write in the command decides what the file holds.
		if !found || w.at >= best.at {
			best, found = w, true
		}
	}
	for _, r := range redirects(cmd) {
		if !baseIs(r.target, name) {
			continue
		}
		w := Write{Change: Opaque, How: "redirect", at: r.at}
		if !r.appends {
			if body, terminated, ok := heredocOnLine(cmd, r.at); ok {
				w = Write{Change: Whole, How: "heredoc", Content: body, at: r.at}
				if !terminated {
					// The shell would have waited for the delimiter.
					w = Write{Change: Opaque, How: "heredoc without its delimiter", at: r.at}
				}
			} else if text, ok := echoed(cmd[lineStart(cmd, r.at):r.at]); ok {
				w = Write{Change: Whole, How: "echo", Content: text, at: r.at}
			}
		}
		keep(w)
	}
	for _, at := range wordPositions(cmd, "tee") {
		args := restOfCommand(cmd, at+len("tee"))
		for _, a := range strings.Fields(args) {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if baseIs(a, name) {
				w := Write{Change: Opaque, How: "tee", at: at}
				if body, terminated, ok := heredocOnLine(cmd, at); ok && terminated && !strings.Contains(args, " -a") {
					w = Write{Change: Whole, How: "heredoc | tee", Content: body, at: at}
				}
				keep(w)
			}
			break
		}
	}
	for _, op := range []struct{ word, how string }{{"touch", "touch"}, {"cp", "copy"}, {"mv", "move"}, {"install", "copy"}, {"sed", "sed -i"}} {
		for _, at := range wordPositions(cmd, op.word) {
			args := strings.Fields(restOfCommand(cmd, at+len(op.word)))
			if len(args) == 0 {
				continue
			}
			switch op.word {
			case "touch":
				for _, a := range args {
					if baseIs(a, name) {
						keep(Write{Change: Touched, How: "touch", at: at})
					}
				}
			case "sed":
				if (args[0] == "-i" || strings.HasPrefix(args[0], "-i")) && baseIs(args[len(args)-1], name) {
					keep(Write{Change: Opaque, How: op.how, at: at})
				}
			default:
				if baseIs(args[len(args)-1], name) && len(args) >= 2 {
					keep(Write{Change: Opaque, How: op.how, at: at})
				}
			}
		}
	}
	if at, ok := scriptOpensForWriting(cmd, name); ok {
		keep(Write{Change: Opaque, How: "script", at: at})
	}
	return best, found
}

// scriptOpensForWriting finds a Python or Node script, inline in the
// command, that opens the file for writing: open('…/name', 'w'),
// Path('…/name').write_text(…), fs.writeFileSync('…/name', …).
func scriptOpensForWriting(cmd, name string) (int, bool) {
	for from := 0; ; {
		i := strings.Index(cmd[from:], name)
		if i < 0 {
			return 0, false
		}
		at := from + i
		from = at + len(name)
		end := from
		if end < len(cmd) && (cmd[end] == '\'' || cmd[end] == '"') {
			end++
		} else {
			continue
		}
		before := cmd[max(0, at-200):at]
		q := strings.LastIndexAny(before, `'"`)
		if q < 0 {
			continue
		}
		call := strings.TrimRight(before[:q], " \t")
		after := strings.TrimLeft(cmd[end:min(len(cmd), end+40)], " \t")
		switch {
		case strings.HasSuffix(call, "open(") && (strings.HasPrefix(after, ",") && writeMode(after)):
			return at, true
		case strings.HasSuffix(call, "Path(") && strings.Contains(after, ".write_text("):
			return at, true
		case strings.HasSuffix(call, "writeFileSync(") || strings.HasSuffix(call, "writeFile("):
			return at, true
		}
	}
}

// writeMode reports whether the arguments after a path in open(path, …)
// open it for writing or appending.
func writeMode(after string) bool {
	rest := strings.TrimLeft(strings.TrimPrefix(after, ","), " \t")
	rest = strings.TrimPrefix(rest, "mode=")
	return strings.HasPrefix(rest, `'w`) || strings.HasPrefix(rest, `"w`) ||
		strings.HasPrefix(rest, `'a`) || strings.HasPrefix(rest, `"a`)
}

// WrittenFiles lists the files a command line writes by a patch ("***
// Add File:", "*** Update File:", "*** Delete File:") or an output
// redirection ("> f", ">> f"; not "2>&1", "->" or ">="), as the command
// names them, whatever the file. It runs on every command of a run, so it
// scans by hand rather than with regular expressions.
func WrittenFiles(cmd string) []string {
	var out []string
	for _, op := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: "} {
		for rest := cmd; ; {
			i := strings.Index(rest, op)
			if i < 0 {
				break
			}
			rest = rest[i+len(op):]
			// A patch inside JSON-escaped arguments ends its line with "\n".
			end := strings.IndexAny(rest, " \t\r\n\\")
			if end < 0 {
				end = len(rest)
			}
			if end > 0 {
				out = append(out, rest[:end])
			}
		}
	}
	for _, r := range redirects(cmd) {
		target := strings.Trim(r.target, `'"`)
		if target != "" && (target[0] == '/' || isAlnum(target[0]) || strings.IndexByte("._@%+~-", target[0]) >= 0) {
			out = append(out, target)
		}
	}
	return out
}

// redirection is one "> target" or ">> target" of a command line.
type redirection struct {
	target  string
	at      int // offset of the '>'
	appends bool
}

// redirects lists a command line's output redirections into files, scanned
// by hand (it runs on every command of a run): not "2>&1", "->", "=>" or
// a comparison inside brackets.
func redirects(cmd string) []redirection {
	var out []redirection
	for i := 0; i < len(cmd); i++ {
		if cmd[i] != '>' {
			continue
		}
		// Not "2>" (errors), "&>", "->", "=>", "<>".
		if i > 0 && strings.IndexByte("2&-=<", cmd[i-1]) >= 0 {
			continue
		}
		at := i
		appends := false
		j := i + 1
		if j < len(cmd) && cmd[j] == '>' {
			appends = true
			j++
		}
		if j < len(cmd) && (cmd[j] == '&' || cmd[j] == '=') {
			i = j
			continue
		}
		for j < len(cmd) && (cmd[j] == ' ' || cmd[j] == '\t') {
			j++
		}
		start := j
		quote := byte(0)
		if j < len(cmd) && (cmd[j] == '\'' || cmd[j] == '"') {
			quote = cmd[j]
			j++
		}
		for j < len(cmd) {
			c := cmd[j]
			if quote != 0 {
				if c == quote {
					j++
					break
				}
			} else if strings.IndexByte(" \t\r\n<>|;&)\\", c) >= 0 {
				break
			}
			j++
		}
		if j > start {
			out = append(out, redirection{target: cmd[start:j], at: at, appends: appends})
		}
		i = j - 1
	}
	return out
}

// lineStart returns the offset where the shell line holding offset at
// begins.
func lineStart(cmd string, at int) int {
	return strings.LastIndexByte(cmd[:at], '\n') + 1
}

// heredocOnLine returns the body of a heredoc opened on the line holding
// offset at ("cat <<EOF > f", "cat > f <<'EOF'", "cat <<-EOF | tee f"),
// up to the line holding only its delimiter; ok is false when that line
// opens no heredoc. An unterminated body runs to the end of the command,
// and terminated is false.
func heredocOnLine(cmd string, at int) (body string, terminated, ok bool) {
	start := lineStart(cmd, at)
	end := strings.IndexByte(cmd[at:], '\n')
	if end < 0 {
		return "", false, false // nothing follows the line: no body
	}
	line := cmd[start : at+end]
	i := strings.Index(line, "<<")
	if i < 0 || strings.HasPrefix(line[i:], "<<<") {
		return "", false, false
	}
	rest := line[i+2:]
	dash := strings.HasPrefix(rest, "-")
	rest = strings.TrimLeft(strings.TrimPrefix(rest, "-"), " \t")
	quote := ""
	if rest != "" && (rest[0] == '\'' || rest[0] == '"') {
		quote = rest[:1]
		rest = rest[1:]
	}
	n := 0
	for n < len(rest) && (rest[n] == '_' || rest[n] == '-' || isAlnum(rest[n])) {
		n++
	}
	delim := rest[:n]
	if delim == "" || (quote != "" && !strings.HasPrefix(rest[n:], quote)) {
		return "", false, false
	}
	body = cmd[at+end+1:]
	for off := 0; off <= len(body); {
		nl := strings.IndexByte(body[off:], '\n')
		lineEnd := len(body)
		if nl >= 0 {
			lineEnd = off + nl
		}
		l := strings.TrimRight(body[off:lineEnd], "\r")
		if dash {
			l = strings.TrimLeft(l, "\t")
		}
		if l == delim {
			return body[:off], true, true
		}
		if nl < 0 {
			break
		}
		off = lineEnd + 1
	}
	return body, false, true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// echoed reads the text of `echo '…'` or `printf "…"` when segment (the
// line up to a redirection) is exactly such a command.
func echoed(segment string) (string, bool) {
	if k := strings.LastIndexAny(segment, ";&|"); k >= 0 {
		segment = segment[k+1:]
	}
	fields := strings.TrimSpace(segment)
	word, rest, ok := strings.Cut(fields, " ")
	if !ok || (word != "echo" && word != "printf") {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	for strings.HasPrefix(rest, "-") {
		_, rest, _ = strings.Cut(rest, " ")
		rest = strings.TrimSpace(rest)
	}
	if len(rest) < 2 || (rest[0] != '\'' && rest[0] != '"') || rest[len(rest)-1] != rest[0] {
		return "", false
	}
	text := rest[1 : len(rest)-1]
	if rest[0] == '"' {
		if strings.ContainsAny(text, "$`") {
			return "", false // expansions: the shell decides the text
		}
		text = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(text)
	} else if strings.Contains(text, "'") {
		return "", false
	}
	return text + "\n", true
}

// Runs reports whether a command line runs name as a command, not merely
// mentions it: name is followed by a separator or the end, and stands where
// a command stands (see commandAt).
func Runs(cmd, name string) bool { return len(wordPositions(cmd, name)) > 0 }

// wordPositions returns the offsets where word stands in cmd as a command:
// followed by a separator or the end of the line, where commandAt says a
// command starts.
func wordPositions(cmd, word string) []int {
	var out []int
	for from := 0; ; {
		i := strings.Index(cmd[from:], word)
		if i < 0 {
			return out
		}
		at, end := from+i, from+i+len(word)
		from = end
		if (end == len(cmd) || strings.IndexByte(" \t\n;&|)'\"", cmd[end]) >= 0) && commandAt(cmd, at) {
			out = append(out, at)
		}
	}
}

// commandWrappers are words that run the command after them.
var commandWrappers = []string{"sudo", "xargs", "env", "time", "nohup", "exec", "then", "do"}

// commandAt reports whether offset at of a command line is where a command
// word starts: before it, past a path to it ("/usr/bin/jq") and spaces,
// comes the start of the line, a shell separator, the quote opening a
// "bash -c" script, or a wrapper such as sudo.
func commandAt(cmd string, at int) bool {
	k := at
	if k > 0 && cmd[k-1] == '/' {
		for k > 0 && strings.IndexByte(" \t\n;&|(", cmd[k-1]) < 0 {
			k--
		}
	}
	for k > 0 && (cmd[k-1] == ' ' || cmd[k-1] == '\t') {
		k--
	}
	if k == 0 || strings.IndexByte(";&|(\n`{", cmd[k-1]) >= 0 {
		return true
	}
	// The script of "bash -c '…'" starts with a command too.
	if q := cmd[k-1]; q == '\'' || q == '"' {
		before := strings.TrimRight(cmd[:k-1], " \t")
		if strings.HasSuffix(before, "-c") || strings.HasSuffix(before, "-lc") {
			return true
		}
	}
	for _, w := range commandWrappers {
		if strings.HasSuffix(cmd[:k], w) && commandAt(cmd, k-len(w)) {
			return true
		}
	}
	return false
}

// restOfCommand returns the arguments of the simple command starting at
// offset from: up to the next separator, pipe or redirection.
func restOfCommand(cmd string, from int) string {
	end := strings.IndexAny(cmd[from:], ";&|<>\n")
	if end < 0 {
		return cmd[from:]
	}
	return cmd[from : from+end]
}
