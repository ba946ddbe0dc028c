//go:build linux

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamActionLocalOriginRunsItsHooks: whoever could write the
// checkout's git directory before planex ran (an earlier agent without
// the sandbox on a self-hosted runner that keeps its workspace) points
// origin at a repository on the runner's disk whose hooks are theirs:
// planex pushed the plan's state there, and git's receive program ran
// the repository's pre-receive hook with planex's environment (the
// Action's token in it). The Action refuses a checkout whose origin is
// not a network URL of the workflow's repository, before anything runs.
func TestRedTeamActionLocalOriginRunsItsHooks(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(diamond()...)
	n := g.fake.AddIssue(ghRepo, "maintainer", "Add four files", "")
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hook := "#!/bin/sh\nenv > " + marker + "\nexit 0\n"
	for _, name := range []string{"pre-receive", "post-receive", "reference-transaction"} {
		if err := os.WriteFile(filepath.Join(g.origin, "hooks", name), []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws := filepath.Join(t.TempDir(), "ws")
	g.git("clone", "-q", g.origin, ws)
	cmd := g.actionCmd(ws, "issue_comment", g.comment(n, false, "maintainer", "/planex add four files"))
	cmd.Env = append(cmd.Env, refuseLocalOriginEnv+"=1",
		"GITHUB_OUTPUT="+filepath.Join(t.TempDir(), "output"), "GITHUB_STEP_SUMMARY="+filepath.Join(t.TempDir(), "summary"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if _, statErr := os.Stat(marker); statErr == nil {
		t.Errorf("the local origin's hook ran with planex's environment")
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(out.String(), "local repository") {
		t.Fatalf("planex ran with a local origin: %v\n%s", err, out.String())
	}
}
