package detect

import (
	"context"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// Sink wraps an ingest sink so that every trace passes through the detectors
// on its way in, carrying their findings. Rejected findings (a detector bug)
// go to onError.
func Sink(next ingest.Sink, ds []*Detector, onError func(error)) ingest.Sink {
	return &sink{next: next, ds: ds, onError: onError}
}

type sink struct {
	next    ingest.Sink
	ds      []*Detector
	onError func(error)
}

func (s *sink) File(ctx context.Context, f ingest.FileInfo) (ingest.FileSink, error) {
	fs, err := s.next.File(ctx, f)
	if fs == nil || err != nil {
		return fs, err
	}
	return &fileSink{FileSink: fs, s: s}, nil
}

type fileSink struct {
	ingest.FileSink
	s *sink
}

func (fs *fileSink) Trace(ctx context.Context, t *trace.Trace) error {
	findings, errs := Run(t, fs.s.ds)
	for _, err := range errs {
		fs.s.onError(err)
	}
	t.Findings = append(t.Findings, findings...)
	return fs.FileSink.Trace(ctx, t)
}
