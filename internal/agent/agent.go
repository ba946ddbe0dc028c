// Package agent defines how the engine talks to an agent: one Step in, one
// validated JSON result out. Concrete agents (a shell command, the built-in
// model loop, named CLIs) live in this package or below it.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/planexhq/planex/internal/usage"
)

// Phase names the pipeline step an agent is asked to perform.
type Phase string

const (
	PhaseAnalyze Phase = "analyze"
	PhaseExplore Phase = "explore"
	PhasePlan    Phase = "plan"
	PhaseExecute Phase = "execute"
	PhaseReview  Phase = "review"
)

// ReadOnly reports whether the phase may only read the repository.
func (p Phase) ReadOnly() bool { return p != PhaseExecute }

// Step is one call of an agent.
type Step struct {
	Phase Phase
	// ID is the row the step works on (E1, T3); empty for analyze and plan.
	ID string
	// Prompt is the full instruction text. Requirement text and repository
	// content inside it are data, fenced as such by the prompt builder.
	Prompt string
	// Dir is the working directory: the repository root for read-only
	// phases, the task's own worktree for execute.
	Dir string
	// TempDir is the step's private folder, outside the repository and the
	// session folder, made before the step and removed after it (see
	// PrepareStep). Besides Dir it is the only place a step may write;
	// command agents keep their result and schema files in it.
	TempDir string
	// DiscoveriesFile is an empty file in TempDir to which the step may
	// append discoveries, one JSON object a line. Agents never see the
	// session's board itself: planex validates these lines after the step
	// and adds the good ones to it. Empty means the step has no board.
	DiscoveriesFile string
	// Scope bounds what an execute step may write (doublestar globs,
	// separated by ';'). Empty means the step may not write at all.
	Scope string
	// Timeout bounds the whole step; zero means no limit beyond ctx.
	Timeout time.Duration
	// Limit is what the step may still spend (see Limit); agents whose
	// model calls pass a gateway of planex's refuse calls beyond it.
	Limit Limit
}

// Limit is what a step may still spend: its session's budget less what
// the session had spent when the step began. A zero field means no limit.
type Limit struct {
	Tokens  int64
	CostUSD float64
	// Shared, when set, is what the steps running beside this one spend
	// of the same remainder (the tasks of one execution): the step also
	// stops once they spent it together.
	Shared *Shared
}

// Shared counts what the steps of one stretch of a session that run at
// once (the tasks of an execution) spend of what the budget left when
// the stretch began: each step tells it what it spent so far before each
// model call (Spend), and the engine what a finished step recorded
// (Finish). Each step alone is held to the whole remainder, so without it
// N steps at once could spend N times that.
type Shared struct {
	mu   sync.Mutex
	left Limit
	live map[string]Usage
	done Usage
	// held is what the steps' model calls under way set aside (Hold).
	held Usage
}

// NewShared starts counting the steps that share left.
func NewShared(left Limit) *Shared {
	return &Shared{left: Limit{Tokens: left.Tokens, CostUSD: left.CostUSD}, live: map[string]Usage{}}
}

// Spend records that step id spent u so far and says, with
// ErrStepBudget, whether the steps together spent what was left.
func (s *Shared) Spend(id string, u Usage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live[id] = u.Bounded()
	total := s.done
	for _, v := range s.live {
		total = total.Add(v)
	}
	if s.left.CostUSD > 0 && total.CostUSD >= s.left.CostUSD {
		return fmt.Errorf("%w: $%.4f spent by the steps running together, $%.4f of the cost budget was left when they began", ErrStepBudget, total.CostUSD, s.left.CostUSD)
	}
	if n := total.InputTokens + total.OutputTokens; s.left.Tokens > 0 && n >= s.left.Tokens {
		return fmt.Errorf("%w: %d tokens spent by the steps running together, %d of the token budget were left when they began", ErrStepBudget, n, s.left.Tokens)
	}
	return nil
}

// Hold sets aside, for a model call of step id (which spent spent so
// far), the part of what the steps together have left that part returns
// when given it: the remainder less what they spent and what the calls
// under way set aside (CostUSD in dollars, InputTokens in tokens, each
// at least 0 and meaningful only where the remainder has that limit).
// What part returns (CostUSD and OutputTokens) is held until release, so
// that the calls under way in all the steps are bounded together by the
// remainder, not each step's by all of it.
func (s *Shared) Hold(id string, spent Usage, part func(left Usage) Usage) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total := s.done.Add(s.held)
	for k, v := range s.live {
		if k == id {
			v = v.Max(spent.Bounded())
		}
		total = total.Add(v)
	}
	if _, ok := s.live[id]; !ok {
		total = total.Add(spent.Bounded())
	}
	left := Usage{InputTokens: max(s.left.Tokens-total.InputTokens-total.OutputTokens, 0), CostUSD: max(s.left.CostUSD-total.CostUSD, 0)}
	h := part(left).Bounded()
	h = Usage{OutputTokens: h.OutputTokens, CostUSD: h.CostUSD}
	s.held = s.held.Add(h)
	return sync.OnceFunc(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.held = Usage{OutputTokens: max(s.held.OutputTokens-h.OutputTokens, 0), CostUSD: max(s.held.CostUSD-h.CostUSD, 0)}
	})
}

// Finish records what finished step id spent in all (at least what it
// told Spend).
func (s *Shared) Finish(id string, u Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = s.done.Add(s.live[id].Max(u.Bounded()))
	delete(s.live, id)
}

// ErrStepBudget marks a model call an agent refused because the step had
// spent what its session's budget left it (Step.Limit).
var ErrStepBudget = errors.New("the step has spent what the session's budget left it")

// Usage is what a step consumed (defined in package usage, which the
// session shares without depending on the agents).
type Usage = usage.Usage

// Result is a step's outcome: the phase's JSON result, already validated
// against the phase's schema, and what it cost.
type Result struct {
	Raw   json.RawMessage
	Usage Usage
	// Problems are what the agent's own tooling reported during a step
	// that otherwise succeeded: tool calls it refused or was denied
	// permission for, errors it recovered from. They explain a task that
	// then fails planex's checks (no changes, tests), so they belong in
	// its error.
	Problems []string
	// MCPCalls names the MCP tools the step called (mcp__SERVER__TOOL,
	// with the number of calls when more than one), for the task's
	// result and the report.
	MCPCalls []string
	// OutputDropped is how many bytes of the program's output planex did
	// not keep (it keeps a bounded tail), for the task's result.
	OutputDropped int64
}

// Agent runs steps. Implementations must honour ctx cancellation and
// Step.Timeout, and must never pass the caller's secrets to the model or
// to child processes unless allow-listed.
type Agent interface {
	Run(ctx context.Context, step Step) (Result, error)
}

// Func adapts a function to the Agent interface.
type Func func(ctx context.Context, step Step) (Result, error)

// Run calls f.
func (f Func) Run(ctx context.Context, step Step) (Result, error) { return f(ctx, step) }
