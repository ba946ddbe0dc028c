package ghfake

import (
	"testing"
	"time"
)

func TestLoadSpecServesRoutes(t *testing.T) {
	start := time.Now()
	s, err := LoadSpec()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("parsed trimmed description in %v", time.Since(start))
	ops := s.Operations()
	if len(ops) < 30 {
		t.Fatalf("only %d operations: %v", len(ops), ops)
	}
}
