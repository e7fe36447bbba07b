package main

import (
	"fmt"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/config"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/rules"
)

// ruleSet reads the user's rules: the file --rules names, else the rules
// section of the settings file (--config, or ./faultline.yaml when
// present); without either, an empty set. It is read once per command, so
// that every part of a command runs the same rules.
func (a *app) ruleSet() (*rules.Set, error) {
	if a.rules != nil {
		return a.rules, nil
	}
	path, load, err := a.rulesFile()
	if err != nil {
		return nil, err
	}
	set, err := load(path)
	if err != nil {
		return nil, err
	}
	a.rules = set
	return set, nil
}

// rulesFile is where the user's rules are and how they are read: the file
// --rules names, as a rule file, else the settings file (--config, or
// ./faultline.yaml when present; "" when neither), as settings.
func (a *app) rulesFile() (string, func(string) (*rules.Set, error), error) {
	if a.rulesPath != "" {
		return a.rulesPath, rules.Load, nil
	}
	path, err := config.Find(a.configPath)
	return path, rules.LoadSettings, err
}

// detectors are the built-in detectors followed by the user's rules: what
// ingest, receive, re-detection and the guard run.
func (a *app) detectors() ([]*detect.Detector, error) {
	set, err := a.ruleSet()
	if err != nil {
		return nil, err
	}
	if len(set.Rules) == 0 {
		return detect.All, nil
	}
	return append(append([]*detect.Detector{}, detect.All...), set.Detectors()...), nil
}

// lintRules warns of the rules that name a tool none of the traces just
// read calls: most often a misspelt name, which makes a rule match nothing.
func (a *app) lintRules(tools map[string]int) {
	set, err := a.ruleSet()
	if err != nil {
		return // reported where the rules were first read
	}
	for _, w := range set.Lint(tools) {
		fmt.Fprintf(a.stderr, "notice: %s\n", report.PrintableLines(w.Error()))
	}
}
