package pipeline

import (
	"context"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/trace"
)

// Redetector is what renewing detector findings needs from a store.
type Redetector interface {
	// DetectedWith returns, by trace id, the detector set whose findings
	// each stored trace carries ("" for none).
	DetectedWith(ctx context.Context, ids []string) (map[string]string, error)
	Load(ctx context.Context, id string) (*trace.Trace, error)
	// ReplaceFindings replaces a source's findings on a trace, recording
	// the detector set that produced them when detectedWith is set.
	ReplaceFindings(ctx context.Context, traceID, source string, findings []trace.Finding, detectedWith string) error
}

// Redetect runs the detectors ds again on those of the given traces whose
// stored findings came from another detector set (or none: a rule added,
// changed or removed counts as another set), so that what is reported is
// what the current detectors say. It returns how many traces it renewed.
// Rejected findings (a detector bug) go to onError.
func Redetect(ctx context.Context, st Redetector, ids []string, ds []*detect.Detector, onError func(error)) (int, error) {
	version := detect.Version(ds)
	with, err := st.DetectedWith(ctx, ids)
	if err != nil {
		return 0, err
	}
	renewed := 0
	for _, id := range ids {
		if with[id] == version {
			continue
		}
		t, err := st.Load(ctx, id)
		if err != nil {
			return renewed, err
		}
		findings, errs := detect.Run(t, ds)
		for _, err := range errs {
			onError(err)
		}
		if err := st.ReplaceFindings(ctx, id, detect.Source, findings, version); err != nil {
			return renewed, err
		}
		renewed++
	}
	return renewed, nil
}
