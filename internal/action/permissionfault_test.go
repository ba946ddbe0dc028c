package action

import (
	"testing"

	"github.com/planexhq/planex/internal/ghfake"
)

// TestRedTeamPermissionAPIFailsClosed: GitHub's permission API fails
// while a maintainer's /planex -y, or their approval, is handled (a
// server error past the retries, a token without metadata access, a
// login GitHub does not know). Nothing is planned to run and nothing
// runs: a failure to find out is no permission. (Held.)
func TestRedTeamPermissionAPIFailsClosed(t *testing.T) {
	t.Parallel()
	const route = "GET /repos/{owner}/{repo}/collaborators/{username}/permission"
	for _, c := range []struct {
		name  string
		fault ghfake.Fault
	}{
		{"server error", ghfake.ServerError(500)},
		{"not accessible by integration", ghfake.Forbidden("Resource not accessible by integration")},
		{"not found", ghfake.NotFound()},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newParallelWorld(t)
			w.fastRetries()
			w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
			m := w.fake.AddIssue(wRepo, "maintainer", "Add another", "")
			if r, err := w.handle(w.comment(m, "maintainer", "/planex add another")); err != nil || r.Outputs.Status != StatusPlanned {
				t.Fatalf("plan: %v %+v", err, r.Outputs)
			}
			w.agent.takeCalls()
			w.fake.InjectFault(route, 1000, c.fault)
			r, err := w.handle(w.comment(m, "maintainer", "/planex approve "+w.planID(m)))
			if calls := w.agent.takeCalls(); len(calls) != 0 || r.Outputs.Status == StatusDone || len(w.fake.PullRequests(wRepo)) != 0 {
				t.Errorf("approval while the permission API fails: %v, status %q, agent calls %q", err, r.Outputs.Status, calls)
			}
			n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "")
			r, err = w.handle(w.comment(n, "maintainer", "/planex -y add a file"))
			if calls := w.agent.takeCalls(); len(calls) != 0 || r.Outputs.Status == StatusDone || r.Outputs.Status == StatusPlanned {
				t.Errorf("-y while the permission API fails: %v, status %q, agent calls %q", err, r.Outputs.Status, calls)
			}
		})
	}
}
