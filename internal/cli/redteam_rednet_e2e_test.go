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

// TestRedTeamHomeDoesNotCarryOver: T1's agent leaves configuration that
// shells, git, npm, curl and pip read from a home (a .bashrc, a
// .gitconfig with an alias and hooks, an .npmrc with node-options, a
// .curlrc and a pip.conf naming a proxy of its own) and a file in /tmp,
// for the steps after it. T2's agent, in the next step, finds an empty
// home of its own and an empty /tmp, and nothing planted ran, in the
// steps or in planex's own git.
func TestRedTeamHomeDoesNotCarryOver(t *testing.T) {
	t.Parallel()
	r := runRedTeam(t, "home-carry.sh", "on", func(cmd *exec.Cmd) {
		for _, kv := range cmd.Env {
			if fake, ok := strings.CutPrefix(kv, "FAKE_DIR="); ok {
				t2 := `set +e
mkdir -p b
{ echo "home=$HOME"; ls -A "$HOME" /tmp; cat "$HOME"/.bashrc "$HOME"/.gitconfig "$HOME"/.npmrc "$HOME"/.curlrc "$HOME"/.config/pip/pip.conf "$HOME"/planted.txt /tmp/planted.txt; git config --global --list; } > b/seen.txt 2>&1
git status --short >/dev/null 2>&1; git st >/dev/null 2>&1
echo T2 > b/t2.txt
`
				if err := os.WriteFile(filepath.Join(fake, "T2.sh"), []byte(t2), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	home1 := strings.TrimSpace(r.show(t, "a/home.txt"))
	seen := r.show(t, "b/seen.txt")
	if home1 == "" || strings.Contains(seen, "home="+home1+"\n") {
		t.Errorf("T2 ran in T1's home %q:\n%s", home1, seen)
	}
	if strings.Contains(seen, "PLANTED") {
		t.Errorf("T2 found what T1 planted:\n%s", seen)
	}
	entries, _ := os.ReadDir(r.mark)
	for _, e := range entries {
		t.Errorf("a planted program ran: %s", e.Name())
	}
	if r.code != 0 {
		t.Errorf("the run failed (exit %d):\n%s", r.code, r.out)
	}
}
