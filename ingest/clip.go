package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// The text limit. A single text of a trace (a tool's output, a message) can
// be hundreds of megabytes: a command that printed a whole log, a file read
// back whole. Holding it, and the copies a JSON decoder makes of a line or a
// record on the way, cost about eleven times its size. So ingest keeps at
// most DefaultTextLimit bytes of any one text: its head and its tail, half
// the limit each, with a mark in place of the middle that says how many
// bytes were cut there (see cutMarker); the trace's meta keeps each cut
// text's original size (see limitTrace). The cut is made as the bytes
// stream in (see clipReader), so that the middle is never held at all.

// DefaultTextLimit is the most of one text a step keeps, in bytes: 1 MiB.
// The largest texts in the real traces faultline was built on are tool
// outputs of about 650 KB (a Kubernetes spec diff through MCP), which stay
// whole; the judge shows at most 32,000 characters of a step and the
// detectors read texts for their first lines, error words and exit codes,
// so a longer text adds nothing they use, only memory and store size.
// A text that is JSON holding texts cut to the limit (a shell's output
// with its exit code after it) keeps its structure, up to nestedCap
// limits.
const DefaultTextLimit = 1 << 20

// cutMarker stands in a text for the n bytes cut from its middle.
func cutMarker(n int64) string {
	return "\n" + cutMarkerPrefix + strconv.FormatInt(n, 10) + cutMarkerSuffix + "\n"
}

const (
	cutMarkerPrefix = "[… faultline ingest cut "
	cutMarkerSuffix = " bytes here …]"
)

// nestedCap bounds, in limits, what a cut string holding a JSON document
// keeps once its own strings are cut: a document longer than that even so
// (a million short strings) is cut as text.
const nestedCap = 4

// maxNesting bounds how deep JSON held in strings is read as JSON: Codex
// writes a tool's output as a JSON string holding MCP parts, each a JSON
// string holding the tool's JSON.
const maxNesting = 3

// clipReader is an io.Reader over JSON text (one document or JSON Lines)
// that cuts every string longer than limit decoded bytes to its head and
// tail around a cutMarker, as it streams: it holds at most about limit
// bytes of any string (plus the tail it keeps), whatever the length of the
// string or the line. Everything outside strings passes through as it is,
// and so do strings within the limit, byte for byte; the lines stay where
// they were, since a cut string never held a raw newline.
//
// A cut string whose content is itself JSON (a tool's output as
// {"output": ..., "metadata": {"exit_code": 1}}) is read as JSON in turn,
// its own strings cut, so that it stays valid JSON and keeps what follows
// the long text; only when it is longer than nestedCap limits even so is it
// cut as text.
//
// A raw newline cannot be inside a JSON string; one that seems to be (a
// line cut short in JSON Lines) ends the string, so one broken line does not
// throw the reading of the rest off.
type clipReader struct {
	pushReader
	c    *jsonClipper
	path *jsonPath
}

// newClipReader cuts the strings of r over limit bytes; limit <= 0 cuts
// nothing. trackPath keeps the JSON path being read, for Where.
func newClipReader(r io.Reader, limit int, trackPath bool) *clipReader {
	cr := &clipReader{}
	cr.pushReader = pushReader{r: r, in: make([]byte, 64<<10), write: cr.write, end: func() {}}
	if trackPath {
		cr.path = &jsonPath{}
	}
	if limit > 0 {
		cr.c = &jsonClipper{limit: limit, path: cr.path}
		cr.c.emit = func(b []byte) { cr.out = append(cr.out, b...) }
		cr.end = cr.c.finish
	}
	return cr
}

// Read implements io.Reader.
func (cr *clipReader) Read(p []byte) (int, error) {
	if cr.c == nil && cr.path == nil {
		return cr.r.Read(p)
	}
	return cr.pushReader.Read(p)
}

func (cr *clipReader) write(b []byte) {
	if cr.c != nil {
		cr.c.write(b)
		return
	}
	// Nothing to cut: the path only.
	cr.path.scan(b)
	cr.out = append(cr.out, b...)
}

// Where names the JSON value being read when the input stopped, as a path
// ("samples[2].messages[0].content"), or "" at the top level or without
// tracking.
func (cr *clipReader) Where() string {
	if cr.path == nil {
		return ""
	}
	return cr.path.String()
}

// jsonClipper cuts the long strings of one level of JSON text: the input
// (level 0), or the content of a string read as JSON in turn.
type jsonClipper struct {
	limit int
	depth int
	emit  func([]byte)
	path  *jsonPath // at level 0 when tracking
	// parent is the clipper of the string this one reads as JSON.
	parent *jsonClipper

	inString bool
	esc      bool   // the content so far ends in an unpaired backslash
	key      bool   // the string is an object's key (path tracking)
	sbuf     []byte // the string's raw content, while it is within the limit
	long     *longString

	// markerBytes counts the bytes of the cut marks written at this level
	// and below, which the levels above do not count against a document
	// they read (see nestedCap).
	markerBytes int64
}

// write processes the next bytes of the text.
func (c *jsonClipper) write(p []byte) {
	for len(p) > 0 {
		switch {
		case !c.inString:
			p = c.outside(p)
		case c.long != nil:
			p = c.long.write(p)
		default:
			p = c.buffering(p)
		}
	}
}

// finish ends the text: a string left open (a truncated file) is written
// out as far as it went, unclosed, so that the decoder sees the truncation.
func (c *jsonClipper) finish() {
	if !c.inString {
		return
	}
	if c.long != nil {
		c.long.close(false)
		return
	}
	c.emit(c.sbuf)
	c.endString()
}

func (c *jsonClipper) outside(p []byte) []byte {
	if c.path == nil {
		i := bytes.IndexByte(p, '"')
		if i < 0 {
			c.emit(p)
			return nil
		}
		c.emit(p[:i+1])
		c.startString()
		return p[i+1:]
	}
	for i, b := range p {
		if b == '"' {
			c.emit(p[:i+1])
			c.startString()
			return p[i+1:]
		}
		c.path.structural(b)
	}
	c.emit(p)
	return nil
}

func (c *jsonClipper) startString() {
	c.inString, c.esc = true, false
	c.key = c.path != nil && c.path.keyNext
}

func (c *jsonClipper) endString() {
	c.inString, c.esc, c.long = false, false, nil
	c.sbuf = c.sbuf[:0]
}

// noteKey records the key a string is, from the start of its content.
func (c *jsonClipper) noteKey(content []byte) {
	if c.key {
		c.path.setKey(content)
		c.key = false
	}
}

// buffering reads a string's content while it is within the limit: a
// string that closes within it is written out as it was.
func (c *jsonClipper) buffering(p []byte) []byte {
	end, nl, esc := scanString(p, c.esc)
	switch {
	case nl >= 0 && len(c.sbuf)+nl <= c.limit:
		// A raw newline: the string was cut off; write it as it stands and
		// read on from the newline.
		c.sbuf = append(c.sbuf, p[:nl]...)
		c.noteKey(c.sbuf)
		c.emit(c.sbuf)
		c.endString()
		return p[nl:]
	case end >= 0 && len(c.sbuf)+end <= c.limit:
		if len(c.sbuf) == 0 {
			c.noteKey(p[:end])
			c.emit(p[:end+1])
		} else {
			c.sbuf = append(c.sbuf, p[:end]...)
			c.noteKey(c.sbuf)
			c.emit(c.sbuf)
			c.emit(p[end : end+1])
		}
		c.endString()
		return p[end+1:]
	case end < 0 && len(c.sbuf)+len(p) <= c.limit:
		c.sbuf = append(c.sbuf, p...)
		c.esc = esc
		return nil
	}
	// Over the limit (in raw bytes, which are at least as many as the
	// decoded): from here the string is decoded, and cut if it is longer
	// than the limit decoded too. Whatever of p is past the limit is read
	// in long mode after the buffered content.
	take := max(c.limit-len(c.sbuf), 0)
	c.sbuf = append(c.sbuf, p[:take]...)
	c.long = &longString{c: c}
	c.long.start(c.sbuf)
	c.sbuf = c.sbuf[:0]
	return p[take:]
}

// scanString finds the end of a string's content in p, given whether the
// content before p ended in an unpaired backslash: the index of the closing
// quote or -1, the index of a raw newline before it or -1, and whether p
// ends in an unpaired backslash.
func scanString(p []byte, esc bool) (end, nl int, escOut bool) {
	for i := 0; ; {
		q := bytes.IndexByte(p[i:], '"')
		seg := p[i:]
		if q >= 0 {
			seg = p[i : i+q]
		}
		if n := bytes.IndexByte(seg, '\n'); n >= 0 {
			return -1, i + n, false
		}
		esc = escapeOpen(seg, esc)
		if q < 0 {
			return -1, -1, esc
		}
		if !esc {
			return i + q, -1, false
		}
		esc = false // an escaped quote
		i += q + 1
	}
}

// escapeOpen reports whether content ends in an unpaired backslash after
// seg, given whether it did before.
func escapeOpen(seg []byte, esc bool) bool {
	n := 0
	for n < len(seg) && seg[len(seg)-1-n] == '\\' {
		n++
	}
	if n == len(seg) {
		return esc != (n%2 == 1)
	}
	return n%2 == 1
}

// longString is a string over the limit, decoded as it streams: its head
// is written out, its tail kept in a ring, and the middle counted; or, when
// its content is JSON, that JSON is cut in turn by a clipper a level down.
type longString struct {
	c     *jsonClipper
	total int64 // decoded bytes so far

	// Escape decoding.
	escBuf []byte // an escape sequence begun and not yet complete
	hi     rune   // a high surrogate waiting for its low half, or 0

	// Cut as text.
	head     int    // decoded bytes written as the head
	headDone bool   // the head is written: the rest goes to the tail
	pending  []byte // the start of a rune the head ended inside
	tail     tailRing

	// Read as JSON.
	child    *jsonClipper
	childOut int64 // bytes the child wrote, before escaping
	aborted  bool  // the JSON grew over nestedCap and is cut as text
	// abortMarkers is the bytes of the child's cut marks when it was cut.
	abortMarkers int64

	key []byte // the start of the string, when it is a key

	dbuf []byte // decoded bytes, scratch
	ebuf []byte // escaped bytes, scratch
	hbuf []byte // head bytes, scratch
}

// start reads the buffered content the string had when it went over the
// limit, deciding from it whether it is JSON.
func (l *longString) start(content []byte) {
	decoded := l.decodeAll(content)
	if l.c.depth+1 < maxNesting && looksLikeJSON(decoded) {
		child := &jsonClipper{limit: l.c.limit, depth: l.c.depth + 1, parent: l.c}
		child.emit = l.childEmit
		l.child = child
	}
	l.take(decoded)
}

// decodeAll decodes content as far as it is complete, keeping an escape
// cut at its end for the next bytes.
func (l *longString) decodeAll(content []byte) []byte {
	var out []byte
	for len(content) > 0 {
		if len(l.escBuf) > 0 {
			var done bool
			out, content, done = l.feedEscape(out, content)
			if !done {
				break
			}
			continue
		}
		i := bytes.IndexByte(content, '\\')
		if i < 0 {
			out = l.plain(out, content)
			break
		}
		out = l.plain(out, content[:i])
		l.escBuf = append(l.escBuf[:0], '\\')
		content = content[i+1:]
	}
	return out
}

// looksLikeJSON reports whether decoded, the start of a string's content,
// starts a JSON object or array that is valid as far as it goes.
func looksLikeJSON(decoded []byte) bool {
	if c := FirstByte(decoded); c != '{' && c != '[' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(decoded))
	for {
		if _, err := dec.Token(); err != nil {
			var syn *json.SyntaxError
			return !errors.As(err, &syn)
		}
	}
}

// write reads the string's content in long mode, up to and including its
// closing quote, and returns what follows it.
func (l *longString) write(p []byte) []byte {
	for len(p) > 0 {
		if len(l.escBuf) > 0 {
			var out []byte
			var done bool
			out, p, done = l.feedEscape(l.dbuf[:0], p)
			l.dbuf = out[:0]
			l.take(out)
			if !done {
				if len(p) > 0 {
					// A raw newline in the escape: the string was cut off
					// there, as in buffering.
					l.close(false)
					return p
				}
				return nil
			}
			continue
		}
		i := bytes.IndexAny(p, "\\\"\n")
		if i < 0 {
			l.takePlain(p)
			return nil
		}
		l.takePlain(p[:i])
		switch p[i] {
		case '"':
			l.close(true)
			return p[i+1:]
		case '\n':
			l.close(false)
			return p[i:]
		default:
			l.escBuf = append(l.escBuf[:0], '\\')
			p = p[i+1:]
		}
	}
	return nil
}

// takePlain takes bytes without escapes.
func (l *longString) takePlain(p []byte) {
	if len(p) == 0 {
		return
	}
	if l.hi != 0 {
		out := l.plain(l.dbuf[:0], p)
		l.dbuf = out[:0]
		l.take(out)
		return
	}
	l.take(p)
}

// plain appends bytes without escapes to out, after a lone surrogate
// waiting for its other half.
func (l *longString) plain(out, p []byte) []byte {
	if len(p) > 0 && l.hi != 0 {
		out = utf8.AppendRune(out, utf8.RuneError)
		l.hi = 0
	}
	return append(out, p...)
}

// feedEscape continues an escape sequence from p, appending what it
// decodes to out once it is complete. It stops at a raw newline, which
// no escape holds: rest then starts with it.
func (l *longString) feedEscape(out, p []byte) (_ []byte, rest []byte, done bool) {
	need := 2
	if len(l.escBuf) >= 2 && l.escBuf[1] == 'u' {
		need = 6
	}
	for len(l.escBuf) < need && len(p) > 0 && p[0] != '\n' {
		l.escBuf = append(l.escBuf, p[0])
		p = p[1:]
		if len(l.escBuf) == 2 && l.escBuf[1] == 'u' {
			need = 6
		}
	}
	if len(l.escBuf) < need {
		return out, p, false
	}
	esc := l.escBuf
	l.escBuf = l.escBuf[:0]
	if esc[1] != 'u' {
		if l.hi != 0 {
			out = utf8.AppendRune(out, utf8.RuneError)
			l.hi = 0
		}
		switch esc[1] {
		case 'b':
			return append(out, '\b'), p, true
		case 'f':
			return append(out, '\f'), p, true
		case 'n':
			return append(out, '\n'), p, true
		case 'r':
			return append(out, '\r'), p, true
		case 't':
			return append(out, '\t'), p, true
		case '"', '\\', '/':
			return append(out, esc[1]), p, true
		}
		return append(out, esc...), p, true // not an escape JSON has: kept as written
	}
	v, err := strconv.ParseUint(string(esc[2:6]), 16, 32)
	if err != nil {
		if l.hi != 0 {
			out = utf8.AppendRune(out, utf8.RuneError)
			l.hi = 0
		}
		return append(out, esc...), p, true
	}
	r := rune(v)
	switch {
	case r >= 0xD800 && r < 0xDC00:
		if l.hi != 0 {
			out = utf8.AppendRune(out, utf8.RuneError)
		}
		l.hi = r
	case r >= 0xDC00 && r < 0xE000:
		if l.hi != 0 {
			out = utf8.AppendRune(out, (l.hi-0xD800)<<10+(r-0xDC00)+0x10000)
			l.hi = 0
		} else {
			out = utf8.AppendRune(out, utf8.RuneError)
		}
	default:
		if l.hi != 0 {
			out = utf8.AppendRune(out, utf8.RuneError)
			l.hi = 0
		}
		out = utf8.AppendRune(out, r)
	}
	return out, p, true
}

// take takes decoded content.
func (l *longString) take(b []byte) {
	if len(b) == 0 {
		return
	}
	l.total += int64(len(b))
	if l.c.key && len(l.key) < maxKey {
		l.key = append(l.key, b[:min(len(b), maxKey-len(l.key))]...)
	}
	if l.child != nil {
		// The tail is kept all along, so that what is kept does not depend
		// on where the document grows too long.
		l.tailRing().write(b)
		if !l.aborted {
			l.child.write(b)
		}
		return
	}
	headLimit := l.c.limit / 2
	if !l.headDone {
		n := min(headLimit-l.head, len(b))
		l.writeHead(b[:n])
		b = b[n:]
		if l.head >= headLimit {
			// The rune the head ends inside goes to the tail, whole.
			l.headDone = true
			l.head -= len(l.pending)
			l.tailRing().write(l.pending)
			l.pending = l.pending[:0]
		}
	}
	if len(b) > 0 {
		l.tailRing().write(b)
	}
}

// writeHead writes head bytes, holding back a rune they end inside.
func (l *longString) writeHead(b []byte) {
	l.head += len(b)
	if len(l.pending) > 0 {
		l.hbuf = append(append(l.hbuf[:0], l.pending...), b...)
		b = l.hbuf
	}
	cut := runeSafeEnd(b)
	l.pending = append(l.pending[:0], b[cut:]...)
	l.emitEscaped(b[:cut])
}

// runeSafeEnd returns the end of the last whole rune of b, so that b[end:]
// is the start of a rune cut off (at most 3 bytes), or len(b).
func runeSafeEnd(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

func (l *longString) tailRing() *tailRing {
	if l.tail.buf == nil {
		l.tail.buf = make([]byte, l.c.limit-l.c.limit/2)
	}
	return &l.tail
}

// childEmit writes what the clipper a level down writes, escaped for this
// string, until it has written nestedCap limits.
func (l *longString) childEmit(b []byte) {
	if l.aborted {
		return
	}
	// The child's own cut marks do not count against it.
	room := int64(nestedCap)*int64(l.c.limit) + 4*l.child.markerBytes - l.childOut
	if int64(len(b)) > room {
		// Cut at the byte, not the rune: where it falls must not depend on
		// how the child's output came in pieces.
		b = b[:max(room, 0)]
		l.aborted = true
		l.abortMarkers = l.child.markerBytes
	}
	l.childOut += int64(len(b))
	l.emitEscaped(b)
}

func (l *longString) emitEscaped(b []byte) {
	if len(b) == 0 {
		return
	}
	l.ebuf = appendJSONStringContent(l.ebuf[:0], b)
	l.c.emit(l.ebuf)
}

// close ends the string: the tail after the mark of the cut, or the
// document a level down finished; then the closing quote when there was
// one.
func (l *longString) close(quoted bool) {
	if l.hi != 0 {
		l.take(utf8.AppendRune(nil, utf8.RuneError))
		l.hi = 0
	}
	if len(l.escBuf) > 0 {
		esc := append([]byte(nil), l.escBuf...)
		l.escBuf = l.escBuf[:0]
		l.take(esc)
	}
	c := l.c
	c.noteKey(l.key)
	switch {
	case l.child != nil && !l.aborted:
		l.child.finish()
	default:
		if len(l.pending) > 0 {
			l.emitEscaped(l.pending)
			l.pending = nil
		}
		tail := l.tail.bytes()
		if l.tail.dropped > 0 || l.aborted {
			// The tail starts at a rune.
			skip := 0
			for skip < len(tail) && skip < utf8.UTFMax-1 && !utf8.RuneStart(tail[skip]) {
				skip++
			}
			tail = tail[skip:]
			kept := int64(l.head) + int64(len(tail))
			if l.aborted {
				kept = l.childOut - l.abortMarkers + int64(len(tail))
			}
			m := cutMarker(max(l.total-kept, 0))
			for x := c; x != nil; x = x.parent {
				x.markerBytes += int64(len(m))
			}
			l.emitEscaped([]byte(m))
		}
		l.emitEscaped(tail)
	}
	if quoted {
		c.emit([]byte{'"'})
	}
	c.endString()
}

// tailRing keeps the last len(buf) bytes written to it.
type tailRing struct {
	buf     []byte
	pos     int // where the next byte goes
	full    bool
	dropped int64
}

func (r *tailRing) write(p []byte) {
	n := len(r.buf)
	if n == 0 {
		r.dropped += int64(len(p))
		return
	}
	if len(p) >= n {
		r.dropped += int64(r.len()) + int64(len(p)-n)
		copy(r.buf, p[len(p)-n:])
		r.pos, r.full = 0, true
		return
	}
	if r.full {
		r.dropped += int64(len(p))
	} else if over := r.pos + len(p) - n; over > 0 {
		r.dropped += int64(over)
	}
	k := copy(r.buf[r.pos:], p)
	if k < len(p) {
		copy(r.buf, p[k:])
		r.full = true
	}
	r.pos = (r.pos + len(p)) % n
	if r.pos == 0 && len(p) > 0 {
		r.full = true
	}
}

func (r *tailRing) len() int {
	if r.full {
		return len(r.buf)
	}
	return r.pos
}

// bytes returns what the ring holds, oldest first.
func (r *tailRing) bytes() []byte {
	if !r.full {
		return r.buf[:r.pos]
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.pos:]...)
	return append(out, r.buf[:r.pos]...)
}

// appendJSONStringContent appends b escaped as the content of a JSON
// string. Bytes that are not UTF-8 pass as they are, as a decoder reads
// them as U+FFFD anyway.
func appendJSONStringContent(dst, b []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i, c := range b {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, b[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	return append(dst, b[start:]...)
}

// jsonPath follows where a JSON text is, for messages about where it
// stopped: the keys and indexes of the containers open, the first
// maxPathDepth of them.
type jsonPath struct {
	frames  []pathFrame
	depth   int // containers open, past maxPathDepth too
	keyNext bool
	// Bytes outside strings are fed to structural; scan, for a reader
	// that cuts nothing, tracks strings itself.
	inString, esc bool
}

type pathFrame struct {
	object bool
	hasKey bool
	key    string
	index  int
}

// maxKey is the most of a key the path keeps.
const maxKey = 64

const maxPathDepth = 32

func (p *jsonPath) structural(b byte) {
	switch b {
	case '{', '[':
		if p.depth < maxPathDepth {
			p.frames = append(p.frames, pathFrame{object: b == '{'})
		}
		p.depth++
		p.keyNext = b == '{'
	case '}', ']':
		if p.depth > 0 {
			p.depth--
			if p.depth < maxPathDepth {
				p.frames = p.frames[:p.depth]
			}
		}
		p.keyNext = false
	case ',':
		if top := p.top(); top != nil {
			if top.object {
				top.key, top.hasKey, p.keyNext = "", false, true
			} else {
				top.index++
			}
		}
	case ':':
		p.keyNext = false
	}
}

func (p *jsonPath) top() *pathFrame {
	if p.depth == 0 || p.depth > maxPathDepth {
		return nil
	}
	return &p.frames[p.depth-1]
}

// setKey names the member being read, from the start of its key.
func (p *jsonPath) setKey(raw []byte) {
	if top := p.top(); top != nil && top.object {
		top.key, top.hasKey = string(raw[:min(len(raw), maxKey)]), true
	}
	p.keyNext = false
}

// scan follows b when nothing else reads its strings.
func (p *jsonPath) scan(b []byte) {
	for len(b) > 0 {
		if !p.inString {
			i := 0
			for ; i < len(b) && b[i] != '"'; i++ {
				p.structural(b[i])
			}
			if i == len(b) {
				return
			}
			p.inString, p.esc = true, false
			b = b[i+1:]
			if p.keyNext {
				// The key's text is read as it closes.
				end, nl, _ := scanString(b, false)
				if end >= 0 && nl < 0 {
					p.setKey(b[:end])
				}
			}
			continue
		}
		end, nl, esc := scanString(b, p.esc)
		switch {
		case nl >= 0:
			p.inString = false
			b = b[nl:]
		case end >= 0:
			p.inString = false
			b = b[end+1:]
		default:
			p.esc = esc
			return
		}
	}
}

// String writes the path as samples[2].messages[0].content.
func (p *jsonPath) String() string {
	var b []byte
	for _, f := range p.frames[:min(p.depth, len(p.frames))] {
		if !f.object {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(f.index), 10)
			b = append(b, ']')
			continue
		}
		if !f.hasKey {
			continue
		}
		if isPlainKey(f.key) {
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, f.key...)
		} else {
			b = append(b, '[')
			b = strconv.AppendQuote(b, f.key)
			b = append(b, ']')
		}
	}
	if p.depth > maxPathDepth {
		b = append(b, "…"...)
	}
	return string(b)
}

func isPlainKey(k string) bool {
	for i, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '-')) {
			return false
		}
	}
	return k != ""
}
