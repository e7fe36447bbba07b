// Package shared locates the project's reference data (real traces, ground
// truths and labels) that lives beside the repository in ../shared, for tests.
// Tests that need it skip when it is absent, and fail under CI=true.
package shared

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns the absolute path of ../shared relative to the module root.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	return filepath.Join(root, "..", "shared")
}

// Path returns the path of rel under ../shared/data, skipping the test when it
// does not exist (failing it when the environment variable CI is "true").
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	p := filepath.Join(Dir(), "data", rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("shared test data %s is required under CI: %v", p, err)
		}
		tb.Skipf("shared test data not available (%v); skipping", err)
	}
	return p
}

// Notes returns the path of rel under ../shared/notes, with the same skip rule.
func Notes(tb testing.TB, rel string) string {
	tb.Helper()
	p := filepath.Join(Dir(), "notes", rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("shared notes %s are required under CI: %v", p, err)
		}
		tb.Skipf("shared notes not available (%v); skipping", err)
	}
	return p
}
