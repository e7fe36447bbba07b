package postgres

import (
	"testing"

	"github.com/faultline/faultline/internal/store/storetest"
)

func TestPickSteps(t *testing.T) {
	storetest.TestPickSteps(t, func(t *testing.T) storetest.Store { return open(t) })
}
