package detect

import (
	"fmt"
	"testing"
)

func TestStalledLoop(t *testing.T) {
	fails := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(`fail apply_patch {"input":"attempt %d"} => failed to parse function arguments: EOF at column %d`, i, 100+i)
		}
		return out
	}
	const same = `call shell {"cmd":"cat a"} => same`
	runCases(t, StalledLoop, []detCase{
		{name: "four failures in a row", trace: buildParts(`user go`, fails(4), `call shell {} => ok`)},
		{name: "five failures in a row", trace: buildParts(`user go`, fails(5), `call shell {} => ok`),
			want: [][]int{{1, 3, 5, 7, 9}}, quote: "apply_patch", conf: 0.6},
		{name: "repeats with the same output are stale too", trace: buildParts(`user go`, same, fails(2), same, same, same),
			want: [][]int{{3, 5, 7, 9, 11}}},
		{name: "new information breaks the run", trace: buildParts(`user go`, fails(3), `call shell {"cmd":"cat b"} => new`, fails(3))},
		{name: "plan updates do not break it", trace: buildParts(`user go`, fails(3), `call update_plan {"plan":[]} => ok`, fails(2)),
			want: [][]int{{1, 3, 5, 9, 11}}},
		{name: "calls without results are not judged", trace: build(`user go`, `pending a {}`, `pending a {}`, `pending a {}`, `pending a {}`, `pending a {}`)},
	})
}
