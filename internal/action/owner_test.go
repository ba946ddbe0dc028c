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

// TestRedTeamForgedOwnerIsNoMarkdown: whoever can push rewrites a running
// plan's state so that its owner's run id (or attempt, or a matrix wave's
// run id) is Markdown: the reply to a `/planex retry` named it as the run
// holding the plan ("[workflow run <id>](…/runs/<id>)"), so the id's
// mention pinged a team and its link went where the forger chose.
func TestRedTeamForgedOwnerIsNoMarkdown(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	forged := "1 @org/team [x](https://evil.example)"
	r := &engines{env: &env{Cfg: &Config{Owner: "o", Repo: "r", RunID: "50", RunAttempt: "1"}}}
	for _, rec := range []*Record{
		{State: StateRunning, Owner: &Owner{RunID: forged}, Heartbeat: now},
		{State: StateRunning, Owner: &Owner{RunID: "50", RunAttempt: forged}, Heartbeat: now},
		{State: StateRunning, Matrix: &MatrixWave{RunID: forged}, Heartbeat: now},
	} {
		_, why := ownerGone(rec, Owner{RunID: "50", RunAttempt: "1"}, nil, now, time.Hour)
		for _, said := range []string{r.ownerText(rec), why} {
			if strings.Contains(said, "@org") || strings.Contains(said, "evil") {
				t.Errorf("a forged run id reaches the reply: %q", said)
			}
		}
	}
	if got := r.ownerText(&Record{Owner: &Owner{RunID: "42"}}); !strings.Contains(got, "[workflow run 42](https://github.com/o/r/actions/runs/42)") {
		t.Errorf("a real run id is not linked: %q", got)
	}
}
