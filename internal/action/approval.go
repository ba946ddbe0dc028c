package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/planexhq/planex/internal/engine"
)

// planUnchanged checks that the session's tasks are still the plan whose
// hash the record (and the plan comment) carry, before an approval is
// acknowledged. It returns why not, for the approver, or an internal
// error. The engine checks the hash again before it runs anything.
func (r *Runner) planUnchanged(ctx context.Context, rec *Record) (string, error) {
	eng, err := r.bareEngine(rec.repo)
	if err != nil {
		return "", err
	}
	err = eng.ApprovePlan(ctx, rec.SessionID, rec.PlanHash)
	if errors.Is(err, engine.ErrPlanChanged) {
		return fmt.Sprintf("the stored plan is not the plan that was posted (%v)", err), nil
	}
	if err != nil {
		return "", fmt.Errorf("checking plan %s against its hash: %w", rec.PlanID, err)
	}
	return "", nil
}
