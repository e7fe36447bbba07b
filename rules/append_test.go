package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newSpec(name string) Spec {
	yes := true
	return Spec{
		Name: name,
		Mode: "FM-1.4",
		Doc:  "A command failed with the same error again. Saved from a pattern.",
		Match: &Matcher{
			Kind:  List{"tool_result"},
			Tool:  List{"shell", "exec"},
			Exit:  &Exit{NonZero: true},
			Error: &yes,
			Text:  `connection refused: \d+\.\d+\.\d+\.\d+:\d+`,
		},
	}
}

func TestAppendRuleKeepsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faultline.yaml")
	if err := os.WriteFile(path, []byte(goodFile), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AppendRule(path, newSpec("refused")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := string(data)
	if !strings.HasPrefix(out, goodFile) {
		t.Errorf("the file's own text was not kept as it was:\n%s", out)
	}
	for _, keep := range []string{"# team rules", "gpt-x: gpt-x-1", "model: whatever", "code: OPS-1", "name: lost-access", "steps: 200"} {
		if !strings.Contains(out, keep) {
			t.Errorf("lost %q:\n%s", keep, out)
		}
	}
	s, err := Load(path)
	if err != nil {
		t.Fatalf("the result does not load: %v\n%s", err, out)
	}
	if len(s.Rules) != 3 || s.Rules[2].Name != "refused" || s.Rules[2].Match.Text != newSpec("").Match.Text {
		t.Fatalf("rules after append: %+v", s.Rules)
	}
	if m := s.Rules[2].Match; !m.Exit.NonZero || len(m.Tool) != 2 || *m.Error != true {
		t.Errorf("matcher read back: %+v", m)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mode after append: %v, %v", info.Mode(), err)
	}
	// The spec hashes as written by hand would.
	hand := mustParse(t, rule("match:\n  kind: tool_result\n  tool: [shell, exec]\n  exit: nonzero\n  error: true\n  text: 'connection refused: \\d+\\.\\d+\\.\\d+\\.\\d+:\\d+'\n"))
	if hand.Rules[0].Match.Text != s.Rules[2].Match.Text {
		t.Errorf("regex read back as %q", s.Rules[2].Match.Text)
	}

	// A second rule of the same name is refused, and the file is left as it was.
	err = AppendRule(path, newSpec("refused"))
	if err == nil || !strings.Contains(err.Error(), "the file has a rule of that name") {
		t.Fatalf("duplicate: %v", err)
	}
	again, _ := os.ReadFile(path)
	if string(again) != out {
		t.Error("a refused append changed the file")
	}
}

func TestAppendRuleCreates(t *testing.T) {
	dir := t.TempDir()
	// No file: it is created with a rules section.
	path := filepath.Join(dir, "new.yaml")
	if err := AppendRule(path, newSpec("first")); err != nil {
		t.Fatal(err)
	}
	if s, err := Load(path); err != nil || len(s.Rules) != 1 {
		t.Fatalf("created file: %v, %v", s, err)
	}
	// A settings file without a rules section, or with an empty one.
	for _, src := range []string{"# settings\nmodels:\n  a: b\n", "rules:\n", "# only a comment\n"} {
		p := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := AppendRule(p, newSpec("first")); err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		data, _ := os.ReadFile(p)
		s, err := Load(p)
		if err != nil || len(s.Rules) != 1 {
			t.Fatalf("%q: %v\n%s", src, err, data)
		}
		if strings.HasPrefix(src, "#") && !strings.Contains(string(data), strings.TrimSpace(strings.SplitN(src, "\n", 2)[0])) {
			t.Errorf("%q: comment lost:\n%s", src, data)
		}
	}
}

func TestAppendRuleRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.yaml")
	bad := newSpec("Bad Name")
	if err := AppendRule(path, bad); err == nil || !strings.Contains(err.Error(), "would make the file invalid") {
		t.Errorf("invalid rule: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused rule created the file: %v", err)
	}
	noRegex := newSpec("r")
	noRegex.Match.Text = "a("
	if err := AppendRule(path, noRegex); err == nil || !strings.Contains(err.Error(), "bad regular expression") {
		t.Errorf("bad regex: %v", err)
	}
	for _, src := range []string{"rules: [\n", "- a\n", "rules: {a: b}\n"} {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := AppendRule(path, newSpec("r")); err == nil {
			t.Errorf("%q: appended to a broken file", src)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestAppendRuleRewritesTheTree(t *testing.T) {
	// The rules list does not end the file: the rule goes into the tree,
	// which is written out again, comments kept.
	src := "rules:\n  # first\n  - name: a\n    mode: FM-1.3\n    doc: A.\n    budget: {steps: 3}\n# the models\nmodels:\n  x: y\n"
	path := filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendRule(path, newSpec("b")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	s, err := Load(path)
	if err != nil || len(s.Rules) != 2 || s.Rules[1].Name != "b" {
		t.Fatalf("%v, %v\n%s", s, err, data)
	}
	for _, keep := range []string{"# first", "# the models", "x: y"} {
		if !strings.Contains(string(data), keep) {
			t.Errorf("lost %q:\n%s", keep, data)
		}
	}
	// The example file: its text is kept byte for byte.
	example, err := os.ReadFile(filepath.Join(examples, "itbench.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := appendRule("itbench.yaml", example, newSpec("c"))
	if err != nil || !strings.HasPrefix(string(out), string(example)) {
		t.Errorf("example: %v\n%s", err, out)
	}
}

// A rule is added to faultline.yaml whatever its other sections, which are
// other commands' and kept.
func TestAppendRuleKeepsOtherSections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faultline.yaml")
	if err := os.WriteFile(path, []byte("other_command:\n  x: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := Spec{Name: "long", Mode: "FM-1.5", Doc: "Long.", Budget: &Budget{Steps: 3}}
	if err := AppendRule(path, sp); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	set, err := LoadSettings(path)
	if err != nil || len(set.Rules) != 1 || !strings.Contains(string(data), "other_command:") {
		t.Errorf("%v, %+v:\n%s", err, set, data)
	}
}
