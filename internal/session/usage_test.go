package session

import (
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/usage"
)

// TestRedTeamAdoptRefusesForgedUsage: the Action adopts the session.json
// of its state ref, which whoever can push may have written, and the
// budget sums its usage records. One whose plan step cost -1000000 (or
// whose tokens are negative, or large enough for two to wrap the sum)
// made every later budget check pass; adopting it is refused, naming the
// step, and an honest one is adopted.
func TestRedTeamAdoptRefusesForgedUsage(t *testing.T) {
	t.Parallel()
	cases := map[string]usage.Usage{
		"a negative cost":          {CostUSD: -1e6},
		"negative input tokens":    {InputTokens: -1 << 40},
		"tokens that wrap the sum": {OutputTokens: 1 << 62},
		"an honest plan step":      {InputTokens: 5000, OutputTokens: 800, CostUSD: 0.03},
	}
	for name, u := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			other, st := testStore(t), testStore(t)
			o, err := Create(other, Meta{ID: "s", Requirement: "r"})
			if err != nil {
				t.Fatal(err)
			}
			o.AddUsage("plan", u)
			if err := o.SaveMeta(); err != nil {
				t.Fatal(err)
			}
			copyMetaAs(t, st, "s", o)
			err = Adopt(st, "s")
			if name == "an honest plan step" {
				if err != nil {
					t.Fatalf("Adopt: %v", err)
				}
				if s, err := Open(st, "s"); err != nil || s.Meta.Usage["plan"] != u {
					t.Errorf("Open after Adopt: %v, %v", s, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), `the usage of step "plan"`) {
				t.Errorf("Adopt = %v, want the forged usage refused", err)
			}
			if _, err := Open(st, "s"); err == nil {
				t.Error("the forged session opens")
			}
		})
	}
}
