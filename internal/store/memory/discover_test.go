package memory

import (
	"testing"

	"github.com/faultline/faultline/internal/store/storetest"
)

// TestPickSteps holds the memory backend to the answer the SQL backends
// give on the conformance fixture.
func TestPickSteps(t *testing.T) {
	storetest.CheckPickSteps(t, New(storetest.Cohort()...))
}
