package engine

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/session"
)

type previewGate struct{ tasks *string }

func (g previewGate) Confirm(_ context.Context, gate session.Gate, _ *session.Session, preview string) (Decision, error) {
	if gate == session.GateTasks {
		*g.tasks = preview
	}
	return Approve, nil
}

// The local approval prompt shows what the Action's plan comment shows:
// each task's description, scope, tests and execution directives, and the
// estimated cost; the final line says what the run spent.
func TestApprovalPromptShowsTasksAndCost(t *testing.T) {
	repo := testRepo(t)
	p := &pipelineAgent{}
	var preview string
	var out bytes.Buffer
	e, err := New(repo, Options{Agent: p.agent(), Gate: previewGate{&preview}, Approver: "tester", Concurrency: 1, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Start(context.Background(), Request{Requirement: "add two files"})
	if err != nil || res.Stage != StageDone {
		t.Fatalf("stage %v, err %v", res, err)
	}
	for _, want := range []string{
		"T1  first", "what:", "write a", "scope:", "a/**", "T2  second", "write b", "b/**",
		// analyze, two explorations and the plan at $0.01 each; two tasks.
		"Estimated cost: about $0.02 for the 2 tasks (from $0.04 spent on 4 planning steps so far).",
	} {
		if !strings.Contains(preview, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, preview)
		}
	}
	if !strings.Contains(out.String(), "spent $0.06 (900 tokens)") {
		t.Errorf("the final line does not say what was spent:\n%s", out.String())
	}
}

func TestPreviewShowsTestsAndDirectives(t *testing.T) {
	t.Parallel()
	tasks := []plan.Task{{ID: "T1", Title: "cache", Description: "add an LRU cache", Scope: "cache/**", Test: "go test ./cache",
		AcceptanceCriteria: "hits are counted", ExecutionDirectives: "go vet ./cache", Status: plan.StatusPending}}
	got := previewTasks(&session.Session{}, tasks)
	for _, want := range []string{"tests:         go test ./cache", "runs after it: go vet ./cache", "done when:     hits are counted", "scope:         cache/**"} {
		if !strings.Contains(got, want) {
			t.Errorf("preview lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Estimated cost") {
		t.Errorf("an estimate without any priced step:\n%s", got)
	}
}
