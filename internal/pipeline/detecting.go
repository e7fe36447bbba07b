package pipeline

import (
	"context"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// Detecting wraps an ingest sink so that every trace passes through the
// detectors ds on its way in, carrying their findings and the detector
// set's version (Trace.DetectedWith), so that whatever stores it records
// which set produced them. Rejected findings (a detector bug) go to
// onError.
func Detecting(next ingest.Sink, ds []*detect.Detector, onError func(error)) ingest.Sink {
	return &detecting{next: next, ds: ds, version: detect.Version(ds), onError: onError}
}

type detecting struct {
	next    ingest.Sink
	ds      []*detect.Detector
	version string
	onError func(error)
}

func (s *detecting) File(ctx context.Context, f ingest.FileInfo) (ingest.FileSink, error) {
	fs, err := s.next.File(ctx, f)
	if fs == nil || err != nil {
		return fs, err
	}
	return &detectingFile{FileSink: fs, s: s}, nil
}

type detectingFile struct {
	ingest.FileSink
	s *detecting
}

func (fs *detectingFile) Trace(ctx context.Context, t *trace.Trace) error {
	findings, errs := detect.Run(t, fs.s.ds)
	for _, err := range errs {
		fs.s.onError(err)
	}
	t.Findings = append(t.Findings, findings...)
	t.DetectedWith = fs.s.version
	return fs.FileSink.Trace(ctx, t)
}
