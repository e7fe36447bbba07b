// Package bounded keeps the entries last put in a map, up to a number of
// them: the caches of recent things (run directories a walk read, pages a
// server built) whose memory must not grow with the input.
package bounded

// Map keeps the values of the last size keys put in it, letting the oldest
// go first. It is not safe for concurrent use.
type Map[K comparable, V any] struct {
	size  int
	order []K // the keys, oldest first
	m     map[K]V
}

// New returns an empty Map keeping at most size keys.
func New[K comparable, V any](size int) *Map[K, V] {
	return &Map[K, V]{size: size, m: map[K]V{}}
}

// Get returns the value kept for k.
func (b *Map[K, V]) Get(k K) (V, bool) {
	v, ok := b.m[k]
	return v, ok
}

// Put keeps v for k; a new key lets the oldest go once size are kept. A
// key put again keeps its place.
func (b *Map[K, V]) Put(k K, v V) {
	if _, ok := b.m[k]; !ok {
		if len(b.order) == b.size {
			delete(b.m, b.order[0])
			b.order = b.order[1:]
		}
		b.order = append(b.order, k)
	}
	b.m[k] = v
}

// Len is how many keys are kept.
func (b *Map[K, V]) Len() int { return len(b.m) }
