package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/agent"
)

// The run stops at the first step that could not reach its model: no
// exploration, plan or task is started after it, and the reason says
// what to check.
func TestRunStopsAtAnUnreachableModel(t *testing.T) {
	for _, phase := range []agent.Phase{agent.PhaseAnalyze, agent.PhaseExplore} {
		t.Run(string(phase), func(t *testing.T) {
			repo := testRepo(t)
			p := &pipelineAgent{}
			inner := p.agent()
			var mu sync.Mutex
			a := agent.Func(func(ctx context.Context, s agent.Step) (agent.Result, error) {
				res, err := inner.Run(ctx, s)
				if s.Phase == phase {
					mu.Lock()
					defer mu.Unlock()
					return agent.Result{}, fmt.Errorf("openai step: %w (model m, 3 tries): dial tcp 127.0.0.1:9: connection refused", agent.ErrModelUnreachable)
				}
				return res, err
			})
			e, err := New(repo, Options{Agent: a, Yes: true, Approver: "tester", Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			out, err := e.Start(context.Background(), Request{Requirement: "add two files"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Stage != StageStopped || !strings.Contains(out.Reason, "cannot be reached") || !strings.Contains(out.Reason, "--base-url") {
				t.Errorf("stage %s, reason %q", out.Stage, out.Reason)
			}
			want := map[agent.Phase]string{agent.PhaseAnalyze: "analyze:", agent.PhaseExplore: "analyze: explore:E1"}[phase]
			if got := p.ran(); got != want {
				t.Errorf("steps = %s, want %s", got, want)
			}
		})
	}
}
