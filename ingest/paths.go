package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/faultline/faultline/trace"
)

// Sink receives what Paths reads. A store implements it.
type Sink interface {
	// File is called before a recognised file is decoded. It returns nil to
	// skip the file, when its content is already stored.
	File(ctx context.Context, f FileInfo) (FileSink, error)
}

// FileSink receives the traces of one file.
type FileSink interface {
	// Trace takes one trace. An error that matches ErrRefused declines this
	// trace only: the file goes on, and the refusal counts as an error of the
	// file. Any other error stops the file.
	Trace(ctx context.Context, t *trace.Trace) error
	// Close ends the file. What was emitted before a decoding error is kept;
	// a file with errors is not recorded as done, so that ingesting it again
	// reads it again and reports its problems again.
	Close(ctx context.Context, r FileResult) error
}

// ErrRefused is matched by the error of a FileSink's Trace that declines one
// trace, such as a store keeping a longer version of it, while the rest of
// the file can still be taken.
var ErrRefused = errors.New("trace refused")

// StoreFile hands traces to a sink as the content of one file, as Paths
// does with a file it decoded. It reports whether the sink took the file:
// false when it already holds it. Traces the sink refuses (see ErrRefused)
// do not stop the others; their refusals are returned, joined, after the
// file is closed with them counted as its errors.
func StoreFile(ctx context.Context, sink Sink, info FileInfo, traces ...*trace.Trace) (bool, error) {
	fs, err := sink.File(ctx, info)
	if err != nil || fs == nil {
		return false, err
	}
	var refused []error
	for _, t := range traces {
		err := fs.Trace(ctx, t)
		switch {
		case errors.Is(err, ErrRefused):
			refused = append(refused, err)
		case err != nil:
			return false, errors.Join(err, fs.Close(ctx, FileResult{Err: err}))
		}
	}
	closeErr := fs.Close(ctx, FileResult{Errors: len(refused)})
	return true, errors.Join(append(refused, closeErr)...)
}

// FileResult is how decoding a file went.
type FileResult struct {
	Err    error // what stopped decoding early, if anything
	Errors int   // issues of severity Error reported for the file
}

// FileInfo describes a file about to be decoded.
type FileInfo struct {
	// Path identifies the file: its absolute path, or "stdin:<hash>" for
	// standard input.
	Path   string
	Hash   string // sha256 of the content, hex
	Size   int64
	Format string
}

// Summary counts what Paths did.
type Summary struct {
	Files     int // files decoded
	Unchanged int // recognised files skipped because the sink already has them
	Skipped   int // files met in a directory walk that are in no trace format
	Traces    int // traces emitted and taken by the sink
	Refused   int // traces the sink refused (see ErrRefused), each also an error
	Errors    int // issues of severity Error
	Notices   int
	// SkippedFiles lists the walked files in no known format.
	SkippedFiles []string
	// UnchangedFiles lists the keys (FileInfo.Path) of the recognised files
	// the sink already had.
	UnchangedFiles []string
}

// Options tunes Paths.
type Options struct {
	// Report receives every issue as it is found.
	Report func(Issue)
	// Stdin is read for the path "-"; os.Stdin when nil.
	Stdin io.Reader
}

// Paths ingests files and directories (recursively; hidden directories are
// skipped) and "-" for standard input. Each file's format is sniffed from
// its content. A file named explicitly that is in no known format is an
// error; one met in a directory walk is counted and skipped, since trace
// directories hold other files too.
func Paths(ctx context.Context, paths []string, sink Sink, opts Options) (Summary, error) {
	w := &walker{sink: sink, opts: opts, zero: newZeroDirs()}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return w.sum, err
		}
		if p == "-" {
			if err := w.stdin(ctx); err != nil {
				return w.sum, err
			}
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			w.report(Issue{Path: p, Severity: Error, Message: "cannot read: " + errText(err)})
			continue
		}
		if !info.IsDir() {
			if err := w.file(ctx, p, p, true); err != nil {
				return w.sum, err
			}
			continue
		}
		if err := w.dir(ctx, p); err != nil {
			return w.sum, err
		}
	}
	return w.sum, nil
}

type walker struct {
	sink Sink
	opts Options
	sum  Summary
	zero *zeroDirs
}

func (w *walker) report(i Issue) {
	if i.Severity == Error {
		w.sum.Errors++
	} else {
		w.sum.Notices++
	}
	if w.opts.Report != nil {
		w.opts.Report(i)
	}
}

func (w *walker) dir(ctx context.Context, root string) error {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			w.report(Issue{Path: p, Severity: Error, Message: "cannot read: " + errText(err)})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, p := range files {
		if err := w.file(ctx, p, p, false); err != nil {
			return err
		}
	}
	return nil
}

// stdin spools standard input to a temporary file, so that it is hashed and
// decoded like any file without being held in memory.
func (w *walker) stdin(ctx context.Context) error {
	in := w.opts.Stdin
	if in == nil {
		in = os.Stdin
	}
	tmp, err := os.CreateTemp("", "faultline-stdin-*")
	if err != nil {
		return fmt.Errorf("spooling standard input: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := io.Copy(tmp, in); err != nil {
		return fmt.Errorf("reading standard input: %w", err)
	}
	return w.file(ctx, tmp.Name(), "<stdin>", true)
}

// file ingests one file. display is the name used in reports and stored as
// the trace source.
func (w *walker) file(ctx context.Context, path, display string, explicit bool) error {
	f, err := os.Open(path)
	if err != nil {
		w.report(Issue{Path: display, Severity: Error, Message: "cannot read: " + errText(err)})
		return nil
	}
	defer f.Close()
	head, compressed, err := readHead(f)
	if err != nil {
		w.report(Issue{Path: display, Severity: Error, Message: "cannot read: " + errText(err)})
		return nil
	}
	format, why := sniff(head)
	if format == nil {
		if explicit {
			w.report(Issue{Path: display, Severity: Error, Message: why})
		} else {
			w.sum.Skipped++
			w.sum.SkippedFiles = append(w.sum.SkippedFiles, display)
		}
		return nil
	}
	// The file is known by the hash of its bytes as stored, compressed or not.
	h := sha256.New()
	var size int64
	err = rewind(f)
	if err == nil {
		size, err = io.Copy(h, f)
	}
	if err != nil {
		w.report(Issue{Path: display, Severity: Error, Message: "cannot read: " + errText(err)})
		return nil
	}
	info := FileInfo{Path: display, Hash: hex.EncodeToString(h.Sum(nil)), Size: size, Format: format.Name()}
	if path == display {
		if abs, err := filepath.Abs(path); err == nil {
			info.Path = abs
		}
	} else {
		info.Path = "stdin:" + info.Hash
	}
	fs, err := w.sink.File(ctx, info)
	if err != nil {
		return fmt.Errorf("%s: %w", display, err)
	}
	if fs == nil {
		w.sum.Unchanged++
		w.sum.UnchangedFiles = append(w.sum.UnchangedFiles, info.Path)
		return nil
	}
	r, err := content(f, compressed)
	if err != nil {
		return errors.Join(fmt.Errorf("%s: %w", display, err), fs.Close(ctx, FileResult{Err: err}))
	}
	if compressed {
		r = &brokenStream{r: r, report: func(err error) {
			w.report(Issue{Path: display, Severity: Error, Message: "the gzip stream is broken (" + err.Error() + "); what came before it is read"})
		}}
	}
	errorsBefore := w.sum.Errors
	in := &Input{Path: display, R: r, report: w.report}
	w.sum.Files++
	decodeErr := format.Decode(ctx, in, func(t *trace.Trace) error {
		if t.Format == "codex" && path == display {
			w.zero.annotate(in, path, t)
		}
		err := fs.Trace(ctx, t)
		if errors.Is(err, ErrRefused) {
			// One trace declined; the rest of the file is still read.
			w.sum.Refused++
			w.report(Issue{Path: display, Severity: Error, Message: err.Error()})
			return nil
		}
		w.sum.Traces++
		return err
	})
	if decodeErr != nil && ctx.Err() == nil {
		w.report(Issue{Path: display, Severity: Error, Message: "decoding stopped: " + decodeErr.Error()})
	}
	if closeErr := fs.Close(ctx, FileResult{Err: decodeErr, Errors: w.sum.Errors - errorsBefore}); closeErr != nil {
		return fmt.Errorf("%s: %w", display, closeErr)
	}
	return ctx.Err()
}

// gzipMagic starts every gzip stream. Traces are often kept compressed
// (rollouts.jsonl.gz, a collector's file export with gzip on): any format is
// read through it, and sniffed on what it holds.
var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// readHead reads the first SniffSize bytes of a file's content, through
// its gzip compression when it has one.
func readHead(f *os.File) (head []byte, compressed bool, err error) {
	head = make([]byte, SniffSize)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	head = head[:n]
	if !bytes.HasPrefix(head, gzipMagic) {
		return head, false, nil
	}
	r, err := content(f, true)
	if err != nil {
		return nil, true, err
	}
	head = make([]byte, SniffSize)
	n, err = io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, true, fmt.Errorf("gzip: %w", err)
	}
	return head[:n], true, nil
}

// content is a file's content from its start: the file, or the stream its
// gzip compression holds (several concatenated members read as one).
func content(f *os.File, compressed bool) (io.Reader, error) {
	if err := rewind(f); err != nil {
		return nil, err
	}
	if !compressed {
		return f, nil
	}
	gz, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return gz, nil
}

// brokenStream ends a gzip stream that is cut short or corrupt as if the
// file ended there, once the break is reported: the formats then treat the
// cut as they treat a truncated file, keeping every record before it.
type brokenStream struct {
	r      io.Reader
	report func(error)
}

func (b *brokenStream) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.report(err)
		b.r = bytes.NewReader(nil)
		return n, io.EOF
	}
	return n, err
}

func rewind(f *os.File) error {
	_, err := f.Seek(0, io.SeekStart)
	return err
}

// sniff picks the format of a file from its first bytes, or says why none fits.
func sniff(head []byte) (Format, string) {
	if len(bytes.TrimSpace(head)) == 0 {
		return nil, "empty file"
	}
	// Binary formats (OTLP protobuf) are sniffed before binary content is
	// turned away.
	if f, ok := Detect(head); ok {
		return f, ""
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return nil, "binary content, not a trace format"
	}
	if !utf8.Valid(head[:max(0, len(head)-utf8.UTFMax)]) {
		return nil, "not UTF-8 text, not a trace format"
	}
	return nil, "unrecognised format (not " + formatNames() + ")"
}

func formatNames() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = f.Name()
	}
	return strings.Join(names, ", ")
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:6])
}

// ReadAll reads paths as Paths does and returns every trace in memory, in
// the order read. It suits tests and tools over small corpora; anything
// large belongs in a store.
func ReadAll(ctx context.Context, paths []string, opts Options) ([]*trace.Trace, Summary, error) {
	m := &memory{}
	sum, err := Paths(ctx, paths, m, opts)
	return m.traces, sum, err
}

// memory is the Sink of ReadAll.
type memory struct{ traces []*trace.Trace }

func (m *memory) File(context.Context, FileInfo) (FileSink, error) { return m, nil }
func (m *memory) Close(context.Context, FileResult) error          { return nil }
func (m *memory) Trace(_ context.Context, t *trace.Trace) error {
	m.traces = append(m.traces, t)
	return nil
}
