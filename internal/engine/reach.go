package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/session"
)

// reach remembers the first step whose model could not be reached at all
// (agent.ErrModelUnreachable): no later step starts, since it would wait
// on the same endpoint for nothing.
type reach struct {
	mu   sync.Mutex
	down error
}

// guard wraps an agent so that its unreachable failures are remembered.
func (r *reach) guard(a agent.Agent) agent.Agent {
	if a == nil {
		return nil
	}
	return agent.Func(func(ctx context.Context, step agent.Step) (agent.Result, error) {
		res, err := a.Run(ctx, step)
		if errors.Is(err, agent.ErrModelUnreachable) {
			r.mu.Lock()
			if r.down == nil {
				r.down = err
			}
			r.mu.Unlock()
		}
		return res, err
	})
}

// check is nil until a step found its model unreachable.
func (r *reach) check(s *session.Session) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down == nil {
		return nil
	}
	return &BudgetError{Msg: fmt.Sprintf("%v; no further step was started. Check --base-url and the network, then run planex --continue %s", r.down, s.Meta.ID)}
}

// canStart says whether the next step of phase may start: the model is
// reachable as far as planex knows, and the budget allows it.
func (e *Engine) canStart(s *session.Session, tasks []plan.Task, phase agent.Phase) error {
	if err := e.reach.check(s); err != nil {
		return err
	}
	return e.o.Budget.check(s, tasks, phase)
}
