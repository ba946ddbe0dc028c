package action

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWorkflowPushRefused: GitHub refuses to push a workflow change with
// a token that lacks the workflows permission (origin's pre-receive hook
// refuses as GitHub does). The plan warned; the run ends failed with that
// reason, once, never as an internal error and never left running. (Was
// internal/cli's TestActionWorkflowPushRefused; that a failed run exits 1
// is internal/cli's TestActionConventions.)
func TestWorkflowPushRefused(t *testing.T) {
	w := newParallelWorld(t)
	hook, err := os.ReadFile("../gitrepo/testdata/pre-receive-workflows.sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.origin, "hooks", "pre-receive"), hook, 0o755); err != nil {
		t.Fatal(err)
	}
	w.agent.setPlan(wTask{ID: "T1", Title: "docs", Scope: "a/**"}, wTask{ID: "T2", Title: "ci", Scope: ".github/workflows/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Docs and CI", "")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex docs and ci")); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("plan run: %v %+v", err, r.Outputs)
	}
	plan := w.commentsWith(n, "<!-- planex:plan ")[0]
	if !strings.Contains(plan, "**T2 can change files in `.github/workflows/`.**") || strings.Contains(plan, "T1 can change") {
		t.Errorf("the plan does not warn about T2:\n%s", plan)
	}
	before := len(w.fake.Comments(wRepo, n))
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	if err != nil || r.Outputs.Status != StatusFailed {
		t.Fatalf("run: %v %+v", err, r.Outputs)
	}
	var replies []string
	for _, c := range w.fake.Comments(wRepo, n)[before:] {
		if !strings.HasPrefix(c.Body, "<!--") && !strings.HasPrefix(c.Body, "/planex") {
			replies = append(replies, c.Body)
		}
	}
	if len(replies) != 1 || !strings.Contains(replies[0], "GitHub refused to push") || !strings.Contains(replies[0], "`.github/workflows/T2.txt`") ||
		!strings.Contains(replies[0], "`workflows` permission") || strings.Contains(replies[0], "internal error") {
		t.Errorf("failure replies: %q", replies)
	}
	statuses := w.commentsWith(n, "<!-- planex:status -->")
	if len(statuses) != 1 || !strings.Contains(statuses[0], "**failed**") || !strings.Contains(statuses[0], "`workflows` permission") {
		t.Errorf("status comment: %q", statuses)
	}
	if l := w.labels(n); !slices.Contains(l, LabelFailed) || slices.Contains(l, LabelRunning) || slices.Contains(l, LabelDone) {
		t.Errorf("labels = %v", l)
	}
	if len(w.fake.PullRequests(wRepo)) != 0 {
		t.Error("a pull request was opened for a branch GitHub refused")
	}
	w.noRefusedRequests()
}
