package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/sandbox"
)

// TestRedTeamSandboxHostAccess: planex's caller holds a secret file open
// as fd 7 (not close-on-exec); the contained agent reads /etc/shadow,
// every fd 7 it can reach and host devices, and commits what it got.
// As root (CI) this is also the row for root's program not being root:
// the task still commits, so planex's git works on the worktree the
// sandbox's uid wrote.
func TestRedTeamSandboxHostAccess(t *testing.T) {
	const callerSecret = "caller-fd7-secret-31337"
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(callerSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	fd7, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fd7.Close()
	r := runRedTeam(t, "host-access.sh", "on", func(cmd *exec.Cmd) {
		cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, fd7}
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	if got := strings.Join(r.f.branchLog(), " "); got != "T1:_base|T1 T2:_left|T2" {
		t.Errorf("branch = %q", got)
	}
	loot := r.show(t, "a/loot.txt")
	if strings.Contains(loot, callerSecret) || strings.Contains(r.out, callerSecret) {
		t.Errorf("the agent read the caller's fd 7:\n%s", loot)
	}
	if strings.Contains(loot, "root:") {
		t.Errorf("the agent read /etc/shadow:\n%s", loot)
	}
	if strings.Contains(loot, "OPENED") || !strings.Contains(loot, "dev: "+strings.Join(sandbox.DevEntries(), " ")+" \n") {
		t.Errorf("the agent reached host devices:\n%s", loot)
	}
	first, _, _ := strings.Cut(loot, "\n")
	if os.Getuid() == 0 && strings.Join(strings.Fields(first), " ") != "uid 65534 groups Groups:" {
		t.Errorf("root's agent is not an unprivileged user without groups:\n%s", loot)
	}
}
