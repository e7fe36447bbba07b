// Package jsonscantest holds the scanner's readings to encoding/json's, for
// the tests of the types it decodes.
package jsonscantest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/faultline/faultline/internal/jsonscan"
)

// Check decodes doc with the scanner alone and with encoding/json: what
// the scanner accepts, encoding/json must accept, decoded the same.
func Check[T any, P jsonscan.Value[T]](t testing.TB, doc []byte) {
	t.Helper()
	var fast, std T
	var s jsonscan.Scanner
	s.Reset(doc)
	ok := P(&fast).Scan(&s) && s.End()
	err := json.Unmarshal(doc, &std)
	if !ok {
		return
	}
	if err != nil {
		t.Fatalf("%T: the scanner accepts what encoding/json refuses (%v): %q", fast, err, doc)
	}
	if !reflect.DeepEqual(fast, std) {
		t.Fatalf("%T: the scanner reads %+v, encoding/json %+v: %q", fast, fast, std, doc)
	}
}

// FallsBack checks that doc, decoded through jsonscan.Unmarshal, is
// decoded as encoding/json decodes it, errors included, whether the
// scanner read it or left it to encoding/json.
func FallsBack[T any, P jsonscan.Value[T]](t testing.TB, doc []byte) {
	t.Helper()
	var s jsonscan.Scanner
	var got, want T
	gotErr := jsonscan.Unmarshal(&s, doc, P(&got))
	wantErr := json.Unmarshal(doc, &want)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() || !reflect.DeepEqual(got, want) {
		t.Errorf("%q: got %+v (%v), want %+v (%v)", doc, got, gotErr, want, wantErr)
	}
}
