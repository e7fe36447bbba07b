package synth

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/detect"
)

// TestDetectorRecall measures every detector on a planted corpus and on the
// examples, and logs the table (go test -v -run Recall ./synth shows it).
// It asserts only what must hold whatever the detectors become: their
// evidence checks out, the modes the first detectors were built for are
// found where they were planted, and clean runs give them nothing.
func TestDetectorRecall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "corpus")
	if _, err := generate(t, Options{Seed: 1, Traces: DefaultTraces}).Write(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	examples := filepath.Join(t.TempDir(), "examples")
	if _, err := Examples().Write(context.Background(), examples); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{dir, examples} {
		sc, err := Measure(context.Background(), dir, detect.All)
		if err != nil {
			t.Fatal(err)
		}
		var table strings.Builder
		if err := sc.WriteTable(&table); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s:\n%s", filepath.Base(dir), table.String())
		if len(sc.Rejected) > 0 {
			t.Errorf("findings rejected by the driver: %v", sc.Rejected)
		}
		for _, s := range sc.Modes {
			if (s.Mode == fm13 || s.Mode == fm15) && s.ControlHits > 0 {
				t.Errorf("%s is found in %d clean controls", s.Mode, s.ControlHits)
			}
		}
		// The plainest forms, which the first two detectors exist for.
		for _, v := range sc.Variants {
			plain := slices.Contains([]string{"identical-call", "plan-no-progress", "harness-retries", "retry-loop"}, v.Variant)
			if plain && v.Located != v.Planted {
				t.Errorf("%s planted as %s: found at the planted step in %d of %d traces", v.Mode, v.Variant, v.Located, v.Planted)
			}
		}
	}
}
