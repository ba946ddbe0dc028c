package action

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/ghfake"
	"github.com/planexhq/planex/internal/render"
)

// plannedDiamond posts a plan for the diamond on a new issue and returns
// the issue and the plan's id.
func (w *world) plannedDiamond() (int, string) {
	w.t.Helper()
	w.agent.setPlan(diamond()...)
	n := w.fake.AddIssue(wRepo, "maintainer", "Add four files", "We need a, b, c and d.")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex add four files")); err != nil || r.Outputs.Status != StatusPlanned {
		w.t.Fatalf("plan run: %v %+v", err, r.Outputs)
	}
	return n, w.planID(n)
}

// TestPrimaryRateLimitIsWaitedFor: a primary rate limit that resets in a
// second is waited for, and the refused pull request is opened once after
// the reset. (Was internal/cli's TestActionPrimaryRateLimitIsWaitedFor.)
func TestPrimaryRateLimitIsWaitedFor(t *testing.T) {
	w := newParallelWorld(t)
	n, id := w.plannedDiamond()
	w.fake.InjectFault(routePulls, 1, ghfake.PrimaryRateLimit(403, time.Now().Add(time.Second)))
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+id))
	w.assertDiamondDone(n, r, err)
	if got, _ := w.requestsTo(routePulls); got != 2 {
		t.Errorf("%d pull request creates, want the refused one and the one after the reset", got)
	}
}

// TestRateLimitTooLongFailsTruthfully: a reset hours away is not waited
// for; the run ends failed, saying until when (status comment, last
// comment, job summary), and a retry after it finishes the run. (Was
// internal/cli's TestActionRateLimitTooLongFailsTruthfully; that a
// failed run exits 1 is internal/cli's TestActionConventions.)
func TestRateLimitTooLongFailsTruthfully(t *testing.T) {
	w := newParallelWorld(t)
	n, id := w.plannedDiamond()
	reset := time.Now().Add(2 * time.Hour)
	w.fake.InjectFault(routePulls, 1, ghfake.PrimaryRateLimit(429, reset))
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+id))
	if err != nil || r.Outputs.Status != StatusFailed {
		t.Fatalf("run: %v %+v", err, r.Outputs)
	}
	when := reset.UTC().Format("15:04 UTC")
	statuses := w.commentsWith(n, "<!-- planex:status -->")
	if len(statuses) != 1 || !strings.Contains(statuses[0], "**failed**") || !strings.Contains(statuses[0], "rate limit") ||
		!strings.Contains(statuses[0], "until "+when) || !strings.Contains(statuses[0], "/planex retry") {
		t.Errorf("status comment:\n%s", strings.Join(statuses, "\n---\n"))
	}
	if c := w.lastComment(n); strings.Contains(c, "internal error") || !strings.Contains(c, "until "+when) {
		t.Errorf("last comment: %s", c)
	}
	if l := w.labels(n); !slices.Contains(l, LabelFailed) || slices.Contains(l, LabelRunning) {
		t.Errorf("labels = %v", l)
	}
	// The job summary is the Summary output, or the Failure when there
	// is none (internal/cli's action.go).
	if s := render.StepSummary(r.Outputs.Summary); !strings.Contains(s, "rate limit") && (s != "" || !strings.Contains(r.Outputs.Failure, "rate limit")) {
		t.Errorf("job summary: %q, failure %q", s, r.Outputs.Failure)
	}
	r, err = w.handle(w.comment(n, "maintainer", "/planex retry"), func(c *Config) { c.RunID = "43" })
	w.assertDiamondDone(n, r, err)
}
