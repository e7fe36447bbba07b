package receive

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/faultline/faultline/ingest/otel"
)

// spool is durable mode's write-ahead log: every accepted request is
// appended to it and synced to disk before the request is answered, and
// an entry is marked done once each trace it holds spans of is stored (or
// known to need no storing). On start, the entries not done are replayed;
// merging makes that idempotent (a trace stored whole gains nothing).
//
// The spool is a directory of segment files, each a sequence of records:
// length (4 bytes, of what follows the checksum), CRC-32C (4 bytes), kind
// (1 byte), payload. An entry's payload is its id (8 bytes), the request's
// encoding (1 byte) and its body, decompressed; a done record's is the ids
// of the entries done. Done records are not synced: one lost replays an
// entry whose traces are stored, which adds nothing. A segment is written
// up to segmentBytes, then a new one is begun; segments are deleted oldest
// first, once every entry in them is done. A record cut short (a crash in
// mid-write, before it was acknowledged) ends its segment.
type spool struct {
	dir string
	log *slog.Logger

	mu      sync.Mutex
	cur     *os.File // the segment appended to; nil until the first append
	curSeq  uint64
	nextSeq uint64
	nextID  uint64
	entries map[uint64]*spoolEntry // entries not done
	segs    map[uint64]*segment    // segments on disk
	err     error                  // a failed write, after which nothing is appended
}

type spoolEntry struct {
	seg     uint64
	pending int // traces it holds spans of that are not stored
}

type segment struct {
	size int64
	live int // entries not done
}

const (
	recEntry     = 1
	recDone      = 2
	segmentBytes = 64 << 20
	spoolSuffix  = ".spool"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// openSpool opens the spool in dir, creating it.
func openSpool(dir string, log *slog.Logger) (*spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sp := &spool{dir: dir, log: log, entries: map[uint64]*spoolEntry{}, segs: map[uint64]*segment{}, nextSeq: 1, nextID: 1}
	seqs, err := sp.segments()
	if err != nil {
		return nil, err
	}
	for _, seq := range seqs {
		info, err := os.Stat(sp.path(seq))
		if err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
		sp.segs[seq] = &segment{size: info.Size()}
		sp.nextSeq = max(sp.nextSeq, seq+1)
	}
	return sp, nil
}

func (sp *spool) path(seq uint64) string {
	return filepath.Join(sp.dir, fmt.Sprintf("%016x%s", seq, spoolSuffix))
}

// segments lists the segment files' numbers, oldest first.
func (sp *spool) segments() ([]uint64, error) {
	des, err := os.ReadDir(sp.dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var seqs []uint64
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), spoolSuffix)
		if !ok {
			continue
		}
		if seq, err := strconv.ParseUint(name, 16, 64); err == nil {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	return seqs, nil
}

// replay calls fn with each entry not done, oldest first; fn returns how
// many traces the entry holds spans of that are not stored (0: the entry
// is done).
func (sp *spool) replay(fn func(id uint64, enc encoding, body []byte) int) error {
	done := map[uint64]bool{}
	seqs := slices.Sorted(func(yield func(uint64) bool) {
		for seq := range sp.segs {
			if !yield(seq) {
				return
			}
		}
	})
	for _, seq := range seqs {
		err := sp.read(seq, func(kind byte, payload []byte) {
			if kind == recDone {
				for p := payload; len(p) >= 8; p = p[8:] {
					done[binary.BigEndian.Uint64(p)] = true
				}
			}
		})
		if err != nil {
			return err
		}
	}
	for _, seq := range seqs {
		err := sp.read(seq, func(kind byte, payload []byte) {
			if kind != recEntry || len(payload) < 9 {
				return
			}
			id := binary.BigEndian.Uint64(payload)
			sp.nextID = max(sp.nextID, id+1)
			if done[id] {
				return
			}
			if n := fn(id, encoding(payload[8]), payload[9:]); n > 0 {
				sp.entries[id] = &spoolEntry{seg: seq, pending: n}
				sp.segs[seq].live++
			}
		})
		if err != nil {
			return err
		}
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.collect()
	return nil
}

// read calls fn with each record of a segment, up to the first one cut
// short or damaged.
func (sp *spool) read(seq uint64, fn func(kind byte, payload []byte)) error {
	f, err := os.Open(sp.path(seq))
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var head [8]byte
	for off := int64(0); ; {
		if _, err := io.ReadFull(br, head[:]); err != nil {
			if err != io.EOF {
				sp.log.Warn("spool segment ends in a record cut short; the rest is ignored", "segment", sp.path(seq), "offset", off)
			}
			return nil
		}
		n := binary.BigEndian.Uint32(head[:4])
		if n == 0 || int64(n) > sp.segs[seq].size-off-8 {
			sp.log.Warn("spool segment ends in a record cut short; the rest is ignored", "segment", sp.path(seq), "offset", off)
			return nil
		}
		rec := make([]byte, n)
		if _, err := io.ReadFull(br, rec); err != nil || crc32.Checksum(rec, crcTable) != binary.BigEndian.Uint32(head[4:]) {
			sp.log.Warn("spool segment has a damaged record; the rest is ignored", "segment", sp.path(seq), "offset", off)
			return nil
		}
		fn(rec[0], rec[1:])
		off += 8 + int64(n)
	}
}

// record frames a record.
func record(kind byte, parts ...[]byte) []byte {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	rec := make([]byte, 8, 8+n)
	rec = append(rec, kind)
	for _, p := range parts {
		rec = append(rec, p...)
	}
	binary.BigEndian.PutUint32(rec[:4], uint32(n))
	binary.BigEndian.PutUint32(rec[4:8], crc32.Checksum(rec[8:], crcTable))
	return rec
}

// append writes a request to the spool and syncs it, as an entry holding
// spans of traces traces; it returns the entry's id.
func (sp *spool) append(enc encoding, body []byte, traces int) (uint64, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.err != nil {
		return 0, sp.err
	}
	if sp.cur == nil || sp.segs[sp.curSeq].size >= segmentBytes {
		if err := sp.rotate(); err != nil {
			return 0, err
		}
	}
	id := sp.nextID
	var head [9]byte
	binary.BigEndian.PutUint64(head[:8], id)
	head[8] = byte(enc)
	rec := record(recEntry, head[:], body)
	seg := sp.segs[sp.curSeq]
	if _, err := sp.cur.Write(rec); err != nil {
		sp.fail(err)
		return 0, sp.err
	}
	seg.size += int64(len(rec))
	if err := sp.cur.Sync(); err != nil {
		sp.fail(err)
		return 0, sp.err
	}
	sp.nextID++
	sp.entries[id] = &spoolEntry{seg: sp.curSeq, pending: traces}
	seg.live++
	return id, nil
}

// fail stops appending after a write that may have left a partial record.
func (sp *spool) fail(err error) {
	sp.err = fmt.Errorf("spool %s: %w", sp.dir, err)
}

// rotate begins a new segment; sp.mu is held.
func (sp *spool) rotate() error {
	if sp.cur != nil {
		if err := sp.cur.Close(); err != nil {
			sp.fail(err)
			return sp.err
		}
		sp.cur = nil
		sp.collect()
	}
	seq := sp.nextSeq
	f, err := os.OpenFile(sp.path(seq), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		sp.fail(err)
		return sp.err
	}
	// The new file's name is durable once its directory is synced.
	if d, err := os.Open(sp.dir); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			f.Close()
			sp.fail(err)
			return sp.err
		}
	}
	sp.cur, sp.curSeq, sp.nextSeq = f, seq, seq+1
	sp.segs[seq] = &segment{}
	return nil
}

// done marks one trace of each entry stored; entries with no trace left
// are done, and segments with no entry left are deleted.
func (sp *spool) done(entries []uint64) {
	if len(entries) == 0 {
		return
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	var ids []byte
	for _, id := range entries {
		e := sp.entries[id]
		if e == nil {
			continue
		}
		if e.pending--; e.pending > 0 {
			continue
		}
		delete(sp.entries, id)
		sp.segs[e.seg].live--
		ids = binary.BigEndian.AppendUint64(ids, id)
	}
	if len(ids) == 0 {
		return
	}
	if sp.cur == nil && sp.err == nil {
		sp.rotate()
	}
	if sp.cur != nil && sp.err == nil {
		rec := record(recDone, ids)
		if _, err := sp.cur.Write(rec); err != nil {
			sp.fail(err)
		} else {
			sp.segs[sp.curSeq].size += int64(len(rec))
		}
	}
	sp.collect()
}

// collect deletes the oldest segments while every entry in them is done,
// but not the one appended to; sp.mu is held.
func (sp *spool) collect() {
	seqs := slices.Sorted(func(yield func(uint64) bool) {
		for seq := range sp.segs {
			if !yield(seq) {
				return
			}
		}
	})
	for _, seq := range seqs {
		if sp.segs[seq].live > 0 || (sp.cur != nil && seq == sp.curSeq) {
			return
		}
		if err := os.Remove(sp.path(seq)); err != nil && !errors.Is(err, os.ErrNotExist) {
			sp.log.Warn("spool: removing a segment whose entries are all stored", "err", err)
			return
		}
		delete(sp.segs, seq)
	}
}

// size is the spool's size on disk.
func (sp *spool) size() int64 {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	var n int64
	for _, s := range sp.segs {
		n += s.size
	}
	return n
}

// pending counts the entries not done.
func (sp *spool) pending() int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return len(sp.entries)
}

// close closes the segment appended to, deleting the spool's segments when
// every entry is done.
func (sp *spool) close() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.cur == nil {
		return nil
	}
	err := sp.cur.Close()
	sp.cur = nil
	sp.collect()
	return err
}

// spoolRequest writes an accepted request to the spool, then lets the
// traces it gave spans to be handed on (see accept's writing), each holding
// the entry until it is stored.
func (r *Receiver) spoolRequest(enc encoding, body []byte, traces []pcommon.TraceID) error {
	id, err := r.spool.append(enc, body, len(traces))
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, tid := range traces {
		ot := r.open[tid]
		ot.writing--
		if err == nil {
			ot.entries = append(ot.entries, id)
		}
	}
	return err
}

// replay feeds the spool's entries not done to the open traces, as the
// requests were accepted before the receiver stopped, before the spool is
// used by anything else. Traces whose root
// arrived are handed to the store at once (late spans merge); the others
// wait for IdleTimeout from now.
func (r *Receiver) replay(sp *spool) error {
	start := time.Now()
	requests := 0
	err := sp.replay(func(id uint64, enc encoding, body []byte) int {
		td, err := enc.decode(body)
		if err != nil {
			r.cfg.Log.Warn("spool entry is not OTLP traces; skipped", "err", err)
			return 0
		}
		requests++
		spans := otel.Spans(td, func(string, error) {})
		a := r.accept(spans, enc.format(), start, nil, false)
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, tid := range a.traces {
			ot := r.open[tid]
			ot.entries = append(ot.entries, id)
		}
		return len(a.traces)
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.stats.Replayed = int64(requests)
	for _, ot := range r.open {
		if ot.root || ot.late {
			ot.last = time.Time{} // complete as far as is known: stored at the first flush
		}
	}
	traces := len(r.open)
	r.mu.Unlock()
	if requests > 0 {
		r.cfg.Log.Info("replayed the spool", "requests", requests, "traces", traces, "took", time.Since(start).String())
	}
	return nil
}
