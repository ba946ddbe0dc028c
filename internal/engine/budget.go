package engine

import (
	"fmt"
	"math"
	"strings"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/session"
)

// Budget caps a session's spending; zero fields mean no cap.
type Budget struct {
	MaxTokens  int64
	MaxCostUSD float64
}

// BudgetError says why planex did not start a step.
type BudgetError struct{ Msg string }

func (e *BudgetError) Error() string { return e.Msg }

// Spent sums a session's usage: steps recorded in session.json and the
// tasks' accounting columns.
func Spent(s *session.Session, tasks []plan.Task) agent.Usage {
	var u agent.Usage
	for _, v := range s.Meta.Usage {
		u = u.Add(v)
	}
	for _, t := range tasks {
		u = u.Add(taskUsage(t))
	}
	return u
}

// taskUsage is the usage recorded in a task's accounting columns.
func taskUsage(t plan.Task) agent.Usage {
	return agent.Usage{InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, CostUSD: t.CostUSD,
		CacheReadTokens: t.CacheReadTokens, CacheWriteTokens: t.CacheWriteTokens}
}

// estimate predicts the next step of a phase from the mean of the steps of
// that phase so far (or of all steps, when the phase has none yet).
func estimate(s *session.Session, tasks []plan.Task, phase agent.Phase) agent.Usage {
	var same, all []agent.Usage
	for k, v := range s.Meta.Usage {
		all = append(all, v)
		if (phase == agent.PhaseExplore && strings.HasPrefix(k, "E")) || string(phase) == k {
			same = append(same, v)
		}
	}
	for _, t := range tasks {
		if t.InputTokens == 0 && t.OutputTokens == 0 && t.CostUSD == 0 {
			continue
		}
		u := taskUsage(t)
		all = append(all, u)
		if phase == agent.PhaseExecute {
			same = append(same, u)
		}
	}
	pick := same
	if len(pick) == 0 {
		pick = all
	}
	if len(pick) == 0 {
		return agent.Usage{}
	}
	var sum agent.Usage
	for _, u := range pick {
		sum = sum.Add(u)
	}
	n := int64(len(pick))
	return agent.Usage{InputTokens: sum.InputTokens / n, OutputTokens: sum.OutputTokens / n, CostUSD: sum.CostUSD / float64(n)}
}

// limit is what a step starting now may spend: the budget less what the
// session spent, never zero where there is a cap (zero is no limit).
// Steps that run at once each get the whole of it.
func (b Budget) limit(s *session.Session, tasks []plan.Task) agent.Limit {
	var l agent.Limit
	if b.MaxTokens == 0 && b.MaxCostUSD == 0 {
		return l
	}
	spent := Spent(s, tasks)
	if b.MaxTokens > 0 {
		l.Tokens = max(b.MaxTokens-spent.InputTokens-spent.OutputTokens, 1)
	}
	if b.MaxCostUSD > 0 {
		l.CostUSD = max(b.MaxCostUSD-spent.CostUSD, math.SmallestNonzeroFloat64)
	}
	return l
}

// check refuses a step the budget cannot cover.
func (b Budget) check(s *session.Session, tasks []plan.Task, phase agent.Phase) error {
	if b.MaxTokens == 0 && b.MaxCostUSD == 0 {
		return nil
	}
	spent := Spent(s, tasks)
	next := estimate(s, tasks, phase)
	if b.MaxCostUSD > 0 && spent.CostUSD+next.CostUSD > b.MaxCostUSD {
		return &BudgetError{Msg: fmt.Sprintf("cost budget: %s spent of %s, and the next %s step is estimated at %s; raise --max-cost-usd and run planex --continue %s", render.Dollars(spent.CostUSD), render.Dollars(b.MaxCostUSD), phase, render.Dollars(next.CostUSD), s.Meta.ID)}
	}
	total := spent.InputTokens + spent.OutputTokens
	nextTok := next.InputTokens + next.OutputTokens
	if b.MaxTokens > 0 && total+nextTok > b.MaxTokens {
		return &BudgetError{Msg: fmt.Sprintf("token budget: %d tokens used of %d, and the next %s step is estimated at %d; raise --max-tokens and run planex --continue %s", total, b.MaxTokens, phase, nextTok, s.Meta.ID)}
	}
	return nil
}
