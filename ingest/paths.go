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
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
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
	// Skipped counts the files met in a directory walk that are in no
	// trace format, and those not read at all, each reported with why (a
	// named pipe, a link to a directory, a second link to a file).
	Skipped int
	Traces  int // traces emitted and taken by the sink
	Refused int // traces the sink refused (see ErrRefused), each also an error
	Errors  int // issues of severity Error
	Notices int
	// SkippedFiles lists the walked files Skipped counts, unless
	// Options.Skipped takes them.
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
	// TextLimit is the most of one text a trace keeps, in bytes: a longer
	// one keeps its head and tail around a mark of the cut, and the trace's
	// meta its size (see CutTextsMeta). 0 is DefaultTextLimit; negative
	// keeps every text whole, at the cost of memory about eleven times the
	// longest.
	TextLimit int
	// Skipped, when set, is called with each walked file that Summary.Skipped
	// counts, in the walk's order and on the goroutine that called Paths,
	// and Summary.SkippedFiles stays empty: a walk of many run directories
	// would otherwise hold the path of every file beside the traces (a
	// prompt, an answer file) to its end.
	Skipped func(path string)
	// Workers is how many files of a directory walk are read at once (1
	// when 0). With more than one, the sink must be safe for concurrent
	// use, a file's traces still reach it in order from one goroutine, and
	// issues are reported, and counted, in the walk's order all the same.
	// Files smaller than SniffSize, which one read holds whole, are read up
	// to smallFilesPerWorker times as many at once (see walked).
	Workers int
}

// Paths ingests files and directories (recursively; hidden directories are
// skipped) and "-" for standard input. Each file's format is sniffed from
// its content. A file named explicitly that is in no known format is an
// error; one met in a directory walk is counted and skipped, since trace
// directories hold other files too.
//
// Symbolic links are followed to files, in a walk too (git-annex and DVC
// keep data as links into their stores), but not to directories in a walk,
// so that a walk cannot loop; a link that leads nowhere is an error. A
// named pipe named explicitly (a shell's <(zcat runs.jsonl.gz) is one) is
// read as a stream, as standard input is, once a writer opens it; in a
// walk it is skipped, since nothing may ever write to it. Anything skipped
// is reported with why.
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
			w.report(Issue{Path: p, Severity: Error, Message: "cannot read: " + linkProblem(p, err)})
			continue
		}
		switch mode := info.Mode(); {
		case mode.IsDir():
			err = w.dir(ctx, p)
		case mode.IsRegular():
			err = w.file(ctx, p, p, true, "")
		case mode&fs.ModeNamedPipe != 0:
			err = w.pipe(ctx, p)
		default:
			w.report(Issue{Path: p, Severity: Error, Message: "not read: " + special(mode) + ", not a file"})
		}
		if err != nil {
			return w.sum, err
		}
	}
	return w.sum, nil
}

// special names the kind of a file that is neither a regular file nor a
// directory.
func special(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "an irregular file"
}

// linkProblem words why a path that may be a symbolic link cannot be
// read: a link to nothing is a git-annex file whose content is not here,
// more often than not.
func linkProblem(p string, err error) string {
	target, lerr := os.Readlink(p)
	switch {
	case lerr != nil:
		return errText(err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("a symbolic link to %s, which does not exist (content not fetched, as git-annex and DVC leave it?)", target)
	}
	return fmt.Sprintf("a symbolic link to %s: %s", target, errText(err))
}

type walker struct {
	sink Sink
	opts Options
	zero *zeroDirs
	// large, in a walk of several workers, holds a place for each file read
	// at once that is not small (see walked).
	large chan struct{}
	// mu guards sum and the reporting of issues: a file's decoder and the
	// goroutine storing its traces (see handoff) both count and report.
	mu  sync.Mutex
	sum Summary
}

func (w *walker) report(i Issue) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reportLocked(i)
}

// reportLocked reports an issue; the caller holds w.mu.
func (w *walker) reportLocked(i Issue) {
	if i.Severity == Error {
		w.sum.Errors++
	} else {
		w.sum.Notices++
	}
	if w.opts.Report != nil {
		w.opts.Report(i)
	}
}

// skip counts a walked file not read, and reports why.
func (w *walker) skip(p, why string) {
	w.skipped(p)
	w.report(Issue{Path: p, Severity: Notice, Message: "skipped: " + why})
}

// skipped counts a walked file that is not read, and lists it or hands it
// to Options.Skipped.
func (w *walker) skipped(p string) {
	w.sum.Skipped++
	if w.opts.Skipped != nil {
		w.opts.Skipped(p)
		return
	}
	w.sum.SkippedFiles = append(w.sum.SkippedFiles, p)
}

// dir reads the files under root, in the order a walk meets them (each
// directory's entries by name), then those reached through symbolic links.
// The walk goes on in its own goroutine while the files it has met are
// read: on many small runs, listing the directories is a second or more
// of a walk that starts nothing until it ends.
func (w *walker) dir(ctx context.Context, root string) error {
	if info, err := os.Lstat(root); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		// A link to a directory, named: walk what it leads to (a walk
		// takes its root as it is, a link).
		root += string(filepath.Separator)
	}
	walkCtx, stop := context.WithCancel(ctx)
	defer stop()
	met := make(chan walkStep, 256)
	go func() {
		defer close(met)
		w.list(walkCtx, root, met)
	}()
	err := w.walked(ctx, met)
	stop()
	for range met { // what the walk met after a file stopped it
	}
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// walkStep is one thing a directory walk met, in its order: a file to read,
// or (path empty) what it reports of an entry it does not read.
type walkStep struct {
	path string
	met  walkedFile
}

// list walks root, sending each regular file it meets, then each symbolic
// link leading to a file not read already, and what it reports of the
// rest, until the walk ends or ctx is done.
func (w *walker) list(ctx context.Context, root string, out chan<- walkStep) {
	// The walk's problems are counted and reported by a walker of their
	// own, in their place among the files (see walkedFile).
	var problem walkedFile
	lw := &walker{opts: w.opts}
	lw.opts.Report = func(i Issue) { problem.issues = append(problem.issues, i) }
	lw.opts.Skipped = nil
	send := func(step walkStep) bool {
		select {
		case out <- step:
			return true
		case <-ctx.Done():
			return false
		}
	}
	flush := func() bool {
		if problem.issues == nil && lw.sum.Skipped == 0 {
			return true
		}
		problem.sum = lw.sum
		step := walkStep{met: problem}
		problem, lw.sum = walkedFile{}, Summary{}
		return send(step)
	}
	files := newWalkedFiles()
	var links []string
	sessions := &sessionCounter{z: w.zero, walk: filepath.Clean(root)}
	defer sessions.flush()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			sessions.skipped(p)
			lw.report(Issue{Path: p, Severity: Error, Message: "cannot read: " + errText(err)})
			if !flush() {
				return ctx.Err()
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch mode := d.Type(); {
		case d.IsDir():
			if p != root && strings.HasPrefix(d.Name(), ".") {
				sessions.skipped(p)
				return fs.SkipDir
			}
		case mode.IsRegular():
			files.add(p)
			sessions.file(p)
			if !send(walkStep{path: p}) {
				return ctx.Err()
			}
		case mode&fs.ModeSymlink != 0:
			links = append(links, p)
		default:
			lw.skip(p, special(mode)+", not a file (name it to read it)")
			if !flush() {
				return ctx.Err()
			}
		}
		return nil
	})
	if err != nil {
		return
	}
	linked := lw.links(root, files, links)
	if !flush() {
		return
	}
	for _, p := range linked {
		if !send(walkStep{path: p}) {
			return
		}
	}
}

// walked reads the files a walk meets, Options.Workers at a time: one
// file's decoding and detecting then goes on while another's traces are
// being written. Each file's issues and counts are held until the files
// before it are done, so that they come in the walk's order whatever
// finishes first. After a file that stops the walk (the sink failing,
// say), the files already started are finished and no more are.
func (w *walker) walked(ctx context.Context, met <-chan walkStep) error {
	if w.opts.Workers <= 1 {
		for step := range met {
			if step.path == "" {
				w.absorb(step.met)
			} else if err := w.file(ctx, step.path, step.path, false, ""); err != nil {
				return err
			}
		}
		return nil
	}
	// Files are started a few ahead of the one whose results come next,
	// Workers of them read at a time, or smallFilesPerWorker times as many
	// small ones: a file done early does not leave its worker idle while an
	// earlier, longer one finishes. What waits is only a file's issues and
	// counts.
	//
	// A small file (one read holds it whole) holds little memory, and many
	// of them in flight keep the cores decoding and running detectors while
	// the sink commits what it was given, which stops every file's next
	// write: on 2 cores and 5,000 small runs, 30 files at once rather than 3
	// (with a store that looks files up beside its writer) took a tenth less
	// time. A larger file takes one of Workers places besides (see file), so
	// that as many large traces as before are held at once.
	var pending []chan walkedFile
	running := make(chan struct{}, smallFilesPerWorker*w.opts.Workers)
	w.large = make(chan struct{}, w.opts.Workers)
	start := func(step walkStep) {
		ch := make(chan walkedFile, 1)
		pending = append(pending, ch)
		if step.path == "" {
			ch <- step.met
			return
		}
		go func() {
			running <- struct{}{}
			defer func() { <-running }()
			ch <- w.fileApart(ctx, step.path)
		}()
	}
	var stop error
	for walking := true; ; {
		for walking && stop == nil && len(pending) < 2*cap(running) {
			step, ok := <-met
			if !ok {
				walking = false
				break
			}
			start(step)
		}
		if len(pending) == 0 {
			return stop
		}
		r := <-pending[0]
		pending[0] = nil // kept to the end of the walk, the channels grew the peak heap by close to a KB a file
		pending = pending[1:]
		w.absorb(r)
		if stop == nil {
			stop = r.err
		}
	}
}

// smallFilesPerWorker is how many small files a walk reads at once for
// each of Options.Workers (see walked).
const smallFilesPerWorker = 10

// walkedFile is what reading one file of a walk came to.
type walkedFile struct {
	sum    Summary
	issues []Issue
	err    error
}

// fileApart reads a walked file as w.file does, keeping its issues and
// counts apart for absorb.
func (w *walker) fileApart(ctx context.Context, p string) walkedFile {
	var r walkedFile
	fw := &walker{sink: w.sink, opts: w.opts, zero: w.zero, large: w.large}
	fw.opts.Report = func(i Issue) { r.issues = append(r.issues, i) }
	fw.opts.Skipped = nil // listed, for absorb to hand on in the walk's order
	r.err = fw.file(ctx, p, p, false, "")
	r.sum = fw.sum
	return r
}

// absorb reports a walked file's issues and adds its counts.
func (w *walker) absorb(r walkedFile) {
	if w.opts.Report != nil {
		for _, i := range r.issues {
			w.opts.Report(i)
		}
	}
	w.sum.Files += r.sum.Files
	w.sum.Unchanged += r.sum.Unchanged
	w.sum.Traces += r.sum.Traces
	w.sum.Refused += r.sum.Refused
	w.sum.Errors += r.sum.Errors
	w.sum.Notices += r.sum.Notices
	for _, p := range r.sum.SkippedFiles {
		w.skipped(p)
	}
	w.sum.UnchangedFiles = append(w.sum.UnchangedFiles, r.sum.UnchangedFiles...)
}

// walkedFiles are the files a walk met, known by a 64-bit hash of their
// path as walked rather than by the path: the list is kept to the end of
// the walk, for the symbolic links it may meet, and on many small runs the
// paths were most of what memory grew by per trace. Two paths of one hash
// (about one chance in 10^7 among a million files) would only make a link
// to the second be taken as leading to a file read already.
type walkedFiles struct {
	seed   maphash.Seed
	hashes []uint64
	sorted bool
}

func newWalkedFiles() *walkedFiles { return &walkedFiles{seed: maphash.MakeSeed()} }

func (f *walkedFiles) add(p string) {
	f.hashes = append(f.hashes, maphash.String(f.seed, p))
	f.sorted = false
}

func (f *walkedFiles) has(p string) bool {
	if !f.sorted {
		slices.Sort(f.hashes)
		f.sorted = true
	}
	_, found := slices.BinarySearch(f.hashes, maphash.String(f.seed, p))
	return found
}

// links returns the symbolic links met in a walk of root that lead to
// files, but for those leading to a file the walk reads already (under
// root, or through an earlier link): what git-annex and DVC keep as links
// is read once. A link to a directory is not followed, so that a walk
// cannot loop; one that leads nowhere is reported.
func (w *walker) links(root string, files *walkedFiles, links []string) []string {
	if len(links) == 0 {
		return nil
	}
	// A walked file's real path is the root's, resolved, and the path
	// under it: the walk followed no link to get there.
	realRoot, err := filepath.EvalSymlinks(root)
	if err == nil {
		realRoot, err = filepath.Abs(realRoot)
	}
	rootResolved := err == nil
	read := map[string]string{} // real path → the link it is read through
	sort.Strings(links)
	var out []string
	for _, p := range links {
		info, err := os.Stat(p)
		switch {
		case err != nil:
			w.report(Issue{Path: p, Severity: Error, Message: "cannot read: " + linkProblem(p, err)})
			continue
		case info.IsDir():
			w.skip(p, "a symbolic link to a directory, not followed in a walk (name it to read it)")
			continue
		case !info.Mode().IsRegular():
			w.skip(p, "a symbolic link to "+special(info.Mode())+", not a file (name it to read it)")
			continue
		}
		target, err := filepath.EvalSymlinks(p)
		if err == nil {
			target, err = filepath.Abs(target)
		}
		if err != nil {
			w.report(Issue{Path: p, Severity: Error, Message: "cannot read: " + linkProblem(p, err)})
			continue
		}
		if rootResolved {
			if rel, err := filepath.Rel(realRoot, target); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				if walked := filepath.Join(root, rel); files.has(walked) {
					w.skip(p, "a symbolic link to "+walked+", read there")
					continue
				}
			}
		}
		if first, ok := read[target]; ok {
			w.skip(p, "a symbolic link to "+first+", read there")
			continue
		}
		read[target] = p
		out = append(out, p)
	}
	return out
}

// stdin spools standard input to a temporary file, so that it is hashed and
// decoded like any file without being held in memory.
func (w *walker) stdin(ctx context.Context) error {
	in := w.opts.Stdin
	if in == nil {
		in = os.Stdin
	}
	return w.spool(ctx, in, "<stdin>", "stdin", "standard input")
}

// fifoNotice is how long a named pipe is waited for before saying so.
var fifoNotice = 2 * time.Second

// pipe reads a named pipe named explicitly as a stream, once a writer
// opens it: spooled, as standard input is. Waiting for the writer is
// reported, and the context's end stops it.
func (w *walker) pipe(ctx context.Context, p string) error {
	f, err := openFIFO(ctx, p, func() {
		w.report(Issue{Path: p, Severity: Notice, Message: "a named pipe: waiting for something to write to it, to read it as a stream (interrupt to stop)"})
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.report(Issue{Path: p, Severity: Error, Message: "cannot read: " + errText(err)})
		return nil
	}
	defer f.Close()
	// A read blocked on the pipe ends with the context too.
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	defer stop()
	return w.spool(ctx, f, p, "pipe", p)
}

// openFIFO opens a named pipe for reading, which blocks until a writer
// opens it: in the background, so that waiting can be reported (by
// waiting, after fifoNotice) and cut short by the context.
func openFIFO(ctx context.Context, p string, waiting func()) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(p)
		done <- opened{f, err}
	}()
	notice := time.NewTimer(fifoNotice)
	defer notice.Stop()
	for {
		select {
		case o := <-done:
			return o.f, o.err
		case <-notice.C:
			waiting()
		case <-ctx.Done():
			// Be the writer it waits for, so that it returns.
			unblockFIFO(p)
			go func() {
				if o := <-done; o.f != nil {
					o.f.Close()
				}
			}()
			return nil, ctx.Err()
		}
	}
}

// spool copies a stream to a temporary file, so that it is hashed and
// decoded like any file without being held in memory. key names the
// stream's kind in FileInfo.Path; what names it in reads errors.
func (w *walker) spool(ctx context.Context, in io.Reader, display, key, what string) error {
	tmp, err := os.CreateTemp("", "faultline-"+key+"-*")
	if err != nil {
		return fmt.Errorf("spooling %s: %w", what, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := io.Copy(tmp, in); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("reading %s: %w", what, err)
	}
	return w.file(ctx, tmp.Name(), display, true, key)
}

// file ingests one file. display is the name used in reports and stored as
// the trace source. stream, for a file spooled from a stream, names the
// stream's kind ("stdin", "pipe"): the file is then known by its content's
// hash, not its path.
func (w *walker) file(ctx context.Context, path, display string, explicit bool, stream string) error {
	f, err := os.Open(path)
	if err != nil {
		w.report(Issue{Path: display, Severity: Error, Message: "cannot read: " + errText(err)})
		return nil
	}
	defer f.Close()
	head, compressed, whole, err := readHead(f)
	if err != nil {
		w.report(Issue{Path: display, Severity: Error, Message: "cannot read: " + errText(err)})
		return nil
	}
	format, why := sniff(head)
	if format == nil {
		if explicit {
			w.report(Issue{Path: display, Severity: Error, Message: why})
		} else {
			w.skipped(display)
		}
		return nil
	}
	if !whole && w.large != nil {
		select {
		case w.large <- struct{}{}:
			defer func() { <-w.large }()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// The file is known by the hash of its bytes as stored, compressed or not.
	// A file the head holds whole is not read again, to hash it or to decode
	// it: most traces of many small files are (two reads saved of three).
	h := sha256.New()
	size := int64(len(head))
	if whole {
		h.Write(head)
	} else if err = rewind(f); err == nil {
		size, err = io.Copy(h, f)
	}
	if err != nil {
		w.report(Issue{Path: display, Severity: Error, Message: "cannot read: " + errText(err)})
		return nil
	}
	info := FileInfo{Path: display, Hash: hex.EncodeToString(h.Sum(nil)), Size: size, Format: format.Name()}
	if stream == "" {
		if abs, err := filepath.Abs(path); err == nil {
			info.Path = abs
		}
	} else {
		info.Path = stream + ":" + info.Hash
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
	var r io.Reader = bytes.NewReader(head)
	if !whole {
		if r, err = content(f, compressed); err != nil {
			return errors.Join(fmt.Errorf("%s: %w", display, err), fs.Close(ctx, FileResult{Err: err}))
		}
	}
	pos := &positionReader{}
	if compressed {
		r = &brokenStream{r: r, report: func(err error) {
			w.report(Issue{Path: display, Severity: Error, Message: fmt.Sprintf(
				"the gzip stream is broken (%v); what came before it is read (the break is after byte %d of its content, line %d)", err, pos.n, pos.lines+1)})
		}}
	}
	pos.r = r
	errorsBefore := w.sum.Errors
	in := &Input{Path: display, R: pos, report: w.report, limit: w.opts.TextLimit}
	if whole {
		in.size = len(head)
	}
	w.sum.Files++
	give := w.handoff(ctx, fs, display)
	decodeErr := format.Decode(ctx, in, func(t *trace.Trace) error {
		if t.Format == "codex" && stream == "" {
			w.zero.annotate(in, path, t)
		}
		return give.trace(t)
	})
	if err := give.wait(); decodeErr == nil {
		decodeErr = err
	}
	if decodeErr != nil && ctx.Err() == nil {
		w.report(pos.stopped(display, decodeErr))
	}
	if closeErr := fs.Close(ctx, FileResult{Err: decodeErr, Errors: w.sum.Errors - errorsBefore}); closeErr != nil {
		return fmt.Errorf("%s: %w", display, closeErr)
	}
	return ctx.Err()
}

// positionReader counts what is read of a file's content, so that
// decoding that stops can say where. The formats read it as the file;
// Inspect's archives are read in place, through r.
type positionReader struct {
	r     io.Reader
	n     int64 // bytes read
	lines int   // newlines read
}

func (p *positionReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	p.lines += bytes.Count(b[:n], []byte{'\n'})
	return n, err
}

// stopped is the issue of decoding stopped by err: where in the content
// it had read to (a read error happens there; the decoder's own stops,
// such as a store's failure, soon after what it was reading), or, for a
// file read in place, the error alone.
func (p *positionReader) stopped(display string, err error) Issue {
	msg := err.Error()
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		msg = "the file ends unexpectedly (" + msg + ")"
	}
	if p.n == 0 {
		return Issue{Path: display, Severity: Error, Message: "decoding stopped: " + msg}
	}
	return Issue{Path: display, Line: p.lines + 1, Severity: Error,
		Message: fmt.Sprintf("decoding stopped after byte %d: %s", p.n, msg)}
}

// gzipMagic starts every gzip stream. Traces are often kept compressed
// (rollouts.jsonl.gz, a collector's file export with gzip on): any format is
// read through it, and sniffed on what it holds.
var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// readHead reads the first SniffSize bytes of a file's content, through
// its gzip compression when it has one; whole says the head is the whole
// file, uncompressed.
func readHead(f *os.File) (head []byte, compressed, whole bool, err error) {
	// A small file gets a buffer of its size and one byte more, which the
	// read leaves unfilled when the file is whole, rather than SniffSize
	// bytes to clear (most files of a run directory are a few KB).
	size := SniffSize
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() < SniffSize {
		size = int(info.Size()) + 1
	}
	head = make([]byte, size)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, false, false, err
	}
	head = head[:n]
	if !bytes.HasPrefix(head, gzipMagic) {
		return head, false, n < size, nil
	}
	r, err := content(f, true)
	if err != nil {
		return nil, true, false, err
	}
	head = make([]byte, SniffSize)
	n, err = io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, true, false, fmt.Errorf("gzip: %w", err)
	}
	return head[:n], true, false, nil
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
