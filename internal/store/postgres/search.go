package postgres

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgtype"
	"golang.org/x/text/unicode/norm"

	"github.com/faultline/faultline/internal/store"
)

// Search works on the words SQLite's FTS5 index (tokenize unicode61
// remove_diacritics 2) makes of a step's text, arguments and tool name:
// runs of letters and digits, lower-cased, accents removed. The writer
// computes them and stores them as a tsvector with their positions, and a
// search becomes a tsquery of the same words, so that both backends find
// the same steps for the same input, which PostgreSQL's own parsers
// (which keep file names and URLs whole, say) would not.

// words splits text into the index's words.
func words(text string) []string {
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			// A run of combining marks alone folds to nothing, which is no
			// word (and no lexeme a tsvector accepts).
			if w := fold(text[start:end]); w != "" {
				out = append(out, w)
			}
			start = -1
		}
	}
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(text))
	return out
}

// fold lower-cases a word and removes its accents. Most words of a trace
// are ASCII, which has no accents to remove: those skip the decomposition,
// the writer's costliest step.
func fold(w string) string {
	if ascii(w) {
		return strings.ToLower(w)
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(w) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// tsvector limits: positions above 16383 are clamped, a lexeme has at most
// 2046 bytes and 255 positions, and a vector's lexemes and positions
// together less than a megabyte. A longer step is searchable by the words
// that fit (those in the first half megabyte); a phrase past the limits
// may match where it does not occur.
const (
	maxPosition  = 16383
	maxPositions = 255
	maxLexeme    = 2046
	maxVector    = 1 << 19
)

// searchVector is the tsvector of a step's columns: each word at its
// position, the columns a position apart so that no phrase spans two. It
// goes to the server in tsvector's binary form, which the server takes as
// it is, where the text form is parsed again, quotes and all.
func searchVector(columns ...string) pgtype.TSVector {
	positions := map[string][]pgtype.TSVectorPosition{}
	var order []string
	pos := 1
	for _, col := range columns {
		for _, w := range words(col) {
			if len(w) > maxLexeme {
				pos++
				continue
			}
			p, ok := positions[w]
			if !ok {
				order = append(order, w)
			}
			at := pgtype.TSVectorPosition{Position: uint16(min(pos, maxPosition))}
			if len(p) < maxPositions && (len(p) == 0 || p[len(p)-1] != at) {
				positions[w] = append(p, at)
			}
			pos++
		}
		pos++
	}
	v := pgtype.TSVector{Lexemes: make([]pgtype.TSVectorLexeme, 0, len(order)), Valid: true}
	size := 0
	for _, w := range order {
		if size > maxVector {
			break
		}
		p := positions[w]
		v.Lexemes = append(v.Lexemes, pgtype.TSVectorLexeme{Word: w, Positions: p})
		size += len(w) + 3 + 2*len(p) // the word, its NUL, its count of positions and each position
	}
	return v
}

// lexemeQuoting escapes a word for a tsvector or tsquery literal.
var lexemeQuoting = strings.NewReplacer(`\`, `\\`, `'`, `''`)

func quoteLexeme(w string) string { return "'" + lexemeQuoting.Replace(w) + "'" }

// searchQuery turns what a person types into a tsquery: every word, or
// "quoted phrase", must occur in one step, in any order; a word ending in
// * is a prefix (of the phrase's last word). Every word is quoted, so no
// input is a syntax error or brings an operator of its own.
func searchQuery(input string) (string, error) {
	var terms []string
	rest := input
	for {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			break
		}
		var term string
		if after, quoted := strings.CutPrefix(rest, `"`); quoted {
			term, rest, _ = strings.Cut(after, `"`)
		} else if end := strings.IndexFunc(rest, unicode.IsSpace); end >= 0 {
			term, rest = rest[:end], rest[end:]
		} else {
			term, rest = rest, ""
		}
		prefix := strings.HasSuffix(term, "*")
		ws := words(strings.TrimRight(term, "*"))
		if len(ws) == 0 {
			continue
		}
		for i, w := range ws {
			ws[i] = quoteLexeme(w)
		}
		if prefix {
			ws[len(ws)-1] += ":*"
		}
		terms = append(terms, "("+strings.Join(ws, " <-> ")+")")
	}
	if len(terms) == 0 {
		return "", store.ErrEmptySearch
	}
	return strings.Join(terms, " & "), nil
}

// maxHitSteps caps the steps a SearchHit lists.
const maxHitSteps = 5

// SearchHits says, for each of the given traces, which of its steps hold
// the words of search; traces without a match are left out.
func (s *Store) SearchHits(ctx context.Context, search string, ids []string) (map[string]store.SearchHit, error) {
	query, err := searchQuery(search)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT trace_id, idx FROM steps WHERE trace_id = ANY($1) AND search @@ $2::text::tsquery ORDER BY trace_id, idx`,
		nonNil(ids), query)
	if err != nil {
		return nil, fmt.Errorf("searching: %w", err)
	}
	defer rows.Close()
	out := map[string]store.SearchHit{}
	for rows.Next() {
		var id string
		var idx int
		if err := rows.Scan(&id, &idx); err != nil {
			return nil, fmt.Errorf("searching: %w", err)
		}
		hit := out[id]
		if hit.Count < maxHitSteps {
			hit.Steps = append(hit.Steps, idx)
		}
		hit.Count++
		out[id] = hit
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("searching: %w", err)
	}
	return out, nil
}

// nonNil passes an empty list as an empty array rather than NULL, on which
// ANY and ALL answer NULL.
func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
