package action

import (
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/gh"
)

func TestOwnerGone(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	self := Owner{RunID: "50", RunAttempt: "1"}
	running := func(beat time.Duration, owner Owner) *Record {
		return &Record{State: StateRunning, Owner: &owner, Heartbeat: now.Add(-beat), Updated: now.Add(-beat)}
	}
	stale := 15 * time.Minute
	cases := []struct {
		name string
		rec  *Record
		run  *gh.WorkflowRun
		gone bool
		why  string
	}{
		{"run completed", running(time.Minute, Owner{RunID: "42", RunAttempt: "1"}), &gh.WorkflowRun{ID: 42, Attempt: 1, Status: "completed", Conclusion: "cancelled"}, true, "workflow run 42 ended (cancelled)"},
		{"run in progress, fresh heartbeat", running(time.Minute, Owner{RunID: "42", RunAttempt: "1"}), &gh.WorkflowRun{ID: 42, Attempt: 1, Status: "in_progress"}, false, ""},
		{"run in progress outlives a stale heartbeat", running(time.Hour, Owner{RunID: "42", RunAttempt: "1"}), &gh.WorkflowRun{ID: 42, Attempt: 1, Status: "in_progress"}, false, ""},
		{"run re-run", running(time.Minute, Owner{RunID: "42", RunAttempt: "1"}), &gh.WorkflowRun{ID: 42, Attempt: 2, Status: "in_progress"}, true, "re-run (attempt 2)"},
		{"API unknown, fresh heartbeat", running(14*time.Minute, Owner{RunID: "42"}), nil, false, ""},
		{"API unknown, stale heartbeat", running(16*time.Minute, Owner{RunID: "42"}), nil, true, "no sign of life since 2026-11-23 11:44 UTC"},
		{"no owner recorded, stale", &Record{State: StateRunning, Updated: now.Add(-time.Hour)}, nil, true, "no sign of life"},
		{"an earlier attempt of this run", running(time.Minute, Owner{RunID: "50", RunAttempt: "0"}), nil, true, "attempt 0 of this workflow run"},
		{"this very run", running(time.Hour, self), nil, false, ""},
		{"matrix wave held by another run", &Record{State: StateRunning, Owner: &Owner{RunID: "42"}, Heartbeat: now.Add(-time.Minute),
			Matrix: &MatrixWave{RunID: "43"}}, &gh.WorkflowRun{ID: 43, Attempt: 1, Status: "completed", Conclusion: "failure"}, true, "workflow run 43 ended (failure)"},
	}
	for _, c := range cases {
		gone, why := ownerGone(c.rec, self, c.run, now, stale)
		if gone != c.gone || !strings.Contains(why, c.why) {
			t.Errorf("%s: gone=%v %q, want %v %q", c.name, gone, why, c.gone, c.why)
		}
	}
	if h := holder(&Record{Owner: &Owner{RunID: "42"}, Matrix: &MatrixWave{RunID: "43", Collected: true}}); h.RunID != "42" {
		t.Errorf("a collected wave still names the holder: %+v", h)
	}
}
