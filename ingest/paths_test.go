package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/itbench"
	"github.com/faultline/faultline/trace"
)

// memSink keeps what it receives, skipping files whose hash it has seen.
// It is safe for concurrent use.
type memSink struct {
	mu     sync.Mutex
	hashes map[string]string
	traces map[string]*trace.Trace
}

func newMemSink() *memSink {
	return &memSink{hashes: map[string]string{}, traces: map[string]*trace.Trace{}}
}

func (m *memSink) File(ctx context.Context, f FileInfo) (FileSink, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hashes[f.Path] == f.Hash {
		return nil, nil
	}
	return &memFile{m: m, info: f}, nil
}

type memFile struct {
	m    *memSink
	info FileInfo
}

func (f *memFile) Trace(ctx context.Context, t *trace.Trace) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	f.m.traces[t.ID] = t
	return nil
}

func (f *memFile) Close(ctx context.Context, r FileResult) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if r.Err == nil && r.Errors == 0 {
		f.m.hashes[f.info.Path] = f.info.Hash
	}
	return nil
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPathsBadInput(t *testing.T) {
	dir := t.TempDir()
	good := write(t, dir, "mixed/good.jsonl", codexSample)
	truncated := write(t, dir, "mixed/truncated.jsonl", codexSample[:len(codexSample)-40])
	binary := write(t, dir, "mixed/blob.bin", "\x00\x01\x02{\"type\":\"session_meta\"}")
	empty := write(t, dir, "mixed/empty.jsonl", "")
	write(t, dir, "mixed/notes.txt", "just some notes\n")
	write(t, dir, "mixed/.hidden/x.jsonl", codexSample)

	var issues []string
	sink := newMemSink()
	sum, err := Paths(context.Background(), []string{filepath.Join(dir, "mixed"), binary, empty, filepath.Join(dir, "missing")}, sink,
		Options{Report: func(i Issue) { issues = append(issues, i.Severity.String()+" "+i.String()) }})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(issues, "\n")
	for _, want := range []string{
		"error " + binary + ": binary content",
		"error " + empty + ": empty file",
		"error " + filepath.Join(dir, "missing") + ": cannot read",
		"error " + truncated + ":23: not a valid event",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("issues lack %q:\n%s", want, all)
		}
	}
	// good and truncated hold the same session id; both are decoded, the
	// truncated one keeps everything before its bad last line.
	if sum.Files != 2 || sum.Skipped != 3 || sum.Traces != 2 || sum.Errors != 4 {
		t.Errorf("summary = %+v", sum)
	}
	if len(sink.traces) != 1 || sink.traces["s1"] == nil {
		t.Errorf("traces = %v", sink.traces)
	}
	_ = good
}

func TestPathsSkipsUnchangedFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.jsonl", codexSample)
	sink := newMemSink()
	ctx := context.Background()
	if sum, _ := Paths(ctx, []string{dir}, sink, Options{}); sum.Files != 1 || sum.Unchanged != 0 {
		t.Fatalf("first: %+v", sum)
	}
	if sum, _ := Paths(ctx, []string{dir}, sink, Options{}); sum.Files != 0 || sum.Unchanged != 1 || len(sum.UnchangedFiles) != 1 || !filepath.IsAbs(sum.UnchangedFiles[0]) {
		t.Fatalf("second: %+v", sum)
	}
}

func TestPathsStdin(t *testing.T) {
	sink := newMemSink()
	sum, err := Paths(context.Background(), []string{"-"}, sink, Options{Stdin: strings.NewReader(codexSample)})
	if err != nil || sum.Traces != 1 {
		t.Fatalf("sum %+v err %v", sum, err)
	}
	if sink.traces["s1"].Source != "<stdin>" {
		t.Errorf("source = %q", sink.traces["s1"].Source)
	}
}

func TestZeroRunDirectory(t *testing.T) {
	dir := t.TempDir()
	answer := `{"entities":[{"name":"otel-demo/ConfigMap/flags","contributing_factor":true}]}`
	inner, _ := json.Marshal(map[string]string{"input": "*** Begin Patch\n*** Add File: agent_output.json\n+" + answer + "\n*** End Patch"})
	outer, _ := json.Marshal(string(inner))
	// The write counts only because its call succeeded.
	writer := strings.Replace(codexSample, `"arguments":"{\"input\":\"bad"`, `"arguments":`+string(outer), 1)
	writer = strings.Replace(writer, `"output":"failed to parse function arguments: EOF while parsing a string"`,
		`"output":"{\"output\":\"Success. Updated the following files:\\nA agent_output.json\\n\",\"metadata\":{\"exit_code\":0}}"`, 1)
	if writer == codexSample || !strings.Contains(writer, "Success. Updated") {
		t.Fatal("sample changed; fix the test")
	}
	// One run directory with one session: the answer is attached.
	write(t, dir, "7/2/agent_output.json", answer)
	write(t, dir, "7/2/sessions/2026/01/01/rollout-a.jsonl", codexSample)
	// One with two sessions: only the one whose last write matches gets it.
	write(t, dir, "8/1/agent_output.json", answer)
	write(t, dir, "8/1/sessions/2026/01/01/rollout-a.jsonl", strings.Replace(codexSample, `"id":"s1"`, `"id":"other"`, 1))
	write(t, dir, "8/1/sessions/2026/01/01/rollout-b.jsonl", strings.Replace(writer, `"id":"s1"`, `"id":"writer"`, 1))
	// A session that only prints the file (a remediation run reading the
	// diagnosis) is not its author, even though it shows the same content.
	catArgs, _ := json.Marshal(`{"command":["cat","agent_output.json"]}`)
	catOut, _ := json.Marshal(struct {
		Output   string         `json:"output"`
		Metadata map[string]int `json:"metadata"`
	}{answer, map[string]int{"exit_code": 0}})
	catOutQuoted, _ := json.Marshal(string(catOut))
	reader := strings.Replace(codexSample, `"arguments":"{\"command\":[\"ls\",\"alerts\"]}"`, `"arguments":`+string(catArgs), 1)
	reader = strings.Replace(reader, `"output":"{\"output\":\"a.json\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"`, `"output":`+string(catOutQuoted), 1)
	if !strings.Contains(reader, "cat") || !strings.Contains(reader, `flags`) {
		t.Fatal("sample changed; fix the test")
	}
	write(t, dir, "8/1/sessions/2026/01/01/rollout-c.jsonl", strings.Replace(reader, `"id":"s1"`, `"id":"reader"`, 1))
	sink := newMemSink()
	var issues []string
	if _, err := Paths(context.Background(), []string{dir}, sink, Options{Report: func(i Issue) { issues = append(issues, i.String()) }}); err != nil {
		t.Fatal(err)
	}
	s1 := sink.traces["s1"]
	if s1 == nil || s1.Diagnosis == nil || s1.Scenario != "7" || s1.Trial != "2" || s1.System != "itbench-zero" {
		t.Fatalf("single-session run: %+v", s1)
	}
	if sink.traces["other"].Diagnosis != nil {
		t.Error("diagnosis attached to a session that did not write it")
	}
	if w := sink.traces["writer"]; w.Diagnosis == nil || !strings.HasSuffix(w.Diagnosis.Source, filepath.Join("8", "1", "agent_output.json")) {
		t.Errorf("writer session not given its diagnosis: %+v (issues %v)", w.Diagnosis, issues)
	}
	if r := sink.traces["reader"]; r == nil || r.Diagnosis != nil {
		t.Errorf("a session that only read the file was given it: %+v", r)
	}
}

func TestPublishedTrajectoriesLayout(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join("zero", "gpt-oss-120b", "sre", "Scenario-27", "run_3")
	write(t, dir, filepath.Join(run, "session.jsonl"), codexSample)
	write(t, dir, filepath.Join(run, "agent_output.json"), `{"entities":[]}`)
	write(t, dir, filepath.Join(run, "judge_output.json"), `{"flat_scores":{"root_cause_entity_precision":0.5,"root_cause_entity_recall":1.0,"root_cause_entity_k@1_recall":0,"other":3}}`)
	bad := filepath.Join("zero", "m", "sre", "Scenario-4", "1")
	write(t, dir, filepath.Join(bad, "session.jsonl"), strings.Replace(codexSample, `"id":"s1"`, `"id":"s4"`, 1))
	write(t, dir, filepath.Join(bad, "judge_output.json"), `{"flat_scores":{}}`)
	sink := newMemSink()
	var issues []string
	Paths(context.Background(), []string{dir}, sink, Options{Report: func(i Issue) { issues = append(issues, i.String()) }})
	tr := sink.traces["s1"]
	if tr == nil || tr.Scenario != "27" || tr.Trial != "run_3" || tr.Diagnosis == nil {
		t.Fatalf("trace = %+v", tr)
	}
	if len(tr.Outcomes) != 1 || tr.Outcomes[0].Source != itbench.OfficialSource || *tr.Outcomes[0].Score != 1 || !*tr.Outcomes[0].Success ||
		!strings.Contains(tr.Outcomes[0].Detail, `"root_cause_entity_k@1_recall":0`) || strings.Contains(tr.Outcomes[0].Detail, "other") {
		t.Errorf("official outcome = %+v", tr.Outcomes)
	}
	if s4 := sink.traces["s4"]; s4 == nil || s4.Scenario != "4" || len(s4.Outcomes) != 0 {
		t.Errorf("s4 = %+v", s4)
	}
	if !strings.Contains(strings.Join(issues, "\n"), "judge_output.json: no flat_scores.root_cause_entity_recall") {
		t.Errorf("issues = %v", issues)
	}
}

func TestReadAll(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.jsonl", codexSample)
	write(t, dir, "b.jsonl", strings.Replace(codexSample, `"id":"s1"`, `"id":"s2"`, 1))
	traces, sum, err := ReadAll(context.Background(), []string{dir}, Options{})
	if err != nil || sum.Files != 2 || len(traces) != 2 || traces[0].ID != "s1" || traces[1].ID != "s2" {
		t.Fatalf("traces %d, summary %+v, err %v", len(traces), sum, err)
	}
}

// A walk read several files at a time stores the same traces and reports
// the same issues, in the same order, with the same counts, as one read a
// file at a time.
func TestPathsWorkersReadAsOne(t *testing.T) {
	dir := t.TempDir()
	for i := range 30 {
		session := strings.ReplaceAll(codexSample, `"id":"s1"`, fmt.Sprintf(`"id":"s%02d"`, i))
		switch i % 5 {
		case 1:
			session = session[:len(session)-40] // a bad last line
		case 2:
			write(t, dir, fmt.Sprintf("run%02d/notes.txt", i), "notes\n")
		case 3:
			write(t, dir, fmt.Sprintf("run%02d/empty.jsonl", i), "")
		}
		write(t, dir, fmt.Sprintf("run%02d/sessions/rollout.jsonl", i), session)
	}
	type result struct {
		sum    Summary
		issues []string
		traces []string
	}
	read := func(workers int) result {
		var r result
		sink := newMemSink()
		sum, err := Paths(context.Background(), []string{dir}, sink, Options{
			Workers: workers,
			Report:  func(i Issue) { r.issues = append(r.issues, i.Severity.String()+" "+i.String()) },
		})
		if err != nil {
			t.Fatal(err)
		}
		r.sum = sum
		for id := range sink.traces {
			r.traces = append(r.traces, id)
		}
		slices.Sort(r.traces)
		return r
	}
	one := read(1)
	if one.sum.Traces != 30 || one.sum.Errors == 0 || one.sum.Skipped == 0 {
		t.Fatalf("the walk read one at a time: %+v", one.sum)
	}
	for _, workers := range []int{2, 4} {
		if got := read(workers); !reflect.DeepEqual(got, one) {
			t.Errorf("%d workers:\n%+v\none at a time:\n%+v", workers, got, one)
		}
	}
	// Handed to Options.Skipped, the skipped files come in the order they
	// were listed, and are not listed.
	for _, workers := range []int{1, 2, 4} {
		var handed []string
		sum, err := Paths(context.Background(), []string{dir}, newMemSink(), Options{Workers: workers, Skipped: func(p string) { handed = append(handed, p) }})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(handed, one.sum.SkippedFiles) || sum.SkippedFiles != nil || sum.Skipped != one.sum.Skipped {
			t.Errorf("%d workers: handed %q (listed %q, %d skipped); one at a time listed %q (%d)",
				workers, handed, sum.SkippedFiles, sum.Skipped, one.sum.SkippedFiles, one.sum.Skipped)
		}
	}
}

// readHead gives a small file whole, and says so; of a larger or a
// compressed one, the first SniffSize bytes of its content.
func TestReadHead(t *testing.T) {
	dir := t.TempDir()
	small := []byte(`{"type":"session_meta"}` + "\n")
	large := bytes.Repeat([]byte("x"), SniffSize+10)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(small)
	zw.Close()
	for _, tt := range []struct {
		name              string
		data, head        []byte
		compressed, whole bool
	}{
		{"empty", nil, nil, false, true},
		{"small", small, small, false, true},
		{"exactly the sniff size", large[:SniffSize], large[:SniffSize], false, false},
		{"larger", large, large[:SniffSize], false, false},
		{"compressed", gz.Bytes(), small, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			head, compressed, whole, err := readHead(f)
			if err != nil || !bytes.Equal(head, tt.head) || compressed != tt.compressed || whole != tt.whole {
				t.Errorf("head of %d bytes, compressed %v, whole %v, %v; want %d bytes, %v, %v", len(head), compressed, whole, err, len(tt.head), tt.compressed, tt.whole)
			}
		})
	}
}

// stoppingSink fails the file it is offered after ok files, and cancels the
// walk's context there when cancel is set.
type stoppingSink struct {
	*memSink
	mu      sync.Mutex
	offered int
	ok      int
	cancel  context.CancelFunc
}

var errSinkBroke = errors.New("the store broke")

func (s *stoppingSink) File(ctx context.Context, f FileInfo) (FileSink, error) {
	s.mu.Lock()
	s.offered++
	n := s.offered
	s.mu.Unlock()
	if n > s.ok {
		if s.cancel != nil {
			s.cancel()
			return s.memSink.File(ctx, f)
		}
		return nil, errSinkBroke
	}
	return s.memSink.File(ctx, f)
}

// A walk that a file stops (the sink failing, or the context ending) stops
// listing too: it returns why, reads few files past it, and leaves no
// goroutine behind, with one worker or several.
func TestPathsWalkStops(t *testing.T) {
	dir := t.TempDir()
	for i := range 400 {
		write(t, dir, fmt.Sprintf("run%03d/sessions/rollout.jsonl", i), strings.ReplaceAll(codexSample, `"id":"s1"`, fmt.Sprintf(`"id":"s%03d"`, i)))
	}
	before := runtime.NumGoroutine()
	for _, workers := range []int{1, 3} {
		for _, cancelled := range []bool{false, true} {
			// Not cancelled unless the test is of that: nothing else may
			// end the listing of a walk the sink stopped.
			ctx := context.Background()
			sink := &stoppingSink{memSink: newMemSink(), ok: 5}
			want := errSinkBroke
			if cancelled {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				sink.cancel, want = cancel, context.Canceled
			}
			sum, err := Paths(ctx, []string{dir}, sink, Options{Workers: workers})
			if !errors.Is(err, want) {
				t.Errorf("%d workers, cancelled %v: %v, want %v", workers, cancelled, err, want)
			}
			// Up to twice as many files as are read at once are started.
			started := 1
			if workers > 1 {
				started = 2 * smallFilesPerWorker * workers
			}
			if sink.offered > 5+started+1 || sum.Traces > 5+started {
				t.Errorf("%d workers, cancelled %v: %d files offered, %d traces stored after the walk stopped at the 6th", workers, cancelled, sink.offered, sum.Traces)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left, %d before the walks", n, before)
	}
}

// overlapSink counts the files open in it at once (from File to Close),
// small and large apart. A small file's File waits, up to a deadline, for
// as many small files as the walk reads at once to be open: without that
// wait they could each finish before the next began.
type overlapSink struct {
	*memSink
	smallWanted int
	mu          sync.Mutex
	open        map[bool]int // by large
	most        map[bool]int
}

func (s *overlapSink) File(ctx context.Context, f FileInfo) (FileSink, error) {
	large := f.Size >= SniffSize
	s.mu.Lock()
	s.open[large]++
	s.most[large] = max(s.most[large], s.open[large])
	s.mu.Unlock()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		done := large || s.most[false] >= s.smallWanted
		s.mu.Unlock()
		if done {
			break
		}
	}
	if large {
		time.Sleep(20 * time.Millisecond) // time for other large files to come in, were they let
	}
	fs, err := s.memSink.File(ctx, f)
	return &overlapFile{FileSink: fs, s: s, large: large}, err
}

type overlapFile struct {
	FileSink
	s     *overlapSink
	large bool
}

func (f *overlapFile) Close(ctx context.Context, r FileResult) error {
	f.s.mu.Lock()
	f.s.open[f.large]--
	f.s.mu.Unlock()
	return f.FileSink.Close(ctx, r)
}

// A walk reads Workers large files at once at most, and ten times as many
// small ones.
func TestPathsWorkersBySize(t *testing.T) {
	dir := t.TempDir()
	const workers = 2
	padding := strings.Repeat("x", SniffSize)
	for i := range 40 {
		write(t, dir, fmt.Sprintf("small%03d/rollout.jsonl", i), strings.ReplaceAll(codexSample, `"id":"s1"`, fmt.Sprintf(`"id":"s%03d"`, i)))
	}
	for i := range 8 {
		content := strings.ReplaceAll(codexSample, `"id":"s1"`, fmt.Sprintf(`"id":"l%03d"`, i))
		write(t, dir, fmt.Sprintf("large%03d/rollout.jsonl", i), strings.Replace(content, "Find the root cause.", "Find the root cause. "+padding, 1))
	}
	sink := &overlapSink{memSink: newMemSink(), smallWanted: smallFilesPerWorker * workers, open: map[bool]int{}, most: map[bool]int{}}
	sum, err := Paths(context.Background(), []string{dir}, sink, Options{Workers: workers})
	if err != nil || sum.Traces != 48 {
		t.Fatalf("%d traces, %v; want 48", sum.Traces, err)
	}
	if sink.most[true] > workers {
		t.Errorf("%d large files open at once, want at most %d", sink.most[true], workers)
	}
	if sink.most[false] < smallFilesPerWorker*workers {
		t.Errorf("%d small files open at once, want %d", sink.most[false], smallFilesPerWorker*workers)
	}
}
