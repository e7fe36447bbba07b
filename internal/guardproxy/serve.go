package guardproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// shutdownGrace is how long Serve waits, once its context ends, for the
// requests in flight (a stream among them) before it cuts them off.
const shutdownGrace = 10 * time.Second

// Serve answers on ln until ctx ends, evicting idle sessions as it goes;
// then it finishes the requests in flight and stores every session's run
// (see Close).
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	sweep := time.NewTicker(sweepEvery(p.cfg.Policy.SessionIdle))
	defer sweep.Stop()
	var err error
loop:
	for {
		select {
		case <-sweep.C:
			p.sessions.sweep(time.Now())
		case err = <-served:
			break loop
		case <-ctx.Done():
			shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
			err = srv.Shutdown(shut)
			cancel()
			if err != nil {
				err = errors.Join(fmt.Errorf("stopping the proxy: %w", err), srv.Close())
			}
			break loop
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	done, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	return errors.Join(err, p.Close(done))
}

// sweepEvery is how often idle sessions are looked for: often enough that
// none outstays its idle time by much more than a tenth of it.
func sweepEvery(idle time.Duration) time.Duration {
	return min(max(idle/10, time.Second), time.Minute)
}

// Close stores every session's run and posts the decisions queued for the
// OTLP endpoint, and waits for both, or for ctx to end.
func (p *Proxy) Close(ctx context.Context) error {
	var errs []error
	if p.saver != nil {
		for _, e := range p.sessions.all() {
			p.saver.put(saveJob{e: e})
		}
		errs = append(errs, p.saver.close(ctx))
	}
	if p.otlp != nil {
		errs = append(errs, p.otlp.close(ctx))
	}
	return errors.Join(errs...)
}
