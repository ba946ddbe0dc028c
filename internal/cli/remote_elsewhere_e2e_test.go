package cli

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamActionCheckoutPushesElsewhere: whoever could write the
// checkout's git directory before planex ran (an earlier agent without
// the sandbox on a self-hosted runner, whose workspace actions/checkout
// reuses after checking the remote's URL, never its push URL) sets
// origin's push URL to another repository of the same server: with a
// token that may write there (a personal token), planex's pushes of the
// run's state and branch went to it (the fake server got the push's
// request for mallory/loot.git). planex refuses a checkout whose
// origin names another repository than GITHUB_REPOSITORY before it does
// anything.
func TestRedTeamActionCheckoutPushesElsewhere(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(diamond()...)
	n := g.fake.AddIssue(ghRepo, "maintainer", "Add four files", "")
	ws := filepath.Join(t.TempDir(), "ws")
	g.git("clone", "-q", g.origin, ws)
	g.git("-C", ws, "remote", "set-url", "--push", "origin", g.fake.ServerURL()+"/mallory/loot.git")
	cmd := g.actionCmd(ws, "issue_comment", g.comment(n, false, "maintainer", "/planex add four files"))
	cmd.Env = append(cmd.Env, "GITHUB_OUTPUT="+filepath.Join(t.TempDir(), "output"), "GITHUB_STEP_SUMMARY="+filepath.Join(t.TempDir(), "summary"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(out.String(), "names another repository") {
		t.Fatalf("planex ran with origin pushing elsewhere: %v\n%s", err, out.String())
	}
	for _, c := range g.fake.Comments(ghRepo, n) {
		if strings.Contains(c.Body, "<!-- planex:plan ") {
			t.Errorf("a plan was posted:\n%s", c.Body)
		}
	}
}
