package agent

import (
	"errors"
	"sync"
	"testing"
)

// TestSharedHoldsStepsTogether: steps that run at once, each allowed
// the whole remainder alone, are refused once what they spent together
// (the finished ones' recorded spending included, never less than they
// told) reaches it.
func TestSharedHoldsStepsTogether(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		left Limit
		unit Usage
	}{
		{"cost", Limit{CostUSD: 1}, Usage{CostUSD: 0.1}},
		{"tokens", Limit{Tokens: 1000}, Usage{InputTokens: 90, OutputTokens: 10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			times := func(n int64) Usage {
				return Usage{InputTokens: c.unit.InputTokens * n, OutputTokens: c.unit.OutputTokens * n, CostUSD: c.unit.CostUSD * float64(n)}
			}
			s := NewShared(c.left)
			steps := []struct {
				id   string
				n    int64
				over bool
			}{{"T1", 4, false}, {"T2", 4, false}, {"T3", 1, false}, {"T3", 2, true}}
			for _, st := range steps {
				if err := s.Spend(st.id, times(st.n)); errors.Is(err, ErrStepBudget) != st.over {
					t.Fatalf("%s at %d units: %v, want refused %v", st.id, st.n, err, st.over)
				}
			}
			// T1 finishes having spent 3 units more than it last told.
			s.Finish("T1", times(7))
			if err := s.Spend("T2", times(1)); !errors.Is(err, ErrStepBudget) {
				t.Errorf("after T1 finished at 7 units, T2 at 1 and T3 at 2 passed: %v", err)
			}
			// A step that finished recording less than it told counts what it told.
			s2 := NewShared(c.left)
			s2.Spend("T1", times(9))
			s2.Finish("T1", Usage{})
			if err := s2.Spend("T2", times(1)); !errors.Is(err, ErrStepBudget) {
				t.Errorf("a finished step's told spending was forgotten: %v", err)
			}
		})
	}
}

// TestSharedHoldsBoundsTogether: what the calls under way of the steps
// sharing a remainder set aside (Hold) is taken from what each later
// call is told is left, with what the steps spent, until released.
func TestSharedHoldsBoundsTogether(t *testing.T) {
	t.Parallel()
	s := NewShared(Limit{Tokens: 1000, CostUSD: 10})
	s.Spend("T1", Usage{InputTokens: 100, CostUSD: 1})
	var seen []Usage
	part := func(left Usage) Usage {
		seen = append(seen, left)
		return Usage{OutputTokens: 200, CostUSD: 2}
	}
	r1 := s.Hold("T1", Usage{InputTokens: 100, CostUSD: 1}, part)
	s.Hold("T2", Usage{InputTokens: 50, CostUSD: 0.5}, part)
	r1()
	r1() // once only
	s.Hold("T2", Usage{InputTokens: 50, CostUSD: 0.5}, part)
	want := []Usage{{InputTokens: 900, CostUSD: 9}, {InputTokens: 650, CostUSD: 6.5}, {InputTokens: 650, CostUSD: 6.5}}
	if len(seen) != len(want) {
		t.Fatalf("told %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i].InputTokens != want[i].InputTokens || seen[i].CostUSD-want[i].CostUSD > 1e-9 || want[i].CostUSD-seen[i].CostUSD > 1e-9 {
			t.Errorf("call %d was told %+v is left, want %+v", i+1, seen[i], want[i])
		}
	}
}

// TestSharedHoldsAllReleased: steps whose calls hold and release their
// bounds at once, many times over, leave nothing held once every call
// released (a hold left behind would shrink the bounds of every later
// call of the run), and a release given twice takes nothing more back.
func TestSharedHoldsAllReleased(t *testing.T) {
	t.Parallel()
	s := NewShared(Limit{Tokens: 1_000_000, CostUSD: 100})
	var wg sync.WaitGroup
	for i := range 16 {
		id := string(rune('A' + i))
		wg.Go(func() {
			for range 200 {
				release := s.Hold(id, Usage{}, func(left Usage) Usage {
					return Usage{OutputTokens: left.InputTokens / 4, CostUSD: left.CostUSD / 4}
				})
				release()
				release()
			}
		})
	}
	wg.Wait()
	var left Usage
	s.Hold("Z", Usage{}, func(l Usage) Usage { left = l; return Usage{} })
	if left.InputTokens != 1_000_000 || left.CostUSD < 100-1e-9 {
		t.Errorf("after every call released, %+v is left, want the whole remainder", left)
	}
}
