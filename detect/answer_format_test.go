package detect

import "testing"

func TestAnswerFormat(t *testing.T) {
	write := func(body string) string {
		return `call shell {"command":["bash","-lc","cat > agent_output.json <<'EOF'\n` + body + `\nEOF"]} => `
	}
	runCases(t, AnswerFormat, []detCase{
		{name: "a conforming answer", trace: build(zeroTask, `user go`, writeAnswer, validate)},
		{name: "missing sections and fields",
			trace: build(zeroTask, `user go`, write(`{\"entities\": [{\"name\": \"otel-demo/Deployment/ad\", \"contributing_factor\": true}, {\"name\": \"otel-demo/Service/frontend\"}]}`)),
			want:  [][]int{{1}}, quote: "otel-demo/Deployment/ad", conf: 0.8},
		{name: "names not in the convention",
			trace: build(zeroTask, `user go`, write(`{\"entities\": [{\"name\": \"ad\", \"contributing_factor\": true, \"reasoning\": \"r\", \"evidence\": \"e\"}], \"propagations\": [], \"alerts_explained\": []}`)),
			want:  [][]int{{1}}, quote: "ad", conf: 0.7},
		{name: "a UID in a name",
			trace: build(zeroTask, `user go`, write(`{\"entities\": [{\"name\": \"otel-demo/Pod/ad-5f9c2b7a-1d2e-4f3a-9b8c-0123456789ab\", \"contributing_factor\": true, \"reasoning\": \"r\", \"evidence\": \"e\"}], \"propagations\": [], \"alerts_explained\": []}`)),
			want:  [][]int{{1}}, conf: 0.7},
		{name: "fields longer than the prompt allows",
			trace: build(zeroTask, `user go`, write(`{\"entities\": [{\"name\": \"ns/Kind/x\", \"contributing_factor\": true, \"reasoning\": \"One thing. Another thing. A third thing.\", \"evidence\": \"e.g. The value 0.5. Fine.\"}], \"propagations\": [], \"alerts_explained\": []}`)),
			want:  [][]int{{1}}, quote: "One thing. Another thing. A third thing.", conf: 0.6},
		{name: "empty lists break no rule of the format", trace: build(zeroTask, `user go`, write(`{\"entities\": [], \"propagations\": [], \"alerts_explained\": []}`))},
		{name: "not JSON at all is FM-3.1's alone", trace: build(zeroTask, `user go`, write(`{\"entities\": [`))},
		{name: "other tasks' files are not judged", trace: build(`task Write your plan to: plan.json`, `user go`, `call shell {"command":["bash","-lc","echo '{}' > plan.json"]} => `)},
	})
}
