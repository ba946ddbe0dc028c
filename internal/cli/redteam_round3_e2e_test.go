//go:build linux

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamRunnerTempHidden: on a self-hosted runner the runner's
// temporary folder ($RUNNER_TEMP) often lies outside every home, and
// actions/checkout v6 keeps the job's token there
// (git-credentials-<uuid>.config, included by .git/config for the
// repository and all its worktrees), beside its ssh key. The contained
// agent reads every file there and asks git in its worktree for the
// header: it finds none of them, and its task still runs (the worktree,
// below $RUNNER_TEMP, stays the agent's).
func TestRedTeamRunnerTempHidden(t *testing.T) {
	const token = "ghs-redteam-checkout-v6-token"
	const sshKey = "-----BEGIN OPENSSH PRIVATE KEY-----redteam-deploy-key"
	// Not under /tmp or a home, which the sandbox covers anyway.
	runnerTemp, err := os.MkdirTemp(".", "redteam-runner-temp-")
	if err != nil {
		t.Fatal(err)
	}
	if runnerTemp, err = filepath.Abs(runnerTemp); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runnerTemp) })
	if err := os.Chmod(runnerTemp, 0o755); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(runnerTemp, "git-credentials-6f1c.config")
	write := func(p, content string) {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(creds, "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic "+token+"\n")
	write(filepath.Join(runnerTemp, "6f1c-ssh-key"), sshKey+"\n")
	r := runRedTeam(t, "runner-temp.sh", "on", func(cmd *exec.Cmd) {
		cmd.Env = append(cmd.Env, "RUNNER_TEMP="+runnerTemp)
		gitDir := filepath.Join(cmd.Dir, ".git")
		for _, pattern := range []string{gitDir, gitDir + "/worktrees/*"} {
			if out, err := exec.Command("git", "-C", cmd.Dir, "config", "--local", "includeIf.gitdir:"+pattern+".path", creds).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	loot := r.show(t, "a/loot.txt")
	if !strings.Contains(loot, "runner temp: "+runnerTemp) {
		t.Fatalf("the agent did not look in the runner's folder:\n%s", loot)
	}
	for _, secret := range []string{token, sshKey} {
		if strings.Contains(loot, secret) || strings.Contains(r.out, secret) {
			t.Errorf("the agent read %q from $RUNNER_TEMP:\n%s", secret, loot)
		}
	}
}
