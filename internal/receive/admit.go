package receive

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// decodeCost is the memory a request takes while it is decoded, per byte of
// its body (decompressed): the body itself, and what pdata allocates to
// decode it, about twice the body for protobuf and a little less for JSON
// (BenchmarkDecodeMemory), rounded up.
const decodeCost = 3

// grant is the share of the memory budget (MaxBytes, which the traces held
// share) that one request holds while it is read and decoded: its bytes
// on the wire, counted before they are read when Content-Length gives
// them, as they are read otherwise; its decompressed bytes as they come out
// of gzip; then what decoding them costs, before it starts. accept gives the
// grant back as the request's spans take their place in the budget.
type grant struct {
	r *Receiver
	n int64
}

func (r *Receiver) admit() *grant { return &grant{r: r} }

// take counts n more bytes for the request, or says why it may not have
// them: 413 when the request alone would exceed the budget, 429 with a
// Retry-After when the budget is spent for now.
func (g *grant) take(n int64) *refusal {
	r := g.r
	limit := int64(r.cfg.MaxBytes)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case g.n+n > limit:
		return &refusal{status: http.StatusRequestEntityTooLarge,
			why: fmt.Sprintf("request needs %d bytes or more to decode, more than the receiver's memory limit of %d bytes", g.n+n, limit)}
	case int64(r.stats.OpenBytes)+r.stats.RequestBytes+n > limit:
		// Requests finish decoding in moments; traces held wait to be stored.
		retry := time.Second
		if int64(r.stats.OpenBytes)+g.n+n > limit {
			retry = r.nextFlush(time.Now())
		}
		return &refusal{status: http.StatusTooManyRequests, retry: retry,
			why: "faultline receive's memory is taken by the requests it is decoding and the traces it holds; retry later"}
	}
	g.n += n
	r.stats.RequestBytes += n
	return nil
}

// release gives the request's bytes back.
func (g *grant) release() {
	g.r.mu.Lock()
	defer g.r.mu.Unlock()
	g.releaseLocked()
}

// releaseLocked is release with r.mu held; a nil grant holds nothing.
func (g *grant) releaseLocked() {
	if g == nil {
		return
	}
	g.r.stats.RequestBytes -= g.n
	g.n = 0
}

// refused carries a refusal out of a read.
type refused struct{ no *refusal }

func (e refused) Error() string { return e.no.why }

// counted counts what is read through it against a grant.
type counted struct {
	r io.Reader
	g *grant
}

func (c counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		if no := c.g.take(int64(n)); no != nil {
			return n, refused{no}
		}
	}
	return n, err
}

// readBody reads the request body, decompressed, within MaxBodyBytes and
// the memory budget, then counts what decoding it will take.
func (r *Receiver) readBody(w http.ResponseWriter, req *http.Request, g *grant) ([]byte, *refusal) {
	limit := r.cfg.MaxBodyBytes
	tooLarge := &refusal{status: http.StatusRequestEntityTooLarge, why: fmt.Sprintf("body larger than %d bytes", limit)}
	wire := req.ContentLength // -1 when chunked
	gz := false
	switch req.Header.Get("Content-Encoding") {
	case "", "identity":
		if wire > limit {
			return nil, tooLarge
		}
		if wire*decodeCost > int64(r.cfg.MaxBytes) {
			return nil, &refusal{status: http.StatusRequestEntityTooLarge,
				why: fmt.Sprintf("a body of %d bytes needs about %d bytes to decode, more than the receiver's memory limit of %d bytes", wire, wire*decodeCost, r.cfg.MaxBytes)}
		}
	case "gzip":
		gz = true
	default:
		return nil, &refusal{status: http.StatusUnsupportedMediaType, why: fmt.Sprintf("Content-Encoding %q: send gzip or none", req.Header.Get("Content-Encoding"))}
	}
	var body io.Reader = http.MaxBytesReader(w, req.Body, limit)
	if wire > 0 {
		if no := g.take(wire); no != nil {
			return nil, no
		}
	} else {
		body = counted{body, g}
	}
	size := max(wire, 0)
	if gz {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, readError(fmt.Errorf("gzip body: %w", err), tooLarge)
		}
		defer zr.Close()
		body, size = counted{zr, g}, 0
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(body, limit+1))
	switch {
	case err != nil:
		return nil, readError(fmt.Errorf("reading body: %w", err), tooLarge)
	case int64(buf.Len()) > limit:
		return nil, tooLarge
	}
	if no := g.take(int64(buf.Len()) * (decodeCost - 1)); no != nil {
		return nil, no
	}
	return buf.Bytes(), nil
}

// readError is the refusal of a body that could not be read.
func readError(err error, tooLarge *refusal) *refusal {
	var no refused
	var maxBytes *http.MaxBytesError
	switch {
	case errors.As(err, &no):
		return no.no
	case errors.As(err, &maxBytes):
		return tooLarge
	}
	return &refusal{status: http.StatusBadRequest, why: err.Error()}
}
