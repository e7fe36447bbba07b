package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode"

	"github.com/faultline/faultline/internal/store"
)

// The search index (migration 0004) holds every step's text, arguments and
// tool name. A step's row id there is its trace's key << stepBits | its
// index.
const stepBits = 24

// SearchQuery turns what a person types into an FTS5 query: every word, or
// "quoted phrase", must occur in one step, in any order; a word ending in *
// is a prefix. Each term is quoted for FTS5, so that no input is an FTS5
// syntax error and none of its operators (NEAR, OR, column filters) can be
// smuggled in. Words are what the index's tokenizer makes them: runs of
// letters and digits, case and accents ignored, so agent_output.json is
// the phrase "agent output json".
func SearchQuery(input string) (string, error) {
	// SQLite reads a NUL as the end of the query text.
	input = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, input)
	var terms []string
	for _, term := range splitTerms(input) {
		prefix := strings.HasSuffix(term, "*")
		term = strings.TrimRight(term, "*")
		if !strings.ContainsFunc(term, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) {
			continue // only punctuation: no token, which FTS5 would reject
		}
		q := `"` + strings.ReplaceAll(term, `"`, `""`) + `"`
		if prefix {
			q += "*"
		}
		terms = append(terms, q)
	}
	if len(terms) == 0 {
		return "", store.ErrEmptySearch
	}
	return strings.Join(terms, " "), nil
}

// splitTerms splits on spaces, keeping "quoted phrases" whole (an unclosed
// quote runs to the end).
func splitTerms(s string) []string {
	var terms []string
	for {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if s == "" {
			return terms
		}
		if rest, ok := strings.CutPrefix(s, `"`); ok {
			phrase, after, _ := strings.Cut(rest, `"`)
			terms = append(terms, phrase)
			s = after
			continue
		}
		end := strings.IndexFunc(s, unicode.IsSpace)
		if end < 0 {
			end = len(s)
		}
		terms = append(terms, s[:end])
		s = s[end:]
	}
}

// maxHitSteps caps the steps a SearchHit lists.
const maxHitSteps = 5

// SearchHits says, for each of the given traces, which of its steps hold
// the words of search; traces without a match are left out.
func (s *Store) SearchHits(ctx context.Context, search string, ids []string) (map[string]store.SearchHit, error) {
	match, err := SearchQuery(search)
	if err != nil {
		return nil, err
	}
	keys, err := s.traceKeys(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("searching: %w", err)
	}
	out := map[string]store.SearchHit{}
	for _, id := range ids {
		key, ok := keys[id]
		if !ok {
			continue
		}
		// One trace's steps are one range of row ids, which FTS5 reads
		// alone rather than every match in the store.
		rows, err := s.db.QueryContext(ctx, `SELECT rowid FROM steps_fts WHERE steps_fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rowid`,
			match, key<<stepBits, key<<stepBits|(1<<stepBits-1))
		if err != nil {
			return nil, fmt.Errorf("searching: %w", err)
		}
		var hit store.SearchHit
		for rows.Next() {
			var rowid int64
			if err := rows.Scan(&rowid); err != nil {
				rows.Close()
				return nil, err
			}
			if hit.Count < maxHitSteps {
				hit.Steps = append(hit.Steps, int(rowid&(1<<stepBits-1)))
			}
			hit.Count++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if hit.Count > 0 {
			out[id] = hit
		}
	}
	return out, nil
}

// traceKeys reads the keys of the traces ids names (every trace's when nil):
// a trace's steps are the row ids from its key shifted by stepBits.
func (s *Store) traceKeys(ctx context.Context, ids []string) (map[string]int64, error) {
	keys := map[string]int64{}
	err := s.eachSelected(ctx, ids, "trace_id", `SELECT trace_id, key FROM trace_keys WHERE 1 %s`, func(rows *sql.Rows) error {
		var id string
		var key int64
		if err := rows.Scan(&id, &key); err != nil {
			return err
		}
		keys[id] = key
		return nil
	})
	return keys, err
}
