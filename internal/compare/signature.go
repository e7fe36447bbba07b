package compare

import (
	"encoding/json"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
)

// signature is what the alignment knows of one tool call: three keys from
// the most to the least specific, and a one-line label for a reader.
type signature struct {
	// full is the whole call, normalised: the same full key means the same
	// call, made in another run.
	full string
	// main is the tool, the program and its operands (a shell command's
	// flags, or a structured call's nested options, left out).
	main string
	// program is the tool and, for a shell command, the program it runs.
	program string
	label   string
}

// Weights of an alignment: a pair of calls adds its affinity, a gap
// nothing, so the alignment keeps as many and as close pairs as it can. A
// pair on the program alone weighs little: two of them count for less
// than one pair on the same operands or one exact pair, so loose pairs
// fill the gaps between close ones rather than displace them.
const (
	weightExact   = 4
	weightMain    = 3
	weightProgram = 1
)

// shellFamily names every tool that runs a command line: Codex's shell,
// exec_command, a framework's bash tool. Calls of any of them compare as
// one tool, since two harnesses may name the same shell differently.
const shellFamily = "shell"

// signatureOf reads a tool call's signature from its tool and arguments.
func signatureOf(s *trace.Step) signature {
	args := strings.TrimSpace(s.Args)
	var top map[string]json.RawMessage
	if strings.HasPrefix(args, "{") && json.Unmarshal([]byte(args), &top) == nil {
		if _, ok := top["command"]; ok {
			return shellSignature(toolcall.CommandOf(args, top))
		}
		if _, ok := top["cmd"]; ok {
			return shellSignature(toolcall.CommandOf(args, top))
		}
		return structuredSignature(s.Tool, top)
	}
	// Arguments that are not an object are the call's text as written
	// (a command for a shell tool, a query for a search).
	text := shortenPaths(trace.NormalizeSpace(args))
	key := s.Tool + "\x00" + maskVolatile(text)
	return signature{full: key, main: key, program: s.Tool, label: strings.TrimSpace(displayTool(s.Tool) + " " + text)}
}

// shellSignature reads a command line: its program is the first word of
// its first command (after environment assignments and wrappers such as
// sudo), its operands the words of that command that are not flags.
func shellSignature(cmd string) signature {
	label := shortenPaths(trace.NormalizeSpace(cmd))
	words := firstCommand(label)
	program := ""
	var operands []string
	for _, w := range words {
		switch {
		case program == "":
			program = path.Base(w)
		case strings.HasPrefix(w, "-") && len(w) > 1:
		default:
			operands = append(operands, maskVolatile(w))
		}
	}
	// A command that writes a file does something else than the same
	// program reading one (cat > f against cat f).
	if len(toolcall.WrittenFiles(cmd)) > 0 {
		program += " >"
	}
	key := shellFamily + "\x00" + program
	return signature{
		full:    shellFamily + "\x00" + maskVolatile(label),
		main:    key + "\x00" + strings.Join(operands, "\x00"),
		program: key,
		label:   label,
	}
}

// structuredSignature reads a call whose arguments are named (an MCP
// tool, a file editor): its main key holds the scalar arguments, its full
// key every argument.
func structuredSignature(tool string, top map[string]json.RawMessage) signature {
	names := make([]string, 0, len(top))
	for k := range top {
		names = append(names, k)
	}
	sort.Strings(names)
	var full, main, shown []string
	for _, k := range names {
		var str string
		var value string
		scalar := true
		switch raw := top[k]; {
		case json.Unmarshal(raw, &str) == nil:
			value = shortenPaths(trace.NormalizeSpace(str))
		case len(raw) > 0 && (raw[0] == '{' || raw[0] == '['):
			scalar = false
			value = compactJSON(raw)
		default:
			value = string(raw)
		}
		pair := k + "=" + maskVolatile(value)
		full = append(full, pair)
		if scalar {
			main = append(main, pair)
		}
		shown = append(shown, k+"="+value)
	}
	return signature{
		full:    tool + "\x00" + strings.Join(full, "\x00"),
		main:    tool + "\x00" + strings.Join(main, "\x00"),
		program: tool,
		label:   strings.TrimSpace(displayTool(tool) + " " + strings.Join(shown, " ")),
	}
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v) // a value just decoded encodes; keys come out sorted
	return shortenPaths(string(b))
}

// displayTool shortens an MCP tool's name (mcp__server__tool) to the tool's
// own, for labels; keys keep the whole name.
func displayTool(tool string) string {
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if _, name, ok := strings.Cut(rest, "__"); ok {
			return name
		}
	}
	return tool
}

// firstCommand splits the first simple command of a command line into
// words, quotes removed: it ends at the first unquoted |, ;, & or newline.
// Leading environment assignments and wrappers that run the real program
// (sudo, env, time, nohup, timeout and its duration) are skipped.
func firstCommand(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
scan:
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '|' || r == ';' || r == '&' || r == '\n':
			break scan
		case r == ' ' || r == '\t':
			flush()
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	for len(words) > 0 {
		switch w := words[0]; {
		case envAssignment.MatchString(w), wrappers[w]:
			words = words[1:]
		case w == "timeout" && len(words) > 1:
			words = words[2:]
		default:
			return words
		}
	}
	return words
}

var (
	envAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	wrappers      = map[string]bool{"sudo": true, "env": true, "time": true, "nohup": true, "exec": true}
)

// shortenPaths writes each absolute path (and each from the home
// directory) of two elements or more as "…/" and its last element: two
// runs of the same task are often made in different directories, and the
// name is what a reader recognises. Relative paths stay as written.
func shortenPaths(s string) string {
	return pathLike.ReplaceAllStringFunc(s, func(p string) string {
		rest, ok := strings.CutPrefix(p, "~")
		if !strings.HasPrefix(rest, "/") || (!ok && strings.Count(strings.Trim(rest, "/"), "/") == 0) {
			return p
		}
		base := path.Base(rest)
		if base == "/" || base == "." || base == ".." {
			return p
		}
		return "…/" + base
	})
}

// pathLike matches a word holding a slash, up to the quotes, separators and
// brackets around it.
var pathLike = regexp.MustCompile(`[^\s'"=,;|&<>()\[\]{}]*/[^\s'"=,;|&<>()\[\]{}]*`)

// maskVolatile replaces what differs between runs of the same call and
// says nothing of what it does: UUIDs, timestamps and long hexadecimal ids
// (a hash, a container id).
func maskVolatile(s string) string {
	s = uuidOrTime().ReplaceAllString(s, "#")
	return longHex().ReplaceAllStringFunc(s, func(h string) string {
		if strings.ContainsAny(h, "0123456789") {
			return "#"
		}
		return h
	})
}

var (
	uuidOrTime = text.Regexp(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?`)
	longHex    = text.Regexp(`\b[0-9a-fA-F]{12,}\b`)
)
