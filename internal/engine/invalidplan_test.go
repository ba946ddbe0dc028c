package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/planexhq/planex/internal/plan"
)

// TestInvalidImportedPlanIsTyped: a plan that fails validation is told
// apart by type (errors.Is ErrInvalidPlan, errors.As *InvalidPlanError),
// with the problems still reachable, not by its message text.
func TestInvalidImportedPlanIsTyped(t *testing.T) {
	repo := testRepo(t)
	log := &stepLog{}
	cases := map[string][]plan.Task{
		"cycle": {
			{ID: "T1", Title: "one", Description: "a", Scope: "a/**", Deps: []string{"T2"}, Status: plan.StatusPending},
			{ID: "T2", Title: "two", Description: "b", Scope: "b/**", Deps: []string{"T1"}, Status: plan.StatusPending},
		},
		"no title": {{ID: "T1", Description: "a", Scope: "a/**", Status: plan.StatusPending}},
	}
	for name, tasks := range cases {
		_, err := newTestEngine(t, repo, log.agent(), false).Start(context.Background(), Request{Requirement: "x", Imported: tasks})
		var ip *InvalidPlanError
		if !errors.Is(err, ErrInvalidPlan) || !errors.As(err, &ip) || !plan.IsProblems(err) {
			t.Errorf("%s: error %v (%T); want an *InvalidPlanError wrapping plan problems", name, err, err)
		}
	}
	if errors.Is(errors.New("the plan is not valid"), ErrInvalidPlan) {
		t.Error("an error with the same text matched ErrInvalidPlan")
	}
	if log.steps() != "" {
		t.Errorf("steps ran for invalid plans: %s", log.steps())
	}
}
