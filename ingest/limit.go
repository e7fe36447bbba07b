package ingest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/faultline/faultline/trace"
)

// The text limit on traces: what clipReader does to one JSON string as it
// streams, limitTrace does to each text of a trace once it is made, since
// a step's text may join several strings (a message's parts), or come from
// a format read whole (OTLP protobuf).

// CutTextsMeta is the trace meta key listing the texts cut to the limit,
// each as where=bytes, the size it had: "step3.text=209715200 task=2000000".
const CutTextsMeta = "cut_texts"

// TextLimitMeta is the trace meta key holding the limit the texts listed
// under CutTextsMeta were cut to.
const TextLimitMeta = "text_limit"

// textLimit is the input's limit: Options.TextLimit, or DefaultTextLimit.
func (in *Input) textLimit() int {
	switch {
	case in.limit < 0:
		return 0
	case in.limit == 0:
		return DefaultTextLimit
	}
	return in.limit
}

// jsonText is the input as JSON text whose strings are cut at scale times
// the text limit as they stream (see clipReader), following the JSON path
// for reports of where a document ends.
func (in *Input) jsonText(scale int) *clipReader {
	return newClipReader(in.R, in.textLimit()*scale, true)
}

// jsonLines reads the input as JSON Lines whose strings are cut at the
// text limit as they stream.
func (in *Input) jsonLines() *lineReader {
	return newLineReader(in.R, in.textLimit(), in.size)
}

// limited wraps emit so that every trace it passes is cut to the text
// limit first (see limitTrace).
func (in *Input) limited(emit func(*trace.Trace) error) func(*trace.Trace) error {
	limit := in.textLimit()
	return func(t *trace.Trace) error {
		limitTrace(t, limit)
		return emit(t)
	}
}

// limitTrace cuts each step's text and arguments, and the task, to limit
// bytes (as clipReader cuts a string: head and tail around a mark), and
// records the original size of each text cut, here or as it streamed,
// under CutTextsMeta. limit <= 0 cuts nothing.
func limitTrace(t *trace.Trace, limit int) {
	if limit <= 0 {
		return
	}
	var cut []string
	note := func(where string, s *string) {
		text, size, was := limitText(*s, limit)
		if was {
			*s = text
			cut = append(cut, where+"="+strconv.FormatInt(size, 10))
		}
	}
	note("task", &t.Task)
	for i := range t.Steps {
		s := &t.Steps[i]
		note(fmt.Sprintf("step%d.text", i), &s.Text)
		note(fmt.Sprintf("step%d.args", i), &s.Args)
	}
	if len(cut) > 0 {
		t.SetMeta(CutTextsMeta, strings.Join(cut, " "))
		t.SetMeta(TextLimitMeta, strconv.Itoa(limit))
	}
}

// limitText cuts s to limit bytes of its own (cut marks aside): its head
// and tail, half the limit each, around a mark of what was cut. JSON whose
// strings were cut as it streamed may keep up to nestedCap limits. It returns
// the text, the size it had before any cut (those already marked in it
// counted back in), and whether it was cut, here or before.
func limitText(s string, limit int) (string, int64, bool) {
	marks, markBytes, cutBytes := cutMarks(s)
	own := len(s) - markBytes
	if own <= limit || len(marks) > 0 && own <= nestedCap*limit && json.Valid([]byte(s)) {
		// Within the limit; or JSON whose long strings were cut as it
		// streamed (a tool's output as {"output": ..., "metadata": ...}),
		// kept whole so that it stays JSON, as clipReader keeps it.
		return s, int64(own) + cutBytes, len(marks) > 0
	}
	head := limit / 2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - (limit - limit/2)
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	// A cut does not split an earlier mark: one the head ends inside stays
	// out of it, one the tail starts inside stays in it.
	for _, m := range marks {
		if m[0] < head && head < m[1] {
			head = m[0]
		}
		if m[0] < tail && tail < m[1] {
			tail = m[0]
		}
	}
	if tail < head {
		tail = head
	}
	_, midMarks, midCut := cutMarks(s[head:tail])
	gone := int64(tail-head-midMarks) + midCut
	return s[:head] + cutMarker(gone) + s[tail:], int64(own) + cutBytes, true
}

// cutMarks finds the cut marks in s: their spans, their bytes, and the
// bytes they stand for.
func cutMarks(s string) (spans [][2]int, markBytes int, cutBytes int64) {
	for off := 0; ; {
		i := strings.Index(s[off:], cutMarkerPrefix)
		if i < 0 {
			return spans, markBytes, cutBytes
		}
		start := off + i
		rest := s[start+len(cutMarkerPrefix):]
		digits := 0
		for digits < len(rest) && digits < 20 && rest[digits] >= '0' && rest[digits] <= '9' {
			digits++
		}
		n, err := strconv.ParseInt(rest[:digits], 10, 64)
		if err != nil || !strings.HasPrefix(rest[digits:], cutMarkerSuffix) {
			off = start + len(cutMarkerPrefix)
			continue
		}
		end := start + len(cutMarkerPrefix) + digits + len(cutMarkerSuffix)
		// The mark's own newlines, when they are there, are the mark's.
		if start > 0 && s[start-1] == '\n' {
			start--
		}
		if end < len(s) && s[end] == '\n' {
			end++
		}
		spans = append(spans, [2]int{start, end})
		markBytes += end - start
		cutBytes += n
		off = end
	}
}
