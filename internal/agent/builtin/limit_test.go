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
