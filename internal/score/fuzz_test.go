package score

import (
	"testing"
)

func FuzzGroundTruth(f *testing.F) {
	f.Add([]byte(`[{"id":"2","groups":[{"id":"a","kind":"Pod","filter":["a-.*"],"root_cause":true}],"aliases":[["a","b"]],"propagations":[{"source":"a","target":"b"}]}]`))
	f.Add([]byte("apiVersion: itbench.io/v1\nkind: GroundTruth\nspec:\n  groups:\n    - {id: x, kind: Service, filter: ['x\\b'], root_cause: true}\n"))
	f.Add([]byte("apiVersion: itbench.io/v2\nkind: GroundTruth\nmetadata: {name: scenario-4}\nspec:\n  entities:\n    - kind: ConfigMap\n      metadata: {name: c, namespace: n}\n"))
	f.Add([]byte(`{"groups":[{"id":"a","filter":["*.*","(?=x)"]}],"aliases":[[],["a"]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		IsGroundTruth(data)
		gts, err := parseGroundTruth(data, "fuzz", "1")
		if err != nil {
			return
		}
		for _, gt := range gts {
			roots := gt.RootClasses()
			s := ScoreEntities(gt, []string{"n/Pod/a-1", "x", "c ConfigMap"}, []Propagation{{Source: "x", Target: "a"}}, Options{})
			if s.Recall < 0 || s.Recall > 1 || s.Precision < 0 || s.Precision > 1 || s.RootClasses != len(roots) {
				t.Fatalf("scores out of range: %+v", s)
			}
		}
	})
}

func FuzzParseDiagnosis(f *testing.F) {
	f.Add([]byte(`{"entities":[{"name":"ns/Pod/a","contributing_factor":true}],"propagations":[{"source":"a","target":"b"}]}`))
	f.Add([]byte("```json\n{\"entities\":[{\"name\":\"x\",},],}\n```"))
	f.Add([]byte(`{"entities":[{"id":1,"name":"a Pod"}],"propagations":[{"source":"1","target":"2","source_name":"a"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDiagnosis(data, "fuzz")
		if err == nil && d == nil {
			t.Fatal("nil diagnosis without error")
		}
	})
}

func FuzzOutcomeLabels(f *testing.F) {
	f.Add([]byte("trace_id,success,score\nt1,true,0.5\n"))
	f.Add([]byte(`[{"trace_id":"t","success":"pass"},{"id":"u","score":1}]`))
	f.Add([]byte("{\"trace_id\":\"t\",\"success\":1}\n{bad\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		labels, _, _ := parseOutcomeLabels("fuzz", data)
		for _, l := range labels {
			if l.TraceID == "" || (l.Success == nil && l.Score == nil) {
				t.Fatalf("incomplete label kept: %+v", l)
			}
		}
	})
}

func FuzzPythonRegexp(f *testing.F) {
	for _, p := range []string{`cart\b`, `^a$`, `[]a]`, `[^]]`, `(?P<x>a)`, `a\Z`, `\\`, `(?=a)`, `a{2,`} {
		f.Add(p, "cart-1")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		re, err := PythonRegexp(pattern)
		if err == nil {
			re.MatchString(name)
		}
	})
}

func FuzzParseEntity(f *testing.F) {
	for _, s := range []string{"ns/Pod/a", "Service/x", "a (Pod)", "a Pod", "/", "a//b/c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := ParseEntity(s)
		_ = e.String()
	})
}
