package store

import "github.com/faultline/faultline/trace"

// ModeVerdict is one stored finding reduced to what comparing annotation
// sources needs: who said what about which mode of which trace, and where.
type ModeVerdict struct {
	Trace   string
	Source  string
	Mode    string
	Verdict trace.Verdict
	Steps   []int
}

// TraceVerdicts is what one trace holds for comparing annotation sources.
type TraceVerdicts struct {
	Trace string
	// DetectedWith is the detector set whose findings the trace carries.
	DetectedWith string
	// Sources lists every source with a finding on the trace, with a mode
	// or not.
	Sources []string
	// Verdicts are the trace's findings with a mode, of every source, in
	// the order they were stored.
	Verdicts []ModeVerdict
}
