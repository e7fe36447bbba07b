package detect

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzObjects holds objects, which reads an answer section through the
// one-pass scanner, to what json.Unmarshal into a []map[string]any makes of
// it.
func FuzzObjects(f *testing.F) {
	for _, s := range []string{`[{"a":1},null]`, `[]`, `null`, `[1]`, `{"a":1}`, `[{"a":[1,{"b":"c"}]}]`, `[null]`, `[{}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := objects(raw)
		var want []map[string]any
		wantOK := json.Unmarshal(raw, &want) == nil && want != nil
		if ok != wantOK || (ok && !reflect.DeepEqual(got, want)) {
			t.Fatalf("%q: %v %v, want %v %v", raw, got, ok, want, wantOK)
		}
	})
}
