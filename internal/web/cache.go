package web

import (
	"context"
	"sync"

	"github.com/faultline/faultline/internal/bounded"
)

// pageCache keeps the costly part of recent pages (the cohort report of a
// large store takes seconds) for as long as the database is unchanged:
// every entry belongs to one store revision, and a new revision empties
// it. Two requests for a page not yet kept both compute it, which is
// simpler than making one wait and costs only time.
type pageCache[V any] struct {
	mu       sync.Mutex
	revision string
	entries  *bounded.Map[string, V]
}

// pagesKept bounds each cache: a few filters a user goes back and forth
// between.
const pagesKept = 16

// get returns the value kept for key at the store's current revision, or
// computes it with build and keeps it. cached says which happened.
func (c *pageCache[V]) get(ctx context.Context, st Store, key string, build func() (V, error)) (v V, cached bool, err error) {
	revision, err := st.Revision(ctx)
	if err != nil {
		return v, false, err
	}
	c.mu.Lock()
	if c.revision != revision || c.entries == nil {
		c.revision, c.entries = revision, bounded.New[string, V](pagesKept)
	}
	v, ok := c.entries.Get(key)
	c.mu.Unlock()
	if ok {
		return v, true, nil
	}
	if v, err = build(); err != nil {
		return v, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Kept under the revision read before building. A write that commits
	// meanwhile makes a new revision, so a value that may show it only in
	// part is never served; and when a later request has already moved the
	// cache on to a new revision, the value is not kept at all.
	if c.revision == revision {
		c.entries.Put(key, v)
	}
	return v, false, nil
}
