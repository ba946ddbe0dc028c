package engine

import (
	"bytes"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/session"
)

// TestMarkFoundVouchesForNoTests: a task commit found on the run branch
// after a restart (or pushed there with planex's trailers) carries no test
// result planex saw, so the task is recorded completed with none, never as
// a pass; a task already recorded completed keeps what it recorded.
func TestMarkFoundVouchesForNoTests(t *testing.T) {
	t.Parallel()
	c := gitrepo.TaskCommit{SHA: strings.Repeat("ab", 20), Session: "s", Task: "T1", Body: "did the thing"}
	changes := []gitrepo.Change{{Path: "a/t1.txt", Mode: "100644", Blob: strings.Repeat("cd", 20)}}
	for _, tc := range []struct {
		name      string
		status    plan.Status
		tests     plan.TestResult
		wantTests plan.TestResult
		wantLine  bool
	}{
		{"pending task", plan.StatusPending, plan.TestsNotRun, plan.TestsNotRun, true},
		{"failed task", plan.StatusFailed, plan.TestsFail, plan.TestsNotRun, true},
		{"running task", plan.StatusRunning, plan.TestsPass, plan.TestsNotRun, true},
		{"already completed", plan.StatusCompleted, plan.TestsPass, plan.TestsPass, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			s := &session.Session{Meta: session.Meta{Branch: "planex/s"}}
			task := plan.Task{ID: "T1", Status: tc.status, TestsPassed: tc.tests, Error: "old"}
			markFound(&out, s, &task, c, changes)
			if task.Status != plan.StatusCompleted || task.Commit != c.SHA {
				t.Errorf("status %q commit %q, want completed at %s", task.Status, task.Commit, c.SHA)
			}
			if task.TestsPassed != tc.wantTests {
				t.Errorf("tests_passed %q, want %q", task.TestsPassed, tc.wantTests)
			}
			if got := strings.Join(task.FilesModified, ","); got != "a/t1.txt" {
				t.Errorf("files modified %q", got)
			}
			if line := out.String(); tc.wantLine != strings.Contains(line, "test results are not known") {
				t.Errorf("console line %q (want the unknown-tests note: %v)", line, tc.wantLine)
			}
		})
	}
}
