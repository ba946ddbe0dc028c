package action

import (
	"strings"
	"testing"
)

// TestRedTeamCIFixRoundNamesAttributeFiles: the agent fixing CI on
// planex's pull request also writes fix/.gitattributes marking every file
// of its folder generated and binary to GitHub's diff, so the round's
// changes are collapsed or shown as "Binary file not shown". The pull
// request body's warning of .gitattributes files was written for the
// first run's tasks only, and the CI-fix round's section said nothing:
// it now warns and names the file.
func TestRedTeamCIFixRoundNamesAttributeFiles(t *testing.T) {
	w := newParallelWorld(t)
	pr := w.planexPR()
	w.agent.setPlan(wTask{ID: "T1", Title: "fix the limiter", Scope: "fix/**", Attributes: "fix/.gitattributes"})
	auto := func(c *Config) { c.CIFix, c.CIFixAttempts = CIFixAuto, 1 }
	r, err := w.handle(w.failCI(601, pr, "go test ./..."), auto)
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("auto fix: %v %+v", err, r.Outputs)
	}
	if got := strings.Join(w.branch(pr.Head), " | "); got != "T1:_base | T1:_fix_the_limiter" {
		t.Fatalf("branch = %s", got)
	}
	prs := w.fake.PullRequests(wRepo)
	if len(prs) != 1 {
		t.Fatalf("pull requests = %+v", prs)
	}
	_, round, ok := strings.Cut(prs[0].Body, "### CI-fix round 1")
	if !ok {
		t.Fatalf("no CI-fix round in the body:\n%s", prs[0].Body)
	}
	for _, want := range []string{"> [!WARNING]", "changes what GitHub's diff shows", "> - `fix/.gitattributes`"} {
		if !strings.Contains(round, want) {
			t.Errorf("the CI-fix round's section lacks %q:\n%s", want, round)
		}
	}
	w.noRefusedRequests()
}
