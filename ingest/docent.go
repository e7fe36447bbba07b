package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/trace"
)

// Docent decodes Docent's agent runs (Transluce's docent.data_models, as
// its SDK and exports write them): {id, name, description, transcripts,
// transcript_groups, metadata}, the transcripts a list (or, in older
// versions, an object keyed by name) of {id, name, messages, metadata}
// whose messages are Inspect-shaped chat messages (see chat.Message), and
// metadata free-form, by convention {scores: {...}, model, task_id,
// sample_id, epoch_id}. One run is one trace; a run of several transcripts
// (one per agent of a multi-agent run) keeps them one after the other, each
// step naming its transcript as the agent. (Docent's own examples of
// tau-bench runs are tau-bench's records, read by the taubench format.)
type Docent struct{}

// Name implements Format.
func (Docent) Name() string { return "docent" }

// Sniff accepts runs whose transcripts hold messages.
func (Docent) Sniff(head []byte) bool {
	return hasAny(headKeys(head, 0), "transcripts") && hasAny(headKeys(head, 2), "messages")
}

type docentRun struct {
	ID          json.RawMessage `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Transcripts json.RawMessage `json:"transcripts"`
	Metadata    json.RawMessage `json:"metadata"`
}

// Decode implements Format.
func (Docent) Decode(ctx context.Context, in *Input, emit func(*trace.Trace) error) error {
	emit = in.limited(emit)
	ids := uniqueIDs{}
	return eachRecord(ctx, in, func(raw json.RawMessage, r *record) error {
		var run docentRun
		lines, err := decodeRecord(raw, &run)
		if err != nil {
			r.skip(raw, err)
			return nil
		}
		t := &trace.Trace{Format: "docent", Source: fmt.Sprintf("%s#%d", in.Path, r.n), System: "docent"}
		t.SetMeta("name", run.Name)
		t.SetMeta("description", run.Description)
		docentMetadata(t, r, run.Metadata, lines["metadata"])

		transcripts, err := jsonElements(run.Transcripts)
		if FirstByte(run.Transcripts) == '{' {
			transcripts, err = jsonFields(run.Transcripts)
		}
		if err != nil {
			r.report(r.at(lines["transcripts"]), Error, `field "transcripts" %v; record skipped`, err)
			return nil
		}
		for i, tr := range transcripts {
			var tx struct {
				Name     string          `json:"name"`
				Messages json.RawMessage `json:"messages"`
			}
			at := lines["transcripts"] + tr.lines
			fieldLines, err := decodeRecord(tr.raw, &tx)
			if err != nil {
				r.skipPart(at, tr.raw, err, fmt.Sprintf("transcript %d", i), "transcript")
				continue
			}
			c := &chatLog{t: t, r: r}
			if len(transcripts) > 1 {
				c.agent = jsontext.FirstNonEmpty(tx.Name, tr.key, "transcript "+strconv.Itoa(i))
			}
			c.messages(tx.Messages, at+fieldLines["messages"], "messages")
		}
		t.Task = firstUserText(t)
		id, _ := jsontext.TextOf(run.ID)
		if id == "" {
			id = shortHash(string(raw))
		}
		t.ID = ids.of("docent:"+id, r.n)
		finishTrace(t, r)
		return emit(t)
	})
}

// docentMetadata reads a run's metadata: the model and the task's sample
// and epoch by their conventional keys, the first score (in the order
// written) as the outcome with the others in its detail, and every other
// value that is text, a number or a boolean as meta.
func docentMetadata(t *trace.Trace, r *record, raw json.RawMessage, lines int) {
	meta, err := jsonFields(raw)
	if err != nil {
		r.report(r.at(lines), Error, `field "metadata" %v; ignored`, err)
		return
	}
	for _, m := range meta {
		if m.key == "scores" {
			docentScores(t, r, m.raw, lines+m.lines)
			continue
		}
		v, ok := jsontext.TextOf(m.raw)
		if FirstByte(m.raw) == 't' || FirstByte(m.raw) == 'f' {
			v, ok = jsontext.Compact(m.raw), true
		}
		if !ok || FirstByte(m.raw) == '[' {
			continue
		}
		switch m.key {
		case "model":
			t.Model = v
		case "sample_id", "task_id":
			t.Scenario = jsontext.FirstNonEmpty(t.Scenario, v)
			t.SetMeta(m.key, v)
		case "epoch_id", "epoch":
			t.Trial = v
		default:
			t.SetMeta(m.key, v)
		}
	}
}

// docentScores takes the outcome from the first score that reads as one,
// with every score in its detail.
func docentScores(t *trace.Trace, r *record, raw json.RawMessage, lines int) {
	scores, err := jsonFields(raw)
	if err != nil {
		r.report(r.at(lines), Error, `field "scores" %v; no outcome`, err)
		return
	}
	var all []string
	for _, s := range scores {
		all = append(all, s.key+"="+jsontext.Compact(s.raw))
		if len(t.Outcomes) > 0 {
			continue
		}
		if o, ok := scoreOutcome(s.key, s.raw); ok {
			t.Outcomes = []trace.Outcome{o}
		}
	}
	if len(t.Outcomes) > 0 {
		t.Outcomes[0].Detail = strings.Join(all, " ")
	} else if len(scores) > 0 {
		r.report(r.at(lines), Notice, "no score reads as an outcome (%s)", trace.Clip(strings.Join(all, " "), 80))
	}
}
