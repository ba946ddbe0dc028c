package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamSharedWriteFolderOnPath: a folder every contained step may
// write (--sandbox-write ~/.cargo, whose bin is on PATH before the
// system's) gets a git, an ssh and a gpg from T1's agent. planex then
// commits T1 and runs T2 with its own git, uncontained and holding the
// token: none of the planted programs runs, and the run completes.
func TestRedTeamSharedWriteFolderOnPath(t *testing.T) {
	t.Parallel()
	shared := t.TempDir()
	r := runRedTeam(t, "shared-path.sh", "on", func(cmd *exec.Cmd) {
		env := map[string]int{}
		for i, kv := range cmd.Env {
			k, _, _ := strings.Cut(kv, "=")
			env[k] = i
		}
		fake := strings.TrimPrefix(cmd.Env[env["FAKE_DIR"]], "FAKE_DIR=")
		script := filepath.Join(fake, "T1.sh")
		b, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(script, []byte(strings.ReplaceAll(string(b), "@SHARED@", shared)), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(cmd.Env, "PLANEX_SANDBOX_WRITE="+shared,
			"PATH="+filepath.Join(shared, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	if _, err := os.Stat(filepath.Join(shared, "bin", "git")); err != nil {
		t.Fatalf("the attack did not plant its git, so the row shows nothing: %v\n%s", err, r.out)
	}
	entries, _ := os.ReadDir(r.mark)
	for _, e := range entries {
		t.Errorf("a planted program ran outside the sandbox: %s", e.Name())
	}
	if r.code != 0 {
		t.Errorf("the run failed (exit %d):\n%s", r.code, r.out)
	}
}
