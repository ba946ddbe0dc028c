package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/gitrepo/gittest"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/session"
)

// testRepo makes a git repository with one commit: a copy of the
// template main_test.go makes (an empty commit on main, an identity in
// the repository's config).
func testRepo(t testing.TB) *gitrepo.Repo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := gittest.CopyTree(templateRepo, dir); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// stepLog is an agent that writes <scope dir>/<id>.txt for execute steps
// and records which steps ran; before is called first, for attacks.
type stepLog struct {
	mu     sync.Mutex
	ran    []string
	before func(s agent.Step)
}

func (l *stepLog) agent() agent.Agent {
	return agent.Func(func(ctx context.Context, s agent.Step) (agent.Result, error) {
		l.mu.Lock()
		l.ran = append(l.ran, string(s.Phase)+":"+s.ID)
		l.mu.Unlock()
		if l.before != nil {
			l.before(s)
		}
		dir := strings.TrimSuffix(s.Scope, "/**")
		if err := os.MkdirAll(filepath.Join(s.Dir, dir), 0o755); err != nil {
			return agent.Result{}, err
		}
		if err := os.WriteFile(filepath.Join(s.Dir, dir, s.ID+".txt"), []byte(s.ID), 0o644); err != nil {
			return agent.Result{}, err
		}
		raw, _ := json.Marshal(map[string]any{"id": s.ID, "status": "completed", "findings": "done", "tests_passed": true})
		return agent.Result{Raw: raw}, nil
	})
}

func (l *stepLog) steps() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.ran, " ")
}

func twoTasks() []plan.Task {
	return []plan.Task{
		{ID: "T1", Title: "one", Description: "write a", Scope: "a/**", Status: plan.StatusPending},
		{ID: "T2", Title: "two", Description: "write b", Scope: "b/**", Deps: []string{"T1"}, Status: plan.StatusPending},
	}
}

func newTestEngine(t *testing.T, repo *gitrepo.Repo, a agent.Agent, yes bool) *Engine {
	t.Helper()
	e, err := New(repo, Options{Agent: a, Yes: yes, Approver: "tester", Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// editTask rewrites one cell of tasks.csv as an outsider would.
func editTask(t *testing.T, s *session.Session, id string, edit func(*plan.Task)) {
	t.Helper()
	tasks, err := s.ReadTasks()
	if err != nil {
		t.Fatal(err)
	}
	for i := range tasks {
		if tasks[i].ID == id {
			edit(&tasks[i])
		}
	}
	if err := os.WriteFile(s.File(session.TasksFile), plan.WriteTasks(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestChangeDuringRunStopsBeforeTheNextTask(t *testing.T) {
	repo := testRepo(t)
	log := &stepLog{}
	var sess *session.Session
	log.before = func(s agent.Step) {
		if s.ID == "T1" {
			editTask(t, sess, "T2", func(x *plan.Task) { x.Scope = "**"; x.ExecutionDirectives = "touch pwned" })
		}
	}
	e := newTestEngine(t, repo, log.agent(), true)
	// Create the session first so the agent knows where it is.
	var err error
	if sess, err = e.newSession(context.Background(), Request{Requirement: "two files", Imported: twoTasks()}); err != nil {
		t.Fatal(err)
	}
	_, err = e.run(context.Background(), sess, modeStart)
	var ce *ChangedError
	if !errors.As(err, &ce) || !errors.Is(err, ErrPlanChanged) {
		t.Fatalf("run error = %v", err)
	}
	msg := err.Error()
	for _, want := range []string{`tasks.csv changed after approval: T2 field scope ("b/**" → "**"); T2 field execution_directives ("" → "touch pwned")`,
		"planex --continue " + sess.Meta.ID, "planex " + sess.File(session.TasksFile)} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if got := log.steps(); got != "execute:T1" {
		t.Errorf("steps run = %q", got)
	}
	// T1's outcome was not recorded on top of the changed file either.
	if tip, _ := repo.ResolveBranch(context.Background(), sess.Meta.Branch); tip != sess.Meta.Base {
		t.Errorf("the branch moved to %s", tip)
	}

	// The approval names who and how; a remembered -y does not approve
	// the change on --continue.
	again, err := session.Open(session.StoreFor(repo.Root, repo.CommonDir), sess.Meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	ap := again.Meta.Approval
	if ap == nil || ap.By != "tester" || ap.How != "-y" || ap.PlanHash != plan.Hash(twoTasks()) || len(ap.Tasks) != 2 || ap.Tasks[1].Scope != "b/**" {
		t.Fatalf("approval = %+v", ap)
	}
	log.before = nil
	_, err = newTestEngine(t, repo, log.agent(), false).Continue(context.Background(), sess.Meta.ID)
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "T2 field scope") {
		t.Fatalf("continue error = %v", err)
	}
	_, err = newTestEngine(t, repo, log.agent(), true).Continue(context.Background(), sess.Meta.ID)
	if !errors.As(err, &ce) {
		t.Fatalf("continue with -y error = %v", err)
	}
	if got := log.steps(); got != "execute:T1" {
		t.Errorf("steps run after the change = %q", got)
	}

	// Put the approved values back and the plan runs as approved.
	editTask(t, again, "T2", func(x *plan.Task) { x.Scope = "b/**"; x.ExecutionDirectives = "" })
	out, err := newTestEngine(t, repo, log.agent(), false).Continue(context.Background(), sess.Meta.ID)
	if err != nil || out.Counts.Completed != 2 {
		t.Fatalf("after restoring: %+v %v", out, err)
	}
}

func TestTamperedApprovalRecordIsRefused(t *testing.T) {
	repo := testRepo(t)
	log := &stepLog{}
	e := newTestEngine(t, repo, log.agent(), false)
	out, err := e.Start(context.Background(), Request{Requirement: "x", Imported: twoTasks()})
	if err != nil || out.Stage != StageWaiting {
		t.Fatalf("start: %+v %v", out, err)
	}
	s := out.Session
	// Approve it, then rewrite both tasks.csv and the recorded copy.
	if err := e.ApprovePlan(context.Background(), s.Meta.ID, plan.Hash(twoTasks()), Approver{By: "m", How: "test"}); err != nil {
		t.Fatal(err)
	}
	s, _ = session.Open(session.StoreFor(repo.Root, repo.CommonDir), s.Meta.ID)
	editTask(t, s, "T2", func(x *plan.Task) { x.ExecutionDirectives = "touch pwned" })
	s.Meta.Approval.Tasks[1].ExecutionDirectives = "touch pwned"
	if err := s.SaveMeta(); err != nil {
		t.Fatal(err)
	}
	_, err = newTestEngine(t, repo, log.agent(), true).Continue(context.Background(), s.Meta.ID)
	if !errors.Is(err, ErrPlanChanged) || !strings.Contains(err.Error(), "does not match its own copy") {
		t.Fatalf("continue error = %v", err)
	}
	if log.steps() != "" {
		t.Errorf("steps ran: %s", log.steps())
	}
}

func TestRetryAndResumeNeverApprove(t *testing.T) {
	repo := testRepo(t)
	log := &stepLog{}
	e := newTestEngine(t, repo, log.agent(), false)
	out, err := e.Start(context.Background(), Request{Requirement: "x", Imported: twoTasks()})
	if err != nil || out.Stage != StageWaiting || out.Gate != session.GateTasks {
		t.Fatalf("start: %+v %v", out, err)
	}
	id := out.Session.Meta.ID
	// Even with -y and a failed task on record, retry does not pass the gate.
	editTask(t, out.Session, "T1", func(x *plan.Task) { x.Status = plan.StatusFailed })
	yes := newTestEngine(t, repo, log.agent(), true)
	if _, err := yes.Retry(context.Background(), id, ""); !errors.Is(err, ErrNotApproved) {
		t.Errorf("retry: %v", err)
	}
	if _, err := yes.Resume(context.Background(), id, ""); !errors.Is(err, ErrNotApproved) {
		t.Errorf("resume: %v", err)
	}
	if _, err := yes.ResetFailed(context.Background(), id, ""); !errors.Is(err, ErrNotApproved) {
		t.Errorf("reset: %v", err)
	}
	if err := yes.CheckApproved(id, strings.Repeat("0", 64)); !errors.Is(err, ErrPlanChanged) {
		t.Errorf("check against another hash: %v", err)
	}
	if log.steps() != "" {
		t.Errorf("steps ran: %s", log.steps())
	}
	// The user edits the plan at the gate, then continues: that approves
	// the edited plan, as the user made it.
	s, _ := session.Open(session.StoreFor(repo.Root, repo.CommonDir), id)
	editTask(t, s, "T1", func(x *plan.Task) { x.Status = plan.StatusPending; x.Title = "one, renamed" })
	out, err = newTestEngine(t, repo, log.agent(), false).Continue(context.Background(), id)
	if err != nil || out.Counts.Completed != 2 {
		t.Fatalf("continue at the gate: %+v %v", out, err)
	}
	s, _ = session.Open(session.StoreFor(repo.Root, repo.CommonDir), id)
	if ap := s.Meta.Approval; ap == nil || ap.How != "--continue at the gate" || ap.Tasks[0].Title != "one, renamed" {
		t.Errorf("approval = %+v", ap)
	}
}

// TestContinueKeepsCommitSigning: a session records how its commits are
// made, and Continue refuses to finish it another way (a branch made
// locally cannot be finished through GitHub's API, nor the reverse).
func TestContinueKeepsCommitSigning(t *testing.T) {
	repo := testRepo(t)
	base, err := repo.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Create(session.StoreFor(repo.Root, repo.CommonDir), session.Meta{ID: "signed", Branch: "planex/signed", Base: base, Requirement: "x", CommitSigning: "api"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(repo, Options{Agent: (&stepLog{}).agent(), Approver: "tester", Concurrency: 1, CommitSigning: "git"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Continue(context.Background(), s.Meta.ID)
	if err == nil || !strings.Contains(err.Error(), "session signed makes its task commits with --commit-signing api; continue it with --commit-signing api") {
		t.Fatalf("continue in git mode: %v", err)
	}
	if tip, err := repo.ResolveBranch(context.Background(), "planex/signed"); err != nil || tip != "" {
		t.Errorf("the refused continue made the run branch (%q, %v)", tip, err)
	}
}

// TestApprovedDirectivesOnly: with the option, a task without directives
// runs none; without it, the repository's test command.
func TestApprovedDirectivesOnly(t *testing.T) {
	t.Parallel()
	repo := testRepo(t)
	rc := &RepoContext{Summary: "Go", TestCommand: "make test"}
	for only, want := range map[bool]string{false: "make test", true: ""} {
		e := newTestEngine(t, repo, nil, true)
		e.o.ApprovedDirectivesOnly = only
		for _, task := range []plan.Task{{ID: "T1"}, {ID: "T2", ExecutionDirectives: "go vet ./..."}} {
			job, err := e.taskJob(&session.Session{}, taskInputs{rc: rc}, []plan.Task{task}, task, "HEAD")
			if err != nil {
				t.Fatal(err)
			}
			w := want
			if task.ExecutionDirectives != "" {
				w = task.ExecutionDirectives
			}
			if job.Directives != w {
				t.Errorf("only=%v %s: directives %q, want %q", only, task.ID, job.Directives, w)
			}
		}
	}
}
