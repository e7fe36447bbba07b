package synth

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// committed is the example cohort as checked in, relative to this package.
var committed = filepath.Join("..", "..", "examples", "itbench-zero")

// TestCommittedExamplesAreGenerated compares the committed examples with
// the generator's output file by file, so that they can never drift from
// the generator (or be edited by hand).
func TestCommittedExamplesAreGenerated(t *testing.T) {
	got, _ := Examples().Files()
	want := readTree(t, committed)
	for name, b := range got {
		w, ok := want[name]
		switch {
		case !ok:
			t.Errorf("%s is generated but not committed", name)
		case !bytes.Equal(b, w):
			t.Errorf("%s differs from the generator's output", name)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s is committed but no longer generated", name)
		}
	}
	if t.Failed() {
		t.Log("run `go run ./cmd/faultline synth --examples --out examples/itbench-zero` from the repository root and commit the result")
	}
}

// readTree returns the files under root by slash-separated relative path.
func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
