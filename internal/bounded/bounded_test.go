package bounded

import (
	"slices"
	"testing"
)

func TestMap(t *testing.T) {
	tests := []struct {
		name string
		size int
		put  []string
		kept []string // in the order put
	}{
		{"under the size", 3, []string{"a", "b"}, []string{"a", "b"}},
		{"oldest let go", 2, []string{"a", "b", "c"}, []string{"b", "c"}},
		{"a key put again keeps its place", 2, []string{"a", "b", "a", "c"}, []string{"b", "c"}},
		{"many times the size", 3, []string{"a", "b", "c", "d", "e", "f", "g"}, []string{"e", "f", "g"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New[string, int](tt.size)
			for i, k := range tt.put {
				m.Put(k, i)
			}
			var kept []string
			for _, k := range []string{"a", "b", "c", "d", "e", "f", "g"} {
				if v, ok := m.Get(k); ok {
					kept = append(kept, k)
					last := -1
					for i, p := range tt.put {
						if p == k {
							last = i
						}
					}
					if v != last {
						t.Errorf("%s = %d, want %d, the last value put", k, v, last)
					}
				}
			}
			if !slices.Equal(kept, tt.kept) || m.Len() != len(tt.kept) {
				t.Errorf("kept %v (%d), want %v", kept, m.Len(), tt.kept)
			}
		})
	}
}
