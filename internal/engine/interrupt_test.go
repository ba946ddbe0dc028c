package engine

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/session"
)

// TestInterruptKeepsACompletedTask interrupts a run (as SIGINT or SIGTERM
// do) while T1 still works and T2 has completed but is not committed yet
// (it waits for T1, before it in plan order): T2 is committed and
// recorded completed (its commit is not cancelled half-way, which
// recorded it failed), T1 is left pending, and --continue runs T1 only.
func TestInterruptKeepsACompletedTask(t *testing.T) {
	repo := testRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var ran []string
	interrupt := true
	t2Held := make(chan struct{})
	a := agent.Func(func(_ context.Context, s agent.Step) (agent.Result, error) {
		mu.Lock()
		ran = append(ran, s.ID)
		mu.Unlock()
		dir := strings.TrimSuffix(s.Scope, "/**")
		os.MkdirAll(filepath.Join(s.Dir, dir), 0o755)
		if err := os.WriteFile(filepath.Join(s.Dir, dir, s.ID+".txt"), []byte(s.ID), 0o644); err != nil {
			return agent.Result{}, err
		}
		if s.ID == "T1" && interrupt {
			select {
			case <-t2Held:
			case <-time.After(time.Minute):
				return agent.Result{}, errors.New("T2 never finished")
			}
			cancel()
		}
		raw, _ := json.Marshal(map[string]any{"id": s.ID, "status": "completed", "findings": "done", "tests_passed": true})
		return agent.Result{Raw: raw}, nil
	})
	log := slog.New(signalHandler{msg: "task completed; its commit waits for the tasks before it", ch: t2Held})
	tasks := []plan.Task{
		{ID: "T1", Title: "one", Description: "write a", Scope: "a/**", Status: plan.StatusPending},
		{ID: "T2", Title: "two", Description: "write b", Scope: "b/**", Status: plan.StatusPending},
	}
	e, err := New(repo, Options{Agent: a, Yes: true, Approver: "tester", Concurrency: 2, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(ctx, Request{Requirement: "two files", Imported: tasks}); !errors.Is(err, context.Canceled) {
		t.Fatalf("run error = %v", err)
	}
	s, err := session.Open(session.StoreFor(repo.Root, repo.CommonDir), "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.ReadTasks()
	if got[1].Status != plan.StatusCompleted || got[1].Commit == "" || got[0].Status != plan.StatusPending {
		t.Fatalf("after the interrupt: T1 %s, T2 %s (%s) %q", got[0].Status, got[1].Status, got[1].Error, got[1].Commit)
	}
	interrupt = false
	out, err := newTestEngine(t, repo, a, true).Continue(context.Background(), s.Meta.ID)
	if err != nil || out.Counts.Completed != 2 {
		t.Fatalf("continue: %v %+v", err, out)
	}
	if got := strings.Join(ran, " "); got != "T1 T2 T1" && got != "T2 T1 T1" {
		t.Errorf("agent steps = %s", got)
	}
	commits, err := repo.TaskCommits(context.Background(), s.Meta.Branch, s.Meta.Base)
	if err != nil || len(commits) != 2 {
		t.Fatalf("branch commits: %v %+v", err, commits)
	}
}

// signalHandler closes ch when a record with message msg is logged.
type signalHandler struct {
	msg string
	ch  chan struct{}
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case <-h.ch:
		default:
			close(h.ch)
		}
	}
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }
