package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
)

// TestRedTeamBuiltinHeldToTheStepLimit: a model (prompt-injected by what
// it reads) never reports a result and keeps listing files, each turn
// spending 1,000 tokens in and 100 out at $2 and $10 a million. The
// built-in agent ignored the step's limit and made every call of its
// turn limit (40 for a read-only step) past what the session's budget
// left; it now stops before the call that would begin past it, with
// agent.ErrStepBudget, and records what was spent.
func TestRedTeamBuiltinHeldToTheStepLimit(t *testing.T) {
	t.Parallel()
	const perCall = (1000*2.0 + 100*10.0) / 1e6
	for _, c := range []struct {
		name  string
		limit agent.Limit
		calls int64
	}{
		{"cost left for two calls", agent.Limit{CostUSD: 1.5 * perCall}, 2},
		{"tokens left for three calls", agent.Limit{Tokens: 2500}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int64
			p := ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
				n := calls.Add(1)
				return Response{Stop: StopToolUse, ToolCalls: []ToolCall{{ID: string(rune('a' + n%26)), Name: "list_files", Input: json.RawMessage(`{}`)}},
					Usage: TokenUsage{InputTokens: 1000, OutputTokens: 100}}, nil
			})
			a := New(p, Options{Name: "fake", Price: &Price{InPerMTok: 2, OutPerMTok: 10}})
			res, err := a.Run(context.Background(), agent.Step{Phase: agent.PhaseExplore, Prompt: "explore", Dir: t.TempDir(), Timeout: time.Minute, Limit: c.limit})
			if !errors.Is(err, agent.ErrStepBudget) {
				t.Fatalf("err %v, want the step's budget spent", err)
			}
			if n := calls.Load(); n != c.calls {
				t.Errorf("the model was called %d times, want %d", n, c.calls)
			}
			if res.Usage.InputTokens != c.calls*1000 || res.Usage.OutputTokens != c.calls*100 {
				t.Errorf("recorded %+v, want the %d calls made", res.Usage, c.calls)
			}
		})
	}
}

// TestRedTeamBuiltinStepsShareTheRemainder: two tasks' built-in agents
// run at once, each told the whole remainder (enough for five calls),
// and each model keeps calling tools. Alone each was held to five calls,
// ten together; sharing it (agent.Shared) they stop once they spent it
// together, one call over at most (the other's call under way).
func TestRedTeamBuiltinStepsShareTheRemainder(t *testing.T) {
	t.Parallel()
	const perCall = (1000*2.0 + 100*10.0) / 1e6
	left := agent.Limit{CostUSD: 4.5 * perCall}
	left.Shared = agent.NewShared(left)
	var calls atomic.Int64
	p := ProviderFunc(func(ctx context.Context, req Request) (Response, error) {
		calls.Add(1)
		return Response{Stop: StopToolUse, ToolCalls: []ToolCall{{ID: "c", Name: "list_files", Input: json.RawMessage(`{}`)}},
			Usage: TokenUsage{InputTokens: 1000, OutputTokens: 100}}, nil
	})
	errs := make(chan error, 2)
	for _, id := range []string{"T1", "T2"} {
		go func() {
			a := New(p, Options{Name: "fake", Price: &Price{InPerMTok: 2, OutPerMTok: 10}})
			_, err := a.Run(context.Background(), agent.Step{Phase: agent.PhaseExplore, ID: id, Prompt: "explore", Dir: t.TempDir(), Timeout: time.Minute, Limit: left})
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; !errors.Is(err, agent.ErrStepBudget) {
			t.Errorf("err %v, want the budget spent", err)
		}
	}
	if n := calls.Load(); n < 5 || n > 6 {
		t.Errorf("the two steps made %d calls together, want 5 (6 at most) of the remainder's 5", n)
	}
}
