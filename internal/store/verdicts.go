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
