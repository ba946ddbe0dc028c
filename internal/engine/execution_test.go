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
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/session"
)

// gatedAgent writes <scope dir>/<id>.txt for each execute step. A step
// whose id is in wait blocks until the step named there has started (or
// gives up after a minute, failing the task, so a scheduler that never
// starts it shows as a failure rather than a hang).
type gatedAgent struct {
	mu      sync.Mutex
	started map[string]chan struct{}
	order   []string
	wait    map[string]string
	fail    map[string]bool
	onStart func(id string)
}

func (g *gatedAgent) ch(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started == nil {
		g.started = map[string]chan struct{}{}
	}
	if g.started[id] == nil {
		g.started[id] = make(chan struct{})
	}
	return g.started[id]
}

func (g *gatedAgent) agent() agent.Agent {
	return agent.Func(func(ctx context.Context, s agent.Step) (agent.Result, error) {
		g.mu.Lock()
		g.order = append(g.order, s.ID)
		g.mu.Unlock()
		close(g.ch(s.ID))
		if g.onStart != nil {
			g.onStart(s.ID)
		}
		if other, ok := g.wait[s.ID]; ok {
			select {
			case <-g.ch(other):
			case <-time.After(time.Minute):
				return agent.Result{}, errors.New(s.ID + " waited in vain for " + other + " to start")
			case <-ctx.Done():
				return agent.Result{}, ctx.Err()
			}
		}
		if g.fail[s.ID] {
			raw, _ := json.Marshal(map[string]any{"id": s.ID, "status": "failed", "error": "could not"})
			return agent.Result{Raw: raw}, nil
		}
		dir := filepath.Join(s.Dir, strings.TrimSuffix(s.Scope, "/**"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return agent.Result{}, err
		}
		if err := os.WriteFile(filepath.Join(dir, s.ID+".txt"), []byte(s.ID), 0o644); err != nil {
			return agent.Result{}, err
		}
		raw, _ := json.Marshal(map[string]any{"id": s.ID, "status": "completed", "findings": "did " + s.ID, "tests_passed": true})
		return agent.Result{Raw: raw}, nil
	})
}

func issuePlan() []plan.Task {
	return []plan.Task{task("T1", "a/**"), task("T2", "b/**"), task("T3", "c/**", "T2"), task("T4", "d/**", "T3")}
}

// branchTasks lists the run branch's task commits, oldest first.
func branchTasks(t *testing.T, repo *gitrepo.Repo, s *session.Session) string {
	t.Helper()
	commits, err := repo.TaskCommits(context.Background(), s.Meta.Branch, s.Meta.Base)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range commits {
		ids = append(ids, c.Task)
	}
	return strings.Join(ids, " ")
}

func branchTree(t *testing.T, repo *gitrepo.Repo, s *session.Session) string {
	t.Helper()
	tip, err := repo.ResolveBranch(context.Background(), s.Meta.Branch)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := repo.TreeOf(context.Background(), tip)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// TestTasksStartWhenTheirDependenciesAreCommitted: the chain T2 → T3 → T4
// runs while T1 still works (T1 waits for T4 to start), each link
// committed before the next starts.
func TestTasksStartWhenTheirDependenciesAreCommitted(t *testing.T) {
	cases := []struct {
		name       string
		fail       map[string]bool
		wantCommit string
		wantCounts plan.Counts
		wantErr    string // in tasks.csv
	}{
		{"all complete", nil, "T2 T3 T1 T4", plan.Counts{Total: 4, Completed: 4}, ""},
		{"a failed link skips the rest of the chain", map[string]bool{"T3": true}, "T2 T1", plan.Counts{Total: 4, Completed: 2, Failed: 1, Skipped: 1}, "dependency T3 failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := testRepo(t)
			g := &gatedAgent{wait: map[string]string{"T1": "T4"}, fail: c.fail}
			if c.fail["T3"] {
				g.wait = map[string]string{"T1": "T3"}
			}
			var out strings.Builder
			e, err := New(repo, Options{Agent: g.agent(), Yes: true, Approver: "tester", Concurrency: 2, Out: &out})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Start(context.Background(), Request{Requirement: "chain", Imported: issuePlan()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Counts != c.wantCounts {
				t.Fatalf("counts = %+v, want %+v\n%s", res.Counts, c.wantCounts, out.String())
			}
			if got := branchTasks(t, repo, res.Session); got != c.wantCommit {
				t.Errorf("commits = %s, want %s", got, c.wantCommit)
			}
			for _, want := range []string{"wave 1: T1, T2\n", "wave 2: T3\n"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			tasks, _ := res.Session.ReadTasks()
			if c.wantErr != "" && tasks[3].Error != c.wantErr {
				t.Errorf("T4 error = %q, want %q", tasks[3].Error, c.wantErr)
			}
		})
	}
}

// TestResumedRunGivesTheSameBranch interrupts a run once T3 has started
// (T2 committed, T1 still working) and continues it: the branch ends
// with the same tree as an uninterrupted run, each task committed once.
func TestResumedRunGivesTheSameBranch(t *testing.T) {
	whole := testRepo(t)
	g := &gatedAgent{wait: map[string]string{"T1": "T4"}}
	res, err := newConcurrentEngine(t, whole, g.agent()).Start(context.Background(), Request{Requirement: "chain", Imported: issuePlan()})
	if err != nil || res.Counts.Completed != 4 {
		t.Fatalf("whole run: %v %+v", err, res)
	}
	want := branchTree(t, whole, res.Session)

	repo := testRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g = &gatedAgent{wait: map[string]string{"T1": "T3", "T3": "never"}}
	g.onStart = func(id string) {
		if id == "T3" {
			cancel()
		}
	}
	if _, err := newConcurrentEngine(t, repo, g.agent()).Start(ctx, Request{Requirement: "chain", Imported: issuePlan()}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	s, err := session.Open(session.StoreFor(repo.Root, repo.CommonDir), "")
	if err != nil {
		t.Fatal(err)
	}
	first := branchTasks(t, repo, s)
	if first != "T2 T1" && first != "T2" {
		t.Fatalf("commits after the interrupt = %q", first)
	}
	// A killed run leaves its worktrees (named after tasks) behind.
	stale := repo.WorktreeDir(s.Meta.ID, "T2")
	if err := repo.AddWorktree(context.Background(), stale, s.Meta.Base); err != nil {
		t.Fatal(err)
	}
	g = &gatedAgent{}
	res, err = newConcurrentEngine(t, repo, g.agent()).Continue(context.Background(), s.Meta.ID)
	if err != nil || res.Counts.Completed != 4 {
		t.Fatalf("continue: %v %+v", err, res)
	}
	if got := branchTasks(t, repo, s); !strings.HasPrefix(got, first) || len(strings.Fields(got)) != 4 {
		t.Errorf("commits after continuing = %s (before: %s)", got, first)
	}
	if got := branchTree(t, repo, s); got != want {
		t.Errorf("resumed tree %s, uninterrupted %s", got, want)
	}
	if out, _ := repo.Git(context.Background(), "", "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("worktrees left behind:\n%s", out)
	}
	for _, id := range strings.Fields(first) {
		for _, ran := range g.order {
			if ran == id {
				t.Errorf("%s ran again after it was committed", id)
			}
		}
	}
}

func newConcurrentEngine(t *testing.T, repo *gitrepo.Repo, a agent.Agent) *Engine {
	t.Helper()
	e, err := New(repo, Options{Agent: a, Yes: true, Approver: "tester", Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	return e
}
