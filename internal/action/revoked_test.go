package action

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/ghfake"
)

// TestRedTeamRevokedPermission: write access is read when it is used,
// never remembered from the plan. Someone who asked for a plan and lost
// write access before approving it cannot approve it; and a run whose
// approver lost write access after approving is not resumed by someone
// else's /planex retry: the approval no longer holds, and nothing more
// runs.
func TestRedTeamRevokedPermission(t *testing.T) {
	t.Parallel()
	t.Run("before the approval", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
		n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "")
		if r, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil || r.Outputs.Status != StatusPlanned {
			t.Fatalf("plan: %v %+v", err, r.Outputs)
		}
		w.fake.SetPermission(wRepo, "maintainer", "read")
		r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
		if err != nil || r.Outputs.Status != StatusRefused {
			t.Errorf("approval by a former maintainer: %v, status %q", err, r.Outputs.Status)
		}
		if len(w.fake.PullRequests(wRepo)) != 0 || w.branchExists("planex/"+r.Outputs.SessionID) && r.Outputs.SessionID != "" {
			t.Error("the plan ran on the approval of someone without write access")
		}
	})
	t.Run("between the approval and a retry", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.fake.AddUser("lead", "User")
		w.fake.SetPermission(wRepo, "lead", "write")
		n, r := w.failedRun("Two files", "/planex two files", "not now")
		session := r.Outputs.SessionID
		w.agent.failTask("T2", "")
		w.fake.SetPermission(wRepo, "maintainer", "read")
		r, err := w.handle(w.comment(n, "lead", "/planex retry"))
		if r.Outputs.Status == StatusDone || len(w.branch("planex/"+session)) != 1 {
			t.Errorf("the retry ran on the approval of someone who lost write access: %v, status %q, branch %v", err, r.Outputs.Status, w.branch("planex/"+session))
		}
		if !strings.Contains(w.lastComment(n), "cannot approve plans") {
			t.Errorf("the thread is not told why:\n%s", w.lastComment(n))
		}
	})
}

// TestRedTeamRevokedAutoApprover: with the auto-approve setting on, a
// maintainer's bare /planex (or label) approves the plan: the setting
// runs it in their name. A run whose approver lost write access after
// approving is not resumed by someone else's /planex retry when the
// approval was a comment (TestRedTeamRevokedPermission), but an approval
// by the setting was not checked again at all: the retry, and each wave
// of a matrix plan, ran on the approval of someone who no longer had
// access. It is now checked as any other approver's.
func TestRedTeamRevokedAutoApprover(t *testing.T) {
	t.Parallel()
	w, n, session, auto := failedAutoPlanRevoked(t)
	r, err := w.handle(w.comment(n, "lead", "/planex retry"), auto)
	if r.Outputs.Status == StatusDone || len(w.branch("planex/"+session)) != 1 {
		t.Errorf("the retry ran on the auto-approval of someone who lost write access: %v, status %q, branch %v", err, r.Outputs.Status, w.branch("planex/"+session))
	}
	if !strings.Contains(w.lastComment(n), "cannot approve plans") {
		t.Errorf("the thread is not told why:\n%s", w.lastComment(n))
	}
	// Given back their access, the same retry runs.
	w.fake.SetPermission(wRepo, "maintainer", "write")
	if r, err := w.handle(w.comment(n, "lead", "/planex retry"), auto); err != nil || r.Outputs.Status != StatusDone {
		t.Errorf("retry after the access came back: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
}

// failedAutoPlanRevoked is the start of the revoked-approver attacks: a
// maintainer's plan the auto-approve setting ran fails at its second
// task, "lead" may still write, and the maintainer's access falls to
// read. It returns the world, the issue, the session and the setting.
func failedAutoPlanRevoked(t *testing.T) (w *world, n int, session string, auto func(*Config)) {
	t.Helper()
	w = newWorld(t)
	w.fake.AddUser("lead", "User")
	w.fake.SetPermission(wRepo, "lead", "write")
	auto = func(c *Config) { c.AutoApprove = true }
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"}, wTask{ID: "T2", Title: "two", Scope: "b/**", Deps: []string{"T1"}})
	w.agent.failTask("T2", "not now")
	n = w.fake.AddIssue(wRepo, "maintainer", "Two files", "")
	r, err := w.handle(w.comment(n, "maintainer", "/planex two files"), auto)
	if err != nil || r.Outputs.Status != StatusFailed {
		t.Fatalf("the auto-approved run: %v %+v", err, r.Outputs)
	}
	session = r.Outputs.SessionID
	w.agent.failTask("T2", "")
	w.fake.SetPermission(wRepo, "maintainer", "read")
	return w, n, session, auto
}

// TestRedTeamApproverRevokedMidRun: a run in one job read its approver's
// access once, before its first task, and kept going for as long as its
// tasks took: an approver removed from the repository while the plan ran
// (a compromised account, a contractor let go) still had every remaining
// task run and a pull request opened in their name. The access is read
// again after each task, and a lapse stops the run: the first task's
// commit stays on the branch, the second never runs, no pull request is
// opened, and the thread is told why and how to go on.
func TestRedTeamApproverRevokedMidRun(t *testing.T) {
	t.Parallel()
	// Read access, a triage role, or no longer a collaborator at all (a
	// team that lost the repository, an account the organisation
	// blocked: the permission API no longer grants write).
	for name, role := range map[string]string{"read": "read", "triage": "triage", "removed": ""} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			approverRevokedMidRun(t, role)
		})
	}
}

// approverRevokedMidRun is TestRedTeamApproverRevokedMidRun with the
// approver's access falling to role during the first task.
func approverRevokedMidRun(t *testing.T, role string) {
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"}, wTask{ID: "T2", Title: "two", Scope: "b/**", Deps: []string{"T1"}})
	w.agent.mu.Lock()
	w.agent.during = map[string]func(context.Context){"T1": func(context.Context) { w.fake.SetPermission(wRepo, "maintainer", role) }}
	w.agent.mu.Unlock()
	n := w.fake.AddIssue(wRepo, "maintainer", "Two files", "")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex two files")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("plan: %v %+v", err, r.Outputs)
	}
	// Read after every task (a minute by default).
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)), func(c *Config) { c.AccessRecheck = time.Nanosecond })
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	if r.Outputs.Status != StatusFailed {
		t.Errorf("status %q, want %q", r.Outputs.Status, StatusFailed)
	}
	if len(w.fake.PullRequests(wRepo)) != 0 {
		t.Error("a pull request was opened for an approver who lost write access during the run")
	}
	if got := w.branch("planex/" + r.Outputs.SessionID); len(got) != 1 {
		t.Errorf("the run branch holds %v, want the first task's commit alone", got)
	}
	for _, c := range w.agent.calls {
		if c == "execute T2" {
			t.Error("the second task ran after its approver lost write access")
		}
	}
	if last := w.lastComment(n); !strings.Contains(last, "can no longer approve plans") || !strings.Contains(last, "approve "+w.planID(n)) {
		t.Errorf("the thread is not told why the run stopped and how to go on:\n%s", last)
	}
}

// TestRedTeamApproverRecheckFailsClosed: the approver of a plan running
// in one job loses write access while GitHub's permission API fails for
// the rest of the run (a 5xx past the retries, a token that lost the
// metadata read, a rate limit hours from its reset). The read after the
// task failed, was logged, and the run went on to open the pull request
// in the approver's name. A run's result is now published only after a
// read of the approver's access, at most Config.AccessRecheck old, says
// it holds: the work stays on the branch, no pull request is opened, and
// the thread is told why and how to go on.
func TestRedTeamApproverRecheckFailsClosed(t *testing.T) {
	t.Parallel()
	const route = "GET /repos/{owner}/{repo}/collaborators/{username}/permission"
	for _, c := range []struct {
		name  string
		fault ghfake.Fault
	}{
		{"server error", ghfake.ServerError(502)},
		{"not accessible by integration", ghfake.Forbidden("Resource not accessible by integration")},
		{"rate limit hours away", ghfake.PrimaryRateLimit(403, time.Now().Add(3*time.Hour))},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newParallelWorld(t)
			w.fastRetries()
			w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
			w.agent.mu.Lock()
			w.agent.during = map[string]func(context.Context){"T1": func(context.Context) {
				w.fake.SetPermission(wRepo, "maintainer", "read")
				w.fake.InjectFault(route, 1000, c.fault)
				w.clock.advance(2 * DefaultAccessRecheck)
			}}
			w.agent.mu.Unlock()
			n := w.fake.AddIssue(wRepo, "maintainer", "One file", "")
			if r, err := w.handle(w.comment(n, "maintainer", "/planex one file")); err != nil || r.Outputs.Status != StatusPlanned {
				t.Fatalf("plan: %v %+v", err, r.Outputs)
			}
			r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
			if err != nil {
				t.Fatalf("approve: %v", err)
			}
			if len(w.fake.PullRequests(wRepo)) != 0 || r.Outputs.Status != StatusFailed {
				t.Errorf("status %q, %d pull requests: the run was published with its approver's access unread", r.Outputs.Status, len(w.fake.PullRequests(wRepo)))
			}
			if got := w.branch("planex/" + r.Outputs.SessionID); len(got) != 1 {
				t.Errorf("the run branch holds %v, want the task's commit kept", got)
			}
			if last := w.lastComment(n); !strings.Contains(last, "could not say whether @maintainer") || !strings.Contains(last, "retry") {
				t.Errorf("the thread is not told why the run stopped and how to go on:\n%s", last)
			}
		})
	}
}

// TestRedTeamApproverRevokedDuringOneLongTask: the approver loses write
// access while a single long task works (an hour of an agent's time).
// The access was read only as a task landed, so the task ran to its end
// in the name of someone who could no longer approve it. The heartbeat
// reads it too, once Config.AccessRecheck has passed, and a lapse stops
// the task under way.
func TestRedTeamApproverRevokedDuringOneLongTask(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	interrupted := make(chan bool, 1)
	w.agent.mu.Lock()
	w.agent.during = map[string]func(context.Context){"T1": func(ctx context.Context) {
		w.fake.SetPermission(wRepo, "maintainer", "read")
		w.clock.advance(2 * DefaultAccessRecheck)
		// The task works until it is stopped; a bound keeps the old code
		// from hanging the test (it then goes on and fails below).
		select {
		case <-ctx.Done():
			interrupted <- true
		case <-time.After(20 * time.Second):
			interrupted <- false
		}
	}}
	w.agent.mu.Unlock()
	n := w.fake.AddIssue(wRepo, "maintainer", "One file", "")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex one file")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("plan: %v %+v", err, r.Outputs)
	}
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)), func(c *Config) { c.HeartbeatInterval = 10 * time.Millisecond })
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	if !<-interrupted {
		t.Error("the task under way was not stopped when its approver lost write access")
	}
	if len(w.fake.PullRequests(wRepo)) != 0 || r.Outputs.Status != StatusFailed {
		t.Errorf("status %q, %d pull requests", r.Outputs.Status, len(w.fake.PullRequests(wRepo)))
	}
	if last := w.lastComment(n); !strings.Contains(last, "can no longer approve plans") {
		t.Errorf("the thread is not told why the run stopped:\n%s", last)
	}
}

// TestRedTeamApproverRevokedDuringMatrixTask: in matrix mode a task is a
// job of its own, which read the approval once as it began and had no
// heartbeat: the approver's losing write access while the task worked
// (an hour of an agent's time) left it working to its end. The task job
// reads the access too, at every heartbeat once Config.AccessRecheck has
// passed, and a lapse stops the task and publishes no result; the
// wave's collect then refuses to go on.
func TestRedTeamApproverRevokedDuringMatrixTask(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "One file", "")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex one file"), matrixMode("1")); err != nil {
		t.Fatal(err)
	}
	if r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)), matrixMode("1")); err != nil || r.Outputs.Status != StatusRunning {
		t.Fatalf("approve: %v %+v", err, r.Outputs)
	}
	interrupted := make(chan bool, 1)
	w.agent.mu.Lock()
	w.agent.during = map[string]func(context.Context){"T1": func(ctx context.Context) {
		w.fake.SetPermission(wRepo, "maintainer", "read")
		w.clock.advance(2 * DefaultAccessRecheck)
		// As TestRedTeamApproverRevokedDuringOneLongTask.
		select {
		case <-ctx.Done():
			interrupted <- true
		case <-time.After(20 * time.Second):
			interrupted <- false
		}
	}}
	w.agent.mu.Unlock()
	ctx := context.Background()
	ev := &event.Event{Name: event.WorkflowDispatch, Owner: wOwner, Repo: wName, DefaultBranch: "main", Inputs: event.Inputs{Issue: n}}
	prep, _ := w.job(matrixMode("101"))
	if err := prep.Prepare(ctx, ev); err != nil || prep.Outputs.HasTasks != "true" {
		t.Fatalf("prepare: %v %+v", err, prep.Outputs)
	}
	job, _ := w.job(matrixMode("101"), func(c *Config) { c.HeartbeatInterval = 10 * time.Millisecond })
	err := job.RunTask(ctx, ev, "T1")
	if !<-interrupted {
		t.Error("the task under way was not stopped when its approver lost write access")
	}
	if err == nil || !strings.Contains(err.Error(), "can no longer approve plans") {
		t.Errorf("the task job's error does not say why it stopped: %v", err)
	}
	collect, _ := w.job(matrixMode("101"))
	_ = collect.Collect(ctx, ev)
	if len(w.fake.PullRequests(wRepo)) != 0 || collect.Outputs.Status == StatusDone {
		t.Errorf("collect after the lapse: %+v, %d pull requests", collect.Outputs, len(w.fake.PullRequests(wRepo)))
	}
}

// TestRedTeamScheduleRunsOnAStaleAnswer: with the auto-approve setting,
// one schedule job plans and runs, one after another, every issue a
// maintainer labelled. The maintainer loses write access while the first
// issue's plan runs: that run stops (TestRedTeamApproverRevokedMidRun),
// but the job remembered GitHub's first answer for as long as it lasted,
// so the next issue was planned and run, and its pull request opened, in
// the removed maintainer's name. An answer is remembered for
// Config.AccessRecheck at most.
func TestRedTeamScheduleRunsOnAStaleAnswer(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	var once sync.Once
	w.agent.mu.Lock()
	w.agent.during = map[string]func(context.Context){"T1": func(context.Context) {
		once.Do(func() {
			w.fake.SetPermission(wRepo, "maintainer", "read")
			w.clock.advance(2 * DefaultAccessRecheck)
		})
	}}
	w.agent.mu.Unlock()
	for _, title := range []string{"First", "Second"} {
		n := w.fake.AddIssue(wRepo, "maintainer", title, "")
		w.fake.LabelIssue(wRepo, n, "maintainer", "planex:auto")
	}
	r, err := w.handle(&event.Event{Name: event.Schedule, Owner: wOwner, Repo: wName}, func(c *Config) { c.AutoApprove = true; c.MaxIssues = 2 })
	if prs := w.fake.PullRequests(wRepo); len(prs) != 0 {
		t.Errorf("%d pull requests opened in the name of a maintainer removed during the schedule's first run (%v, %+v)", len(prs), err, r.Outputs)
	}
	if n := strings.Count(strings.Join(w.agent.calls, " "), "execute T1"); n != 1 {
		t.Errorf("%d tasks ran, want the first alone", n)
	}
}
