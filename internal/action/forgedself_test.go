package action

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/ghfake"
	"github.com/planexhq/planex/internal/render"
)

// TestRedTeamForgedSelfInTheRecord: with a token other than the job's
// and no bot-login, planex learns its own account from the thread's
// record, which whoever can push writes. With ci-fix auto, a CI fix run
// in a maintainer's name failed and the maintainer lost write access, so
// a retry must be refused. The pusher rewrites the state ref to name a
// reader's account, mallory, as planex's own and as the fix's approver,
// and mallory posts a copy of the plan comment whose marker says the
// plan runs for her: the copy was planex's plan comment by the record's
// word, the approval one in planex's own name, which nothing checks, and
// someone else's /planex retry ran it. Only an account the configuration
// names, or that planex's own posts in this job showed, approves in
// planex's name.
func TestRedTeamForgedSelfInTheRecord(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.fake.AddUser("lead", "User")
	w.fake.SetPermission(wRepo, "lead", "write")
	w.fake.AddUser("mallory", "User")
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**"})
	w.agent.failTask("T1", "not now")
	auto := func(c *Config) { c.CIFix, c.CIFixAttempts = CIFixAuto, 3 }
	r, err := w.handle(w.failCI(611, pr, "go test ./..."), auto)
	if err != nil || r.Outputs.Status != StatusFailed {
		t.Fatalf("the CI fix run: %v %+v", err, r.Outputs)
	}
	w.agent.failTask("T1", "")
	before := len(w.branch(pr.Head))
	w.fake.SetPermission(wRepo, "maintainer", "read")
	var copyID int64
	for _, c := range w.fake.Comments(wRepo, pr.Number) {
		m, ok := render.ParsePlanMarker(c.Body)
		if !ok {
			continue
		}
		m.For = "mallory"
		_, rest, _ := strings.Cut(c.Body, "\n")
		copyID = w.fake.AddComment(wRepo, pr.Number, "mallory", m.String()+"\n"+rest)
	}
	if copyID == 0 {
		t.Fatal("no plan comment")
	}
	forgeState(t, w, pr.Number, func(dir string) error {
		editJSON(t, filepath.Join(dir, recordFile), func(rec map[string]any) {
			rec["approved_by"], rec["self"], rec["plan_comment_id"] = "mallory", "mallory", copyID
			delete(rec, "plan_body_sha256")
		})
		return nil
	})
	unpinned := func(c *Config) { auto(c); c.BotLogin, c.DefaultToken = "", false }
	// planex's reaction to the retry would show it its own account; with
	// the reaction refused it has only the record's word.
	w.fake.InjectFault("POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", 10, ghfake.Forbidden("Resource not accessible by integration"))
	r, err = w.handle(w.comment(pr.Number, "lead", "/planex retry"), unpinned)
	if r.Outputs.Status == StatusDone || len(w.branch(pr.Head)) != before {
		t.Errorf("the retry ran a CI fix approved in the name of an account the forged record calls planex: %v, status %q, %d commits (%d before)\n%s",
			err, r.Outputs.Status, len(w.branch(pr.Head)), before, w.lastComment(pr.Number))
	}
	if last := w.lastComment(pr.Number); !strings.Contains(last, "bot-login") {
		t.Errorf("the refusal does not say what to set:\n%s", last)
	}
}
