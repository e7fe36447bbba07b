package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// The readers of trace_summary (migration 0006): each trace's outcomes and
// findings, folded into two columns of its row, decoded here.

// Separators of the summary's lists (see the migration).
const (
	entryStart = '\x1e'
	entryEnd   = '\x1f'
)

// errSummary is a summary list this code cannot read.
var errSummary = errors.New("unreadable trace summary")

// summaryFinding is one entry of a trace's finding_list.
type summaryFinding struct {
	source  int // the number of its source in summary_sources
	verdict trace.Verdict
	mode    string // a slice of the list unless it had escapes
	steps   string // as stored, for a present verdict only
}

// eachFinding calls fn with each entry of a finding_list, in order. With
// presentOnly, an entry whose verdict is not present comes with its source
// alone (a verdict of absent, and no mode): the report reads only which
// sources spoke of a trace and what they found, and most of a judge's
// verdicts are absences.
func eachFinding(list string, presentOnly bool, fn func(summaryFinding)) error {
	for list != "" {
		if list[0] != entryStart {
			return errSummary
		}
		end := strings.IndexByte(list, entryEnd)
		if end < 0 {
			return errSummary
		}
		entry := list[1:end]
		list = list[end+1:]
		digits := 0
		for digits < len(entry) && entry[digits] >= '0' && entry[digits] <= '9' {
			digits++
		}
		source, err := strconv.Atoi(entry[:digits])
		if err != nil || digits == len(entry) {
			return errSummary
		}
		f := summaryFinding{source: source}
		rest := entry[digits+1:]
		if presentOnly && entry[digits] != '+' {
			f.verdict = trace.Absent
			fn(f)
			continue
		}
		switch entry[digits] {
		case '+':
			f.verdict = trace.Present
		case '-':
			f.verdict = trace.Absent
		case '?':
			f.verdict = trace.Unsure
		default:
			var v string
			if v, rest, err = jsonString(entry[digits:]); err != nil {
				return err
			}
			f.verdict = trace.Verdict(v)
		}
		if f.mode, rest, err = jsonString(rest); err != nil {
			return err
		}
		if f.verdict == trace.Present {
			f.steps = rest
		} else if rest != "" {
			return errSummary
		}
		fn(f)
	}
	return nil
}

// eachOutcome calls fn with each entry of an outcome_list, in order. The
// detail is read only where the outcome is undecided; elsewhere it is "".
func eachOutcome(list string, fn func(trace.Outcome)) error {
	for list != "" {
		if list[0] != entryStart {
			return errSummary
		}
		next := strings.IndexByte(list[1:], entryStart) + 1
		if next == 0 {
			next = len(list)
		}
		entry := list[1:next]
		list = list[next:]
		var o trace.Outcome
		var err error
		if o.Source, entry, err = jsonString(entry); err != nil {
			return err
		}
		if o.Metric, entry, err = jsonString(entry); err != nil {
			return err
		}
		if entry == "" {
			return errSummary
		}
		var success bool
		switch entry[0] {
		case 't', 'f':
			success = entry[0] == 't'
			o.Success = &success
			entry = entry[1:]
		case 'n':
			if o.Detail, entry, err = jsonString(entry[1:]); err != nil {
				return err
			}
		default:
			return errSummary
		}
		var score float64
		if entry != "" {
			if score, err = strconv.ParseFloat(entry, 64); err != nil {
				return errSummary
			}
			o.Score = &score
		}
		fn(o)
	}
	return nil
}

// jsonString reads the JSON string (as SQLite's json_quote writes it) at
// the start of s and returns its value and what follows. Without escapes
// the value is a slice of s; bytes that are not UTF-8 are kept as they are.
func jsonString(s string) (string, string, error) {
	if s == "" || s[0] != '"' {
		return "", "", errSummary
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '"':
			return s[1:i], s[i+1:], nil
		case '\\':
			return unescape(s)
		}
	}
	return "", "", errSummary
}

// unescape is jsonString for a string with escapes.
func unescape(s string) (string, string, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), s[i+1:], nil
		case c != '\\':
			b.WriteByte(c)
			continue
		case i+1 == len(s):
			return "", "", errSummary
		}
		i++
		switch s[i] {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if i+4 >= len(s) {
				return "", "", errSummary
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", "", errSummary
			}
			b.WriteRune(rune(r))
			i += 4
		default: // " \ /
			b.WriteByte(s[i])
		}
	}
	return "", "", errSummary
}

// summarySources returns the names of summary_sources by number.
func (s *Store) summarySources(ctx context.Context) ([]string, error) {
	return s.summaryNames(ctx, `SELECT id, source FROM summary_sources`)
}

// summaryDetectorSets returns the detector sets of summary_detector_sets
// by number.
func (s *Store) summaryDetectorSets(ctx context.Context) ([]string, error) {
	return s.summaryNames(ctx, `SELECT id, detected_with FROM summary_detector_sets`)
}

// summaryNames reads a table of the summary's names by number (id, name).
func (s *Store) summaryNames(ctx context.Context, query string) ([]string, error) {
	var names []string
	err := s.each(ctx, query, func(rows *sql.Rows) error {
		var id int
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return err
		}
		if id < 0 || id > 1<<20 {
			return fmt.Errorf("source number %d: %w", id, errSummary)
		}
		for len(names) <= id {
			names = append(names, "")
		}
		names[id] = name
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the summary's names (%s): %w", query, err)
	}
	return names, nil
}

// tracesAnnotatedInSummary is TracesAnnotatedBy read from the summaries,
// for fewer than 64 sources.
func (s *Store) tracesAnnotatedInSummary(ctx context.Context, sources []string) ([]string, error) {
	names, err := s.summarySources(ctx)
	if err != nil {
		return nil, err
	}
	// wanted[n] has bit i set when source number n is one the i-th source
	// selects.
	wanted := make([]uint64, len(names))
	for n, name := range names {
		for i, src := range sources {
			if store.MatchSource(name, []string{src}) {
				wanted[n] |= 1 << i
			}
		}
	}
	all := uint64(1)<<len(sources) - 1
	ids := []string{}
	err = s.eachSummary(ctx, nil, func(row summaryRow) error {
		var seen uint64
		for list := row.findings; list != ""; {
			at := strings.IndexByte(list, entryStart)
			if at < 0 {
				break
			}
			list = list[at+1:]
			digits := 0
			for digits < len(list) && list[digits] >= '0' && list[digits] <= '9' {
				digits++
			}
			n, err := strconv.Atoi(list[:digits])
			if err != nil || n >= len(names) {
				return fmt.Errorf("trace %s: %w", row.id, errSummary)
			}
			if seen |= wanted[n]; seen == all {
				ids = append(ids, strings.Clone(row.id))
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("selecting the traces of %s: %w", strings.Join(sources, ", "), err)
	}
	return ids, nil
}

// summaryRow is one trace's summary, its fields slices of the row read.
type summaryRow struct {
	id, model, system, scenario string
	detectorSet                 string // its number in summary_detector_sets, "" for none
	outcomes, findings          string // outcome_list, finding_list
}

// detectedWith returns the detector set a row names, from the sets by
// number.
func (row summaryRow) detectedWith(sets []string) (string, error) {
	if row.detectorSet == "" {
		return "", nil
	}
	n, err := strconv.Atoi(row.detectorSet)
	if err != nil || n < 0 || n >= len(sets) {
		return "", fmt.Errorf("detector set %q: %w", row.detectorSet, errSummary)
	}
	return sets[n], nil
}

// eachSummary reads trace_summary for the selected traces (every trace when
// ids is nil) in id order, and calls fn with each row. fn may keep the
// row's strings, which are slices of that row alone.
//
// The rows are read on a goroutine of their own, a batch at a time, while fn
// runs on the caller's: reading a row through the driver costs about as
// much as what the readers do with it, and the whole-store readers (the
// report, the dashboard, agreement between sources) are these two halves.
// Each row is read as its packed column (migration 0010), one value that
// the driver reads at half the cost of the columns one by one.
func (s *Store) eachSummary(ctx context.Context, ids []string, fn func(summaryRow) error) error {
	var keep func(string) bool
	if ids != nil {
		// Chunks of sorted ids come back in order. Callers mostly pass
		// ids in order already (the store's): those are not copied, which
		// at 100k ids is 8 MB of fresh memory.
		if !increasing(ids) {
			ids = slices.Compact(slices.Sorted(slices.Values(ids)))
		}
		if ids == nil {
			ids = []string{}
		}
		many, err := s.mostTraces(ctx, len(ids))
		if err != nil {
			return err
		}
		if many {
			// One pass over every row beats hundreds of lookups by id; the
			// rows and the ids are both in order.
			want, next := ids, 0
			keep = func(id string) bool {
				for next < len(want) && want[next] < id {
					next++
				}
				return next < len(want) && want[next] == id
			}
			ids = nil
		}
	}
	query := `SELECT packed FROM trace_summary WHERE 1 %s ORDER BY trace_id`
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	full := make(chan []string, summaryBatches)
	empty := make(chan []string, summaryBatches+1)
	for range summaryBatches + 1 {
		empty <- make([]string, 0, summaryBatch)
	}
	read := make(chan error, 1)
	go func() {
		defer close(full)
		batch := <-empty
		err := s.eachSelected(ctx, ids, "trace_id", query, func(rows *sql.Rows) error {
			var row string
			if err := rows.Scan(&row); err != nil {
				return err
			}
			if batch = append(batch, row); len(batch) < cap(batch) {
				return nil
			}
			select {
			case full <- batch:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case batch = <-empty:
			case <-ctx.Done():
				return ctx.Err()
			}
			return nil
		})
		if err == nil && len(batch) > 0 {
			full <- batch
		}
		read <- err
	}()
	var failed error
	for batch := range full {
		for _, packed := range batch {
			var row summaryRow
			if row, failed = unpackSummary(packed); failed != nil {
				break
			}
			if keep != nil && !keep(row.id) {
				continue
			}
			if failed = fn(row); failed != nil {
				break
			}
		}
		if failed != nil {
			// The reader stops at its next row; what it had read is dropped.
			cancel()
			for range full {
			}
			break
		}
		clear(batch)
		empty <- batch[:0]
	}
	if err := <-read; failed == nil && err != nil {
		return err
	}
	return failed
}

// unpackSummary cuts a packed summary row (see migration 0010) into its
// columns.
func unpackSummary(packed string) (summaryRow, error) {
	var fields [7]string
	head, body, ok := strings.Cut(packed, ":")
	if !ok {
		return summaryRow{}, errSummary
	}
	for i := range fields[:len(fields)-1] {
		size, rest, more := strings.Cut(head, ",")
		if more != (i < len(fields)-2) {
			return summaryRow{}, errSummary
		}
		head = rest
		n, err := strconv.Atoi(size)
		if err != nil || n < 0 || n > len(body) {
			return summaryRow{}, errSummary
		}
		fields[i], body = body[:n], body[n:]
	}
	fields[len(fields)-1] = body
	return summaryRow{id: fields[0], model: fields[1], system: fields[2], scenario: fields[3],
		detectorSet: fields[4], outcomes: fields[5], findings: fields[6]}, nil
}

// The rows of eachSummary are handed over summaryBatch at a time, with
// summaryBatches of them read ahead at most.
const (
	summaryBatch   = 512
	summaryBatches = 4
)

// increasing reports whether ids are in strictly increasing order: sorted,
// each once.
func increasing(ids []string) bool {
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			return false
		}
	}
	return true
}
