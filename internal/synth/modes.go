package synth

// The modes synth plants: MAST's codes (taxonomy mast-v3), and one of
// faultline's own category of system failures (taxonomy.System).
const (
	fm11 = "FM-1.1"
	fm13 = "FM-1.3"
	fm14 = "FM-1.4"
	fm15 = "FM-1.5"
	fm23 = "FM-2.3"
	fm26 = "FM-2.6"
	fm31 = "FM-3.1"
	fm32 = "FM-3.2"
	fm33 = "FM-3.3"
	// ModeSystem is faultline's code for a failure of the system around the
	// agent rather than of the agent, outside MAST: an empty model response,
	// a turn that produces nothing at all, as real gpt-oss-120b runs of Zero
	// do turn after turn.
	ModeSystem = "SYS-1"
)
