package labels

import "testing"

// The seed corpora are under testdata/fuzz. Whatever the input, reading
// must not panic, and what comes out must be a well-formed set (checkSet):
// known codes, one label per trace and mode, steps only where present,
// issues pointing inside the input.

func FuzzJSONLabels(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		set, issues := ParseJSON("f.json", data)
		checkSet(t, set, issues, data)
	})
}

func FuzzCSVLabels(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		set, issues := ParseCSV("f.csv", data)
		checkSet(t, set, issues, data)
	})
}
