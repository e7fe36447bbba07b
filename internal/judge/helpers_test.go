package judge

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/judge/judgetest"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

const examples = "../../examples"

// loadTraces ingests the traces under path into memory, ordered by id.
func loadTraces(tb testing.TB, path string) []*trace.Trace {
	tb.Helper()
	traces, _, err := ingest.ReadAll(context.Background(), []string{path}, ingest.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Slice(traces, func(i, j int) bool { return traces[i].ID < traces[j].ID })
	if len(traces) == 0 {
		tb.Fatalf("no traces under %s", path)
	}
	return traces
}

// longTrace joins the example traces into one: the first trace's task
// setup, then every trace's other steps, with call ids kept apart.
func longTrace(tb testing.TB) *trace.Trace {
	tb.Helper()
	traces := loadTraces(tb, examples)
	long := &trace.Trace{ID: "long", Format: traces[0].Format, System: traces[0].System, Task: traces[0].Task}
	for k, tr := range traces {
		for i, s := range tr.Steps {
			if i < taskSetup(tr) && k > 0 {
				continue
			}
			s.Pair = nil
			if s.CallID != "" {
				s.CallID = fmt.Sprintf("%d-%s", k, s.CallID)
			}
			long.Append(s)
		}
	}
	long.Link()
	return long
}

// memStore is a Store in memory.
type memStore struct {
	mu       sync.Mutex
	traces   map[string]*trace.Trace
	records  map[string]store.JudgeRecord
	findings map[string][]trace.Finding
	cache    map[string]store.CacheEntry
}

func newMemStore(traces []*trace.Trace) *memStore {
	s := &memStore{traces: map[string]*trace.Trace{}, records: map[string]store.JudgeRecord{}, findings: map[string][]trace.Finding{}, cache: map[string]store.CacheEntry{}}
	for _, t := range traces {
		s.traces[t.ID] = t
	}
	return s
}

func (s *memStore) ids() []string {
	var ids []string
	for id := range s.traces {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (s *memStore) Load(_ context.Context, id string) (*trace.Trace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.traces[id]
	if !ok {
		return nil, fmt.Errorf("trace %s not found", id)
	}
	return t, nil
}

func (s *memStore) JudgeRecords(_ context.Context, source string, ids []string) (map[string]store.JudgeRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]store.JudgeRecord{}
	for _, id := range ids {
		if r, ok := s.records[id]; ok && r.Source == source {
			out[id] = r
		}
	}
	return out, nil
}

func (s *memStore) CachedAnswer(_ context.Context, key string) (*store.CacheEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.cache[key]; ok {
		return &e, nil
	}
	return nil, nil
}

func (s *memStore) PutCachedAnswer(_ context.Context, e store.CacheEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache[e.Key] = e
	return nil
}

func (s *memStore) PutJudgement(_ context.Context, r store.JudgeRecord, findings []trace.Finding) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[r.Trace] = r
	s.findings[r.Trace] = findings
	return nil
}

// testClient is a client of the fake server with short pauses.
func testClient(srv *judgetest.Server, tweak func(*ClientOptions)) *OpenAI {
	opt := ClientOptions{BaseURL: srv.URL(), APIKey: "sk-test-secret", Format: FormatSchema, Timeout: 2 * time.Second, Retries: 3,
		MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond, MaxRetryAfter: 5 * time.Second, Conns: 8}
	if tweak != nil {
		tweak(&opt)
	}
	return NewOpenAI(opt)
}

// testRunner judges the traces of st through srv.
func testRunner(tb testing.TB, srv *judgetest.Server, st Store, tweak func(*Options)) *Runner {
	tb.Helper()
	tok, err := NewTokenizer("")
	if err != nil {
		tb.Fatal(err)
	}
	opt := Options{Model: "fake-model", Concurrency: 4, Budget: DefaultBudget, Render: DefaultRender, HintSource: "detector"}
	if tweak != nil {
		tweak(&opt)
	}
	return NewRunner(testClient(srv, nil), st, tok, opt)
}

// validScript answers every call correctly.
func validScript(c judgetest.Call) judgetest.Reply {
	return judgetest.Reply{Content: judgetest.ValidAnswer(c.User()), InputTokens: 1000, OutputTokens: 100}
}
