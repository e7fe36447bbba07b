package main

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"testing"
)

// mapFields hold keys that are data, not field names (a trace's meta, a
// metric per name, a mode per code): their own keys are not documented.
var mapFields = map[string]bool{"meta": true, "metrics": true, "overall": true, "agreement": true, "unscored_by": true}

// Every field the commands print in JSON is documented in docs/json.md.
func TestJSONFieldsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	ingestOut, _, _ := c.run("", "ingest", "--json", examples)
	lsOut, _, _ := c.run("", "ls", "--json")
	var traces []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(lsOut), &traces); err != nil || len(traces) == 0 {
		t.Fatalf("ls: %v", err)
	}
	outputs := map[string]string{"ingest": ingestOut, "ls": lsOut}
	for _, args := range [][]string{
		{"score", "--json", "--ground-truth", examples + "/itbench-zero/ground_truths.json"},
		{"show", "--json", traces[4].ID},
		{"diff", "--json", traces[0].ID, traces[4].ID},
		{"detectors", "--json"},
		{"modes", "--json"},
		{"version", "--json"},
	} {
		out, errOut, code := c.run("", args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		outputs[args[0]] = out
	}
	for command, out := range outputs {
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%s: %v", command, err)
		}
		keys := map[string]bool{}
		collectKeys(v, keys)
		var missing []string
		for k := range keys {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(k) + `\b`).Match(doc) {
				missing = append(missing, k)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s --json prints fields docs/json.md does not mention: %v", command, missing)
		}
	}
}

func collectKeys(v any, keys map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			keys[k] = true
			if !mapFields[k] {
				collectKeys(x, keys)
			}
		}
	case []any:
		for _, x := range v {
			collectKeys(x, keys)
		}
	}
}
