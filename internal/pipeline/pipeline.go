// Package pipeline is where faultline's pieces meet: traces ingested with
// the detectors run on them, stale detector findings renewed, stored runs
// scored against ground truth, labels checked against the traces they cite
// before they are stored. The command line and the web UI call it and hold
// no domain logic of their own; it reaches the store through the small
// interfaces each step defines.
package pipeline
