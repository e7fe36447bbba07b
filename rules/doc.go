// Package rules turns detectors written as data into detect.Detector values.
// A compiled rule is an ordinary detector: it runs wherever the built-in
// ones run, and its findings obey the same evidence rules (they cite steps
// that exist and quote them verbatim).
//
// # The rule file
//
// Rules live in faultline.yaml, the settings file, whose models and judge
// sections the rule loader ignores, or in a file of their own. The top level
// is a mapping with the optional sections codes and rules; any other key is
// an error.
//
//	codes:                        # failure codes of your own
//	  - code: OPS-1               # PREFIX-ID; not an FM- or SYS- code
//	    name: Cluster access lost
//	    doc: The agent lost access to the cluster and kept going.
//	rules:
//	  - name: lost-access         # [a-z0-9][a-z0-9-]*, unique, not a built-in detector's
//	    mode: OPS-1               # a MAST code, a SYS- code, or one declared above
//	    doc: The agent kept working after losing the cluster. More ...
//	    severity: medium          # low, medium (default) or high
//	    confidence: 0.8           # (0, 1], default 0.8
//	    match: {kind: tool_result, text: Unauthorized}
//
// A rule has exactly one shape:
//
//   - match: MATCHER. The steps it holds on; one finding per trace.
//   - sequence: {first, then, within}. A step matching first, and the first
//     step after it matching then, at most within steps later.
//   - never_followed: {first, by, within}. A step matching first that no
//     step matching by follows within that many steps; without within,
//     before the run ends (such a rule judges finished runs only:
//     Detector.Finished). A step in the last within steps of a run is not
//     reported, since the run may still follow it up.
//   - repeat: {match, same, times}. times or more matching steps whose same
//     fields (tool, args, text; whitespace-normalised) are identical; one
//     finding per group.
//   - count: {match, at_least}. A run with at least at_least matching steps.
//   - budget: {steps, tokens}. A run longer than steps steps, or than tokens
//     tokens: those the format attributes to steps, else the run's total.
//
// A MATCHER is a mapping; every field given must hold, and a list holds when
// any entry does: kind (trace.Kind names), role, agent, tool (exact names),
// exit (nonzero, zero, a code or a list; holds only on steps with an exit
// code), error (Step.IsError), by_agent (trace.ByAgent), text, args and any
// (RE2 expressions over Step.Text, Step.Args, or either), and not (a matcher
// that must not hold).
//
// A finding cites at most 20 steps. Its quote is what a regular expression
// matched in the first cited step, else the start of that step's text,
// arguments or tool name, cut to 200 bytes; its confidence is the rule's.
// A finding of a declared code records the taxonomy "custom".
//
// Every shape is evaluated in one pass over the steps: what it must remember
// (the steps still waiting for a follow-up, the groups of identical steps) is
// kept as it goes, never found again by scanning back.
package rules
