package guardproxy

import (
	"container/list"
	"sync"
	"time"

	"github.com/faultline/faultline/guard"
)

// entry is one session the proxy holds: the guard's session of the current
// run and the conversation as the client holds it. Its lock is held for
// the whole of a request, upstream call included: an agent's requests come
// one after another, and the history of one is the ground of the next.
type entry struct {
	mu  sync.Mutex
	key string
	// gen counts the runs of the key: a conversation that no longer
	// extends what the session holds starts a new run.
	gen   int
	s     *guard.Session
	start guard.Start
	began time.Time
	// seen holds the fingerprints of the conversation's steps as the client
	// holds it (not the answers the proxy kept from it at a finish gate).
	seen []uint64
	// unsaved counts the decisions made since the run was last stored.
	unsaved int
	// Of the Responses API: the id of the last answer the client was
	// given, which its next request continues after, and the instructions
	// the run holds, which a client resends with each request.
	response, instructions string

	// Of the table, under its lock.
	used time.Time
	elem *list.Element
}

// sessions is the table of sessions, least recently used last: bounded by
// max, with sessions idle longer than idle evicted.
type sessions struct {
	mu      sync.Mutex
	max     int
	idle    time.Duration
	byKey   map[string]*entry
	lru     *list.List
	evicted int64
	// onEvict is told of each evicted session, outside the table's lock.
	onEvict func(*entry)
}

func newSessions(max int, idle time.Duration, onEvict func(*entry)) *sessions {
	return &sessions{max: max, idle: idle, byKey: map[string]*entry{}, lru: list.New(), onEvict: onEvict}
}

// get returns the session of key, made anew when the table has none, and
// evicts what the table must lose to hold it.
func (t *sessions) get(key string, now time.Time) *entry {
	t.mu.Lock()
	e, ok := t.byKey[key]
	if ok {
		e.used = now
		t.lru.MoveToFront(e.elem)
	} else {
		e = &entry{key: key, used: now}
		e.elem = t.lru.PushFront(e)
		t.byKey[key] = e
	}
	out := t.evictLocked(now, e)
	t.mu.Unlock()
	t.notify(out)
	return e
}

// sweep evicts the sessions idle too long.
func (t *sessions) sweep(now time.Time) {
	t.mu.Lock()
	out := t.evictLocked(now, nil)
	t.mu.Unlock()
	t.notify(out)
}

// evictLocked removes sessions from the least recently used end while the
// table holds too many or they have been idle too long; keep is never
// removed.
func (t *sessions) evictLocked(now time.Time, keep *entry) []*entry {
	var out []*entry
	for el := t.lru.Back(); el != nil; el = t.lru.Back() {
		e := el.Value.(*entry)
		over := t.max > 0 && t.lru.Len() > t.max
		idle := t.idle > 0 && now.Sub(e.used) > t.idle
		if e == keep || !over && !idle {
			break
		}
		t.lru.Remove(el)
		delete(t.byKey, e.key)
		t.evicted++
		out = append(out, e)
	}
	return out
}

func (t *sessions) notify(out []*entry) {
	for _, e := range out {
		t.onEvict(e)
	}
}

// counts returns how many sessions are open and how many were evicted.
func (t *sessions) counts() (open int, evicted int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lru.Len(), t.evicted
}

// all returns every session held.
func (t *sessions) all() []*entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*entry, 0, t.lru.Len())
	for el := t.lru.Front(); el != nil; el = el.Next() {
		out = append(out, el.Value.(*entry))
	}
	return out
}
