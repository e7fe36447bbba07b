package compare

// pair is one position of an alignment of two call sequences: a and b are
// the calls' positions in their sequences, -1 on the side of a gap.
type pair struct{ a, b int }

// maxCells bounds the table of one dynamic programme (a byte a cell):
// sequences whose product is larger are split in two first (Hirschberg),
// so that two runs of thousands of calls align in linear memory.
const maxCells = 1 << 22

// align aligns two call sequences as a weighted longest common
// subsequence: pairs of calls that can be paired (affinity > 0) and do
// not cross, with the greatest total affinity. Every call appears once,
// paired or against a gap, in order on both sides.
func align(a, b []signature) []pair {
	ka, kb := keysOf(a, b)
	al := aligner{a: ka, b: kb, cells: maxCells}
	al.run(0, len(a), 0, len(b))
	return al.out
}

// key is a signature's keys as numbers, so that the alignment's inner loop,
// run for every pair of calls, compares numbers rather than strings (three
// times faster on two runs of 5,000 calls).
type key struct{ full, main, program int32 }

// keysOf numbers the keys of two runs' signatures: the same string, the
// same number.
func keysOf(a, b []signature) ([]key, []key) {
	ids := map[string]int32{}
	id := func(s string) int32 {
		v, ok := ids[s]
		if !ok {
			v = int32(len(ids))
			ids[s] = v
		}
		return v
	}
	number := func(sigs []signature) []key {
		out := make([]key, len(sigs))
		for i, s := range sigs {
			out[i] = key{full: id(s.full), main: id(s.main), program: id(s.program)}
		}
		return out
	}
	return number(a), number(b)
}

// affinity scores aligning two calls: 0 when they cannot be paired (they
// use different tools or programs).
func affinity(x, y *key) int {
	switch {
	case x.full == y.full:
		return weightExact
	case x.main == y.main:
		return weightMain
	case x.program == y.program:
		return weightProgram
	}
	return 0
}

type aligner struct {
	a, b  []key
	cells int // the largest table made whole
	out   []pair
}

// run aligns a[i0:i1] with b[j0:j1], appending to out.
func (al *aligner) run(i0, i1, j0, j1 int) {
	n, m := i1-i0, j1-j0
	if n <= 1 || m == 0 || n*m <= al.cells {
		al.table(i0, i1, j0, j1)
		return
	}
	// Split a in half and find where b splits so that the best alignments
	// of the two halves add up to the best of the whole.
	mid := (i0 + i1) / 2
	fwd := al.forward(i0, mid, j0, j1)
	bwd := al.backward(mid, i1, j0, j1)
	split, best := 0, -1
	for k := 0; k <= m; k++ {
		if s := fwd[k] + bwd[k]; s > best {
			split, best = k, s
		}
	}
	al.run(i0, mid, j0, j0+split)
	al.run(mid, i1, j0+split, j1)
}

// forward returns, for each k, the best score of aligning a[i0:i1] with
// b[j0:j0+k].
func (al *aligner) forward(i0, i1, j0, j1 int) []int {
	m := j1 - j0
	prev, cur := make([]int, m+1), make([]int, m+1)
	for i := i0; i < i1; i++ {
		cur[0] = 0
		for k := 1; k <= m; k++ {
			cur[k] = max(prev[k], cur[k-1])
			if w := affinity(&al.a[i], &al.b[j0+k-1]); w > 0 {
				cur[k] = max(cur[k], prev[k-1]+w)
			}
		}
		prev, cur = cur, prev
	}
	return prev
}

// backward returns, for each k, the best score of aligning a[i0:i1] with
// b[j0+k:j1].
func (al *aligner) backward(i0, i1, j0, j1 int) []int {
	m := j1 - j0
	prev, cur := make([]int, m+1), make([]int, m+1)
	for i := i1 - 1; i >= i0; i-- {
		cur[m] = 0
		for k := m - 1; k >= 0; k-- {
			cur[k] = max(prev[k], cur[k+1])
			if w := affinity(&al.a[i], &al.b[j0+k]); w > 0 {
				cur[k] = max(cur[k], prev[k+1]+w)
			}
		}
		prev, cur = cur, prev
	}
	return prev
}

// Moves of the table's traceback.
const (
	movePair  = iota + 1 // a[i] with b[j]
	moveSkipA            // a[i] against a gap
	moveSkipB            // b[j] against a gap
)

// table aligns a[i0:i1] with b[j0:j1] by the full dynamic programme, with
// one row of scores and a move per cell.
func (al *aligner) table(i0, i1, j0, j1 int) {
	n, m := i1-i0, j1-j0
	moves := make([]byte, n*m)
	prev, cur := make([]int, m+1), make([]int, m+1)
	for i := 1; i <= n; i++ {
		cur[0] = 0
		for j := 1; j <= m; j++ {
			// Ties go to the pair, then to leaving b's call against a gap:
			// read backwards from the end, that puts a's unpaired calls
			// before b's in a run of gaps, the same way every time.
			best, move := cur[j-1], byte(moveSkipB)
			if prev[j] > best {
				best, move = prev[j], moveSkipA
			}
			if w := affinity(&al.a[i0+i-1], &al.b[j0+j-1]); w > 0 && prev[j-1]+w >= best {
				best, move = prev[j-1]+w, movePair
			}
			cur[j] = best
			moves[(i-1)*m+j-1] = move
		}
		prev, cur = cur, prev
	}
	var rev []pair
	i, j := n, m
	for i > 0 || j > 0 {
		switch {
		case i == 0:
			j--
			rev = append(rev, pair{-1, j0 + j})
		case j == 0:
			i--
			rev = append(rev, pair{i0 + i, -1})
		default:
			switch moves[(i-1)*m+j-1] {
			case movePair:
				i, j = i-1, j-1
				rev = append(rev, pair{i0 + i, j0 + j})
			case moveSkipA:
				i--
				rev = append(rev, pair{i0 + i, -1})
			default:
				j--
				rev = append(rev, pair{-1, j0 + j})
			}
		}
	}
	for k := len(rev) - 1; k >= 0; k-- {
		al.out = append(al.out, rev[k])
	}
}
