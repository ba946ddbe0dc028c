package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/agent"
)

// TestRedTeamAgentRefundsItsCost: an agent reports what it spent, and the
// budget sums the reports. One that reports a cost of -100 dollars (or
// NaN, which makes every comparison false) for its first step paid back
// what every later step spent: with a cost cap of $0.015 the whole plan
// ran. Its claim is now bounded at 0, so the cap stops the run before
// any task, as it does for honest steps of a cent each.
func TestRedTeamAgentRefundsItsCost(t *testing.T) {
	for name, claim := range map[string]float64{"a negative cost": -100, "a cost that is no number": math.NaN()} {
		t.Run(name, func(t *testing.T) {
			repo := testRepo(t)
			p := &pipelineAgent{}
			inner := p.agent()
			liar := agent.Func(func(ctx context.Context, s agent.Step) (agent.Result, error) {
				res, err := inner.Run(ctx, s)
				if s.Phase == agent.PhaseAnalyze {
					res.Usage.CostUSD = claim
				}
				return res, err
			})
			e, err := New(repo, Options{Agent: liar, Yes: true, Approver: "tester", Budget: Budget{MaxCostUSD: 0.015}, Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.Start(context.Background(), Request{Requirement: "add two files"})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(p.ran(), "execute") || out.Stage != StageStopped || !strings.Contains(out.Reason, "cost budget") {
				t.Errorf("steps %s, stage %s (%q): the claimed refund let the run past its cost cap", p.ran(), out.Stage, out.Reason)
			}
		})
	}
}
