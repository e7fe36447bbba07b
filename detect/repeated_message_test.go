package detect

import "testing"

func TestRepeatedMessage(t *testing.T) {
	const long = "I will now look at the recommendation service logs to find the error source."
	runCases(t, RepeatedMessage, []detCase{
		{name: "different messages", trace: build(`agent A@assistant `+long, `agent B@assistant ok`, `agent A@assistant `+long+` Again.`)},
		{name: "same message, same answer", trace: build(`agent A@assistant `+long, `agent B@assistant nothing found`, `agent A@assistant `+long, `agent B@assistant nothing found`),
			want: [][]int{{0, 2}}, conf: 0.6},
		{name: "same message, different answers is iteration", trace: build(`agent A@assistant `+long, `agent B@assistant song 1`, `agent A@assistant `+long, `agent B@assistant song 2`)},
		{name: "copies in a row are one message logged twice", trace: build(`agent A@assistant `+long, `agent A@assistant `+long, `agent B@assistant nothing found`)},
		{name: "short messages repeat harmlessly", trace: build(`say Continue.`, `call shell {} => x`, `say Continue.`, `call shell {} => x`)},
		{name: "three copies and no answer to the last", trace: build(`say `+long, `call shell {} => x`, `say `+long, `call shell {} => x`, `say `+long),
			want: [][]int{{0, 3, 6}}, conf: 0.7},
		{name: "a restarted run replaying is not a repeat", trace: build(`system Initialized agent`, `agent A@assistant `+long, `agent B@assistant nothing found`,
			`system Initialized agent`, `agent A@assistant `+long, `agent B@assistant nothing found`)},
		{name: "a repeat after the restart still counts", trace: build(`system Initialized agent`, `agent A@assistant first`,
			`system Initialized agent`, `agent A@assistant `+long, `agent B@assistant nothing found`, `agent A@assistant `+long, `agent B@assistant nothing found`),
			want: [][]int{{3, 5}}, conf: 0.6},
		{name: "the same words from two agents are not a repeat", trace: build(`agent A@assistant `+long, `agent C@user hm`, `agent B@assistant `+long, `agent C@user hm`)},
	})
}
