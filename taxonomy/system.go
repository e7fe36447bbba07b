package taxonomy

import _ "embed"

//go:embed system.json
var systemV1 []byte

// SystemVersion is the version recorded on annotations with a System code.
const SystemVersion = "faultline-system-v1"

// System is faultline's own category of infrastructure and harness failures
// (codes SYS-1 …): an empty model response, a failing tool server, a rate
// limit, a context overflow. They are not MAST modes and are kept out of MAST
// statistics, so that a model endpoint that never answers does not read as
// an agent that ignores its stop conditions.
var System = mustLoad(systemV1)

// IsMAST reports whether code names a MAST mode (FM-1.1 … FM-3.3, in any
// spelling CanonicalCode accepts).
func IsMAST(code string) bool {
	_, ok := MAST.Mode(code)
	return ok
}

// Lookup finds a code in MAST or in System and returns the mode with the
// version of the taxonomy it belongs to.
func Lookup(code string) (*Mode, string, bool) {
	if m, ok := MAST.Mode(code); ok {
		return m, Version, true
	}
	if m, ok := System.Mode(code); ok {
		return m, SystemVersion, true
	}
	return nil, "", false
}

// Name is the name of a MAST or system code, "" for a code of neither.
func Name(code string) string {
	if m, _, ok := Lookup(code); ok {
		return m.Name
	}
	return ""
}
