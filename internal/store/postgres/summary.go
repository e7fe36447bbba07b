package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/faultline/faultline/trace"
)

// The readers of trace_summary (migration 0008): each trace's outcomes and
// findings, folded into two columns of its row, decoded here.

// Separators of the summary's lists (see the migration).
const (
	entryStart = '\x1e'
	entryEnd   = '\x1f'
)

// errSummary is a summary list this code cannot read.
var errSummary = errors.New("unreadable trace summary")

// summaryRow is one trace as the whole-store readers see it: its columns
// as the driver read them, valid until the next row.
type summaryRow struct {
	id, model, system, scenario, detectedWith []byte
	outcomes, findings                        []byte
}

// eachSummary calls fn with each of the given traces (every trace when ids
// is nil), in id order, with its summary. fn must not keep the row, whose
// bytes are reused.
//
// The rows are read through pgx itself, on a goroutine of their own, a
// batch at a time, while fn runs on the caller's: database/sql would copy
// every column of every row into a string of its own, most of them only to
// be cut up and dropped, and the server sends the rows while the caller
// folds the ones it has.
func (s *Store) eachSummary(ctx context.Context, ids []string, fn func(*summaryRow) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	full := make(chan *summaryBatch, 2)
	empty := make(chan *summaryBatch, 3)
	var readErr error
	go func() {
		defer close(full)
		readErr = s.readSummaries(ctx, ids, full, empty)
	}()
	for b := range full {
		for i := range b.rows {
			if err := fn(&b.rows[i]); err != nil {
				cancel()
				for range full {
				}
				return err
			}
		}
		b.buf, b.rows = b.buf[:0], b.rows[:0]
		select {
		case empty <- b:
		default:
		}
	}
	return readErr
}

// summaryBatch is rows read, their bytes copied into buf, which never
// grows: the rows point into it.
type summaryBatch struct {
	buf  []byte
	rows []summaryRow
}

// batchBytes is the size of a batch's buffer: a few hundred traces.
const batchBytes = 256 << 10

// readSummaries sends the rows of eachSummary's query to full in batches,
// reusing those that come back on empty.
func (s *Store) readSummaries(ctx context.Context, ids []string, full, empty chan *summaryBatch) error {
	query := `SELECT t.id, t.model, t.system, t.scenario, t.detected_with, s.outcome_list, s.finding_list
		FROM traces t LEFT JOIN trace_summary s ON s.trace_id = t.id`
	var params []any
	if ids != nil {
		query += ` WHERE t.id = ANY($1)`
		params = append(params, ids)
	}
	query += ` ORDER BY t.id`
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", driverConn)
		}
		rows, err := c.Conn().Query(ctx, query, params...)
		if err != nil {
			return err
		}
		defer rows.Close()
		b := &summaryBatch{buf: make([]byte, 0, batchBytes)}
		send := func() error {
			select {
			case full <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case b = <-empty:
			default:
				b = &summaryBatch{buf: make([]byte, 0, batchBytes)}
			}
			return nil
		}
		for rows.Next() {
			v := rows.RawValues()
			if len(v) != 7 {
				return errSummary
			}
			size := 0
			for _, col := range v {
				size += len(col)
			}
			if len(b.buf)+size > cap(b.buf) {
				if len(b.rows) > 0 {
					if err := send(); err != nil {
						return err
					}
				}
				if size > cap(b.buf) {
					b.buf = make([]byte, 0, size)
				}
			}
			var cols [7][]byte
			for i, col := range v {
				start := len(b.buf)
				b.buf = append(b.buf, col...)
				cols[i] = b.buf[start:len(b.buf):len(b.buf)]
			}
			b.rows = append(b.rows, summaryRow{id: cols[0], model: cols[1], system: cols[2], scenario: cols[3], detectedWith: cols[4],
				outcomes: cols[5], findings: cols[6]})
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(b.rows) > 0 {
			return send()
		}
		return nil
	})
}

// interner returns one string per distinct value, so that the values
// repeated across a cohort (models, sources, modes) are allocated once.
type interner map[string]string

func (in interner) of(b []byte) string {
	if v, ok := in[string(b)]; ok {
		return v
	}
	v := string(b)
	in[v] = v
	return v
}

// summaryFinding is one entry of a trace's finding_list.
type summaryFinding struct {
	source  string
	verdict trace.Verdict
	// mode is read for present verdicts only when the reader asked for
	// those alone; noMode says whether the finding has one all the same.
	mode   string
	noMode bool
	steps  []byte // as stored, for a present verdict only
}

// eachFinding calls fn with each entry of a finding_list, in order, its
// strings from in. With presentModes, the mode of a verdict other than
// present is left "": the cohort reads no other, and most of a judge's
// verdicts are absences.
func eachFinding(list []byte, in interner, presentModes bool, fn func(*summaryFinding) error) error {
	var f summaryFinding
	// A trace's findings come a source at a time: the last source's name
	// is the next one's more often than not.
	var lastSource []byte
	for len(list) > 0 {
		if list[0] != entryStart {
			return errSummary
		}
		end := bytes.IndexByte(list, entryEnd)
		if end < 0 {
			return errSummary
		}
		entry := list[1:end]
		list = list[end+1:]
		raw, escaped, rest, err := jsonRaw(entry)
		if err != nil {
			return err
		}
		if escaped || lastSource == nil || !bytes.Equal(raw, lastSource) {
			if f.source, _, err = jsonString(entry, in); err != nil {
				return err
			}
			lastSource = raw
			if escaped {
				lastSource = nil
			}
		}
		entry = rest
		if len(entry) == 0 {
			return errSummary
		}
		switch entry[0] {
		case '+':
			f.verdict, entry = trace.Present, entry[1:]
		case '-':
			f.verdict, entry = trace.Absent, entry[1:]
		case '?':
			f.verdict, entry = trace.Unsure, entry[1:]
		default:
			var v string
			if v, entry, err = jsonString(entry, in); err != nil {
				return err
			}
			f.verdict = trace.Verdict(v)
		}
		if presentModes && f.verdict != trace.Present {
			if raw, _, entry, err = jsonRaw(entry); err != nil {
				return err
			}
			f.mode, f.noMode = "", len(raw) == 0
		} else {
			if f.mode, entry, err = jsonString(entry, in); err != nil {
				return err
			}
			f.noMode = f.mode == ""
		}
		f.steps = nil
		if f.verdict == trace.Present {
			f.steps = entry
		} else if len(entry) > 0 {
			return errSummary
		}
		if err := fn(&f); err != nil {
			return err
		}
	}
	return nil
}

// eachOutcome appends each entry of an outcome_list to out, in order.
func eachOutcome(list []byte, in interner, out []trace.Outcome) ([]trace.Outcome, error) {
	for len(list) > 0 {
		if list[0] != entryStart {
			return out, errSummary
		}
		next := bytes.IndexByte(list[1:], entryStart) + 1
		if next == 0 {
			next = len(list)
		}
		entry := list[1:next]
		list = list[next:]
		var o trace.Outcome
		var err error
		if o.Source, entry, err = jsonString(entry, in); err != nil {
			return out, err
		}
		if o.Metric, entry, err = jsonString(entry, in); err != nil {
			return out, err
		}
		if len(entry) == 0 {
			return out, errSummary
		}
		switch entry[0] {
		case 't', 'f':
			success := entry[0] == 't'
			o.Success = &success
		case 'n':
		default:
			return out, errSummary
		}
		if o.Detail, entry, err = jsonString(entry[1:], in); err != nil {
			return out, err
		}
		if len(entry) > 0 {
			score, err := strconv.ParseFloat(string(entry), 64)
			if err != nil {
				return out, errSummary
			}
			o.Score = &score
		}
		out = append(out, o)
	}
	return out, nil
}

// jsonString reads the JSON string (as PostgreSQL's to_json writes it) at
// the start of b and returns its value, from in, and what follows.
func jsonString(b []byte, in interner) (string, []byte, error) {
	raw, escaped, rest, err := jsonRaw(b)
	if err != nil || !escaped {
		return in.of(raw), rest, err
	}
	var v string
	if err := json.Unmarshal(b[:len(b)-len(rest)], &v); err != nil {
		return "", nil, errSummary
	}
	return in.of([]byte(v)), rest, nil
}

// jsonRaw finds the JSON string at the start of b: what is between its
// quotes, whether that has escapes, and what follows.
func jsonRaw(b []byte) (raw []byte, escaped bool, rest []byte, err error) {
	if len(b) == 0 || b[0] != '"' {
		return nil, false, nil, errSummary
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '"':
			return b[1:i], escaped, b[i+1:], nil
		case '\\':
			escaped = true
			i++
		}
	}
	return nil, false, nil, errSummary
}

// parseSteps decodes a JSON array of step indices as the store writes
// them ([3,12]) without encoding/json; anything else goes to decodeSteps.
// An empty array is nil, as decodeSteps has it.
func parseSteps(text []byte) ([]int, error) {
	inner, opened := bytes.CutPrefix(text, []byte("["))
	inner, closed := bytes.CutSuffix(inner, []byte("]"))
	if !opened || !closed {
		return decodeSteps(string(text))
	}
	var steps []int
	for len(inner) > 0 {
		field, rest, more := bytes.Cut(inner, []byte(","))
		n, ok := smallInt(field)
		if !ok || (more && len(rest) == 0) {
			return decodeSteps(string(text))
		}
		steps = append(steps, n)
		inner = rest
	}
	return steps, nil
}

// smallInt reads a JSON number of at most 9 digits that is an integer.
func smallInt(b []byte) (int, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 9 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
