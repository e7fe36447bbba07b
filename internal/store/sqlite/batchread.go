package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Load reads the trace stored under id as the batch's open transaction
// sees it: traces written through the batch and not yet committed
// included. The Store's one connection belongs to the open transaction,
// so Store.Load would wait for it to end; the batch instead looks the id
// up through the transaction, which is all most calls need (a writer that
// asks before each trace whether it merges into a stored one finds none),
// and commits the transaction before reading a trace it holds. The error
// matches store.ErrNotFound when there is none.
func (b *Batch) Load(ctx context.Context, id string) (*trace.Trace, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return nil, b.err
	}
	if b.w != nil {
		n, _, err := b.w.storedSteps(ctx, id)
		switch {
		case err != nil:
			return nil, err
		case n < 0:
			return nil, fmt.Errorf("trace %q: %w", id, store.ErrNotFound)
		}
		if err := b.commit(ctx); err != nil {
			return nil, err
		}
	}
	// b.mu is held: no transaction begins until the read is done.
	return b.s.Load(ctx, id)
}

// Commit commits what the open transaction holds, if anything, and says
// whether everything written through the batch since the previous Commit
// is stored: nil when it is, else why not (this commit failed, or an
// earlier one in the background, or a transaction was rolled back). Either
// way the batch goes on, each failure reported once, so it suits a writer
// that closes every file before it commits and writes again whatever a
// failed Commit may have lost.
func (b *Batch) Commit(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.commit(ctx)
	if err == nil {
		err = b.err
	}
	if err == nil && len(b.lost) > 0 {
		err = errors.New("a transaction was rolled back: what it held is not stored")
	}
	b.err = nil
	clear(b.lost)
	return err
}
