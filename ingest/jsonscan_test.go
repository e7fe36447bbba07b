package ingest

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/jsonscan/jsonscantest"
)

// The scanner must decode what it accepts exactly as encoding/json does,
// and accept nothing encoding/json refuses: FuzzJSONScanner holds it to
// that on every input, for every type of a rollout it decodes.

// scanCases are documents whose reading differs between a naive decoder
// and encoding/json, each decoded by the scanner or left to encoding/json.
var scanCases = []string{
	`{"timestamp":"2026-01-15T12:00:00Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5","user_instructions":"a\nlong\ttext \"quoted\" \\ \/ \u00e9\ud83d\ude00"}}`,
	`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"line\\nline\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.5}}"}}`,
	`{"type":"response_item","payload":{"type":"function_call_output","output":"[{\"type\":\"text\",\"text\":\"a\"},null,{\"type\":\"image\"}]"}}`,
	`{"TYPE":"event_msg","payload":{"type":"x"}}`,                  // a key in another case: encoding/json's field
	`{"type":"event_msg","payload":{"Type":"x","Model":"m"}}`,      // the same, in the payload
	`{"typ\u0065":"event_msg","payload":{}}`,                       // an escaped key
	`{"type":"a","type":"b","payload":{"model":"m"},"payload":{}}`, // repeated keys: the last, merged
	`{"type":null,"payload":null}`,                                 // null keeps a field as it was
	`{"type":"x","payload":{"model":5}}`,                           // a type error, which encoding/json reports
	`{"type":"x","payload":{"content":[1,{"a":[true,false,null,-0.5e+3]}],"info":{"k":"v"}}}`,
	`{"type":"x"} {"type":"y"}`, // more after the value
	`{"type":"x",}`,             // a trailing comma
	`{"type":"x\u12"}`,          // a short escape
	`{"type":"\ud800\u0041\udc00"}`,
	"{\"type\":\"a\tb\"}", // a raw tab in a string
	`{"type":"x","payload":{"a":01}}`,
	`{"type":"x","payload":{"a":1.}}`,
	`{"type":"x","payload":{"a":-}}`,
	`{"type":"x","payload":{"a":[1,]}}`,
	`{"type":"x","payload":{"\u00e9":1,"é":2}}`,
	`{"type":"x","payload":{"ſummary":"s"}}`, // U+017F folds to s: encoding/json's Summary
	`{"output":"o","metadata":{"exit_code":null}}`,
	`{"output":"o","metadata":{"exit_code":1.0}}`,
	`{"output":"o","metadata":{"exit_code":99999999999999999999}}`,
	`{"output":"o","metadata":{"exit_code":-3},"metadata":{"other":1}}`,
	`{"output":"o","metadata":null}`,
	`{"total_token_usage":{"input_tokens":12,"cached_input_tokens":null,"output_tokens":-3,"total_tokens":9},"last_token_usage":{"output_tokens":4},"rate_limits":null}`,
	`{"total_token_usage":{"input_tokens":1.5}}`,
	`{"total_token_usage":{"input_tokens":1e3}}`,
	`{"last_token_usage":{"output_tokens":"4"}}`,
	`{"last_token_usage":null,"total_token_usage":{"Input_Tokens":2}}`,
	`[{"type":"text","text":"a"}]`,
	`[]`,
	`null`,
	` "a string" `,
	"\xef\xbb\xbf{}", // a byte-order mark
	"{\"type\":\"\xff\xfe\"}",
	strings.Repeat("[", 600) + strings.Repeat("]", 600),
}

func FuzzJSONScanner(f *testing.F) {
	for _, c := range scanCases {
		f.Add([]byte(c))
	}
	// Real rollout lines.
	paths, _ := filepath.Glob("testdata/samples/codex/*.jsonl")
	for _, p := range paths {
		file, err := os.Open(p)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(file)
		sc.Buffer(nil, 1<<20)
		for n := 0; sc.Scan() && n < 20; n++ {
			f.Add(append([]byte(nil), sc.Bytes()...))
		}
		file.Close()
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		jsonscantest.Check[codexLine](t, doc)
		jsonscantest.Check[shellResult](t, doc)
		jsonscantest.Check[codexParts](t, doc)
		jsonscantest.Check[codexTokenInfo](t, doc)
	})
}

// TestJSONScannerFallsBack checks that the documents the scanner leaves to
// encoding/json are decoded as encoding/json decodes them, errors included.
func TestJSONScannerFallsBack(t *testing.T) {
	for _, c := range scanCases {
		jsonscantest.FallsBack[codexLine](t, []byte(c))
		jsonscantest.FallsBack[codexTokenInfo](t, []byte(c))
	}
}
