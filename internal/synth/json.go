package synth

import (
	"bytes"
	"encoding/json"
)

// obj is a JSON object that keeps its keys in the order given, the order in
// which the Codex CLI writes them.
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON implements json.Marshaler.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(compactJSON(f.k))
		b.WriteByte(':')
		b.WriteString(compactJSON(f.v))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// compactJSON encodes v on one line. HTML characters are left alone, as the
// Codex CLI leaves them: "<environment_context>" stays readable.
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only the generator's own values are encoded
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// indentJSON encodes v with two-space indentation and a final newline.
func indentJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return b.Bytes()
}
