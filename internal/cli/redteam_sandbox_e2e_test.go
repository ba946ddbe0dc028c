//go:build linux

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/sandbox"
	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
)

// TestRedTeamSandboxHostAccess: planex's caller holds a secret file open
// as fd 7 (not close-on-exec); the contained agent reads /etc/shadow,
// every fd 7 it can reach and host devices, and commits what it got.
// As root (CI) this is also the row for root's program not being root:
// the task still commits, so planex's git works on the worktree the
// sandbox's uid wrote.
func TestRedTeamSandboxHostAccess(t *testing.T) {
	t.Parallel()
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

// TestRedTeamSandboxRunawayStep: under small limits (--sandbox-limits
// through PLANEX_SANDBOX_LIMITS) the agent forks without end, or writes a
// huge file; the step is stopped, its failure names the limit, and planex
// itself finishes the run normally.
func TestRedTeamSandboxRunawayStep(t *testing.T) {
	t.Parallel()
	rows := []struct{ script, limits, want string }{
		{"fork-bomb.sh", "processes=64", "process limit 64 hit"},
		{"huge-file.sh", "file-size=1M", "file size limit 1M hit"},
	}
	atOnce(t, len(rows), func(i int) string { return rows[i].script }, func(t *testing.T, i int) {
		row := rows[i]
		if _, err := exec.LookPath("perl"); err != nil && row.script == "fork-bomb.sh" {
			t.Skip("the fork bomb is perl's `fork while 1` (a shell gives up when a fork fails); no perl here")
		}
		r := runRedTeam(t, row.script, "on", func(cmd *exec.Cmd) {
			cmd.Env = append(cmd.Env, "PLANEX_SANDBOX_LIMITS="+row.limits)
		})
		if r.code != 1 || !strings.Contains(r.out, "T1: failed") || !strings.Contains(r.out, row.want) ||
			!strings.Contains(r.out, "done: 0 completed, 1 failed, 1 skipped") {
			t.Errorf("want planex to finish (exit 1) with T1 failed on %q, got exit %d:\n%s", row.want, r.code, r.out)
		}
		if got := r.f.branchLog(); len(got) != 0 {
			t.Errorf("the stopped task committed: %v", got)
		}
		if left := sandboxtest.Processes(t, r.tag); len(left) > 0 {
			t.Errorf("processes outlived the step: %d, first %s", len(left), left[0])
		}
	})
}
