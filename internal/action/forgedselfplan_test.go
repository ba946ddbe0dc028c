package action

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/ghfake"
	"github.com/planexhq/planex/internal/render"
)

// TestRedTeamForgedSelfPostsThePlan: with a token other than the job's
// and no bot-login, planex learned its own account from the thread's
// record, which whoever can push writes (an App with contents and issues
// write, which may not approve). A maintainer's `/planex … -y` ran a plan
// that failed. The pusher posts a plan comment of its own, whose marker
// says it runs at once for that maintainer, and rewrites the state ref to
// name its account as planex's and its comment as the plan comment (the
// plan itself being whatever the pusher wrote into the session): the
// comment was planex's by the record's word, the maintainer's -y
// approved it, and someone else's /planex retry ran it in the
// maintainer's name. A plan comment is planex's only when its author is
// the account the configuration names, or that GitHub's answers to
// planex in this job showed (a reaction to the command among them).
func TestRedTeamForgedSelfPostsThePlan(t *testing.T) {
	t.Parallel()
	for _, reacts := range []bool{true, false} {
		t.Run(map[bool]string{true: "planex reacts", false: "reactions refused"}[reacts], func(t *testing.T) {
			t.Parallel()
			checkForgedSelfPostsThePlan(t, reacts)
		})
	}
}

// checkForgedSelfPostsThePlan runs the attack above; without reacts,
// planex's reactions are refused, so that only the record names its
// account.
func checkForgedSelfPostsThePlan(t *testing.T, reacts bool) {
	w := newWorld(t)
	w.fake.AddUser("lead", "User")
	w.fake.SetPermission(wRepo, "lead", "write")
	w.fake.AddUser("mallory", "User")
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	w.agent.failTask("T1", "not now")
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex -y add a file")); err != nil || r.Outputs.Status != StatusFailed {
		t.Fatalf("the -y run: %v %+v", err, r.Outputs)
	}
	w.agent.failTask("T1", "")
	var copyID int64
	for _, c := range w.fake.Comments(wRepo, n) {
		if _, ok := render.ParsePlanMarker(c.Body); ok {
			copyID = w.fake.AddComment(wRepo, n, "mallory", c.Body)
		}
	}
	if copyID == 0 {
		t.Fatal("no plan comment")
	}
	forgeState(t, w, n, func(dir string) error {
		editJSON(t, filepath.Join(dir, recordFile), func(rec map[string]any) {
			rec["self"], rec["plan_comment_id"] = "mallory", copyID
			delete(rec, "plan_body_sha256")
		})
		return nil
	})
	unpinned := func(c *Config) { c.BotLogin, c.DefaultToken = "", false }
	if !reacts {
		w.fake.InjectFault("POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", 10, ghfake.Forbidden("Resource not accessible by integration"))
	}
	r, err := w.handle(w.comment(n, "lead", "/planex retry"), unpinned)
	if r.Outputs.Status == StatusDone || w.agent.executed("T1") && strings.Count(strings.Join(w.agent.calls, " "), "execute T1") > 1 {
		t.Errorf("the retry ran a plan whose comment an account the forged record calls planex posted: %v, status %q\n%s",
			err, r.Outputs.Status, w.lastComment(n))
	}
	if last := w.lastComment(n); !reacts && !strings.Contains(last, "bot-login") {
		t.Errorf("the refusal does not say what to set:\n%s", last)
	}
}
