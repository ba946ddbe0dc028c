//go:build linux

package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/sandbox"
)

// TestRedTeamIgnoredNamedByCommandWord: the agent command's words name
// files planex keeps visible although ignored (its program, its file
// arguments), looked up relative to the checkout. A repository commits a
// link named like a word of the command ("sh", of `sh agent.sh`) leading
// to the ignored .env, and a command agent in the read-only phases reads
// .env and puts it in the plan. The link must exempt nothing: .env stays
// covered, while the untracked notes.txt is read (the attack ran).
func TestRedTeamIgnoredNamedByCommandWord(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.New(context.Background(), sandbox.ModeOn); err != nil {
		t.Skipf("needs planex's sandbox (user namespaces: root, or unprivileged ones allowed): %v", err)
	}
	const secret, notes = "dotenv-secret-via-link-3a9f", "untracked-notes-visible-c1d0"
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "base", Scope: "a/**"})
	f.write(f.repo, ".gitignore", ".env\n")
	if err := os.Symlink(".env", filepath.Join(f.repo, "sh")); err != nil {
		t.Fatal(err)
	}
	f.git("add", ".gitignore", "sh")
	f.git("commit", "-qm", "a link named like the agent command's program")
	f.base = strings.TrimSpace(f.git("rev-parse", "HEAD"))
	f.write(f.repo, ".env", "TOKEN="+secret+"\n")
	f.write(f.repo, "notes.txt", notes+"\n")
	_, places := f.runReadIgnored(t, nil, nil, notes)
	for where, text := range places {
		if strings.Contains(text, secret) {
			t.Errorf("the ignored .env, named through the committed link sh, reached %s", where)
		}
	}
}

// TestRedTeamConfigNamedKeyFiles: the repository's config names files
// that are credentials themselves: actions/checkout's ssh-key input
// writes the key and sets core.sshCommand to `ssh -i KEY`, and a
// self-hosted setup may set http.sslKey and http.cookieFile. The config
// the agent is shown keeps core.sshCommand, so it knows where the key
// is; a contained agent reads all three by name. It must get none.
func TestRedTeamConfigNamedKeyFiles(t *testing.T) {
	t.Parallel()
	root := outsideTemp(t, "redteam-keys-")
	secrets := map[string]string{"id_checkout": "ssh-private-key-7c21e0", "client.key": "tls-client-key-93d4aa", "cookies.txt": "session-cookie-5f08b1"}
	for name, v := range secrets {
		if err := os.WriteFile(filepath.Join(root, name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runRedTeam(t, "config-named-keys.sh", "on", func(cmd *exec.Cmd) {
		for _, kv := range [][2]string{
			{"core.sshCommand", `"/usr/bin/ssh" -i "` + filepath.Join(root, "id_checkout") + `" -o StrictHostKeyChecking=yes`},
			{"http.https://git.example/.sslKey", filepath.Join(root, "client.key")},
			{"http.cookieFile", filepath.Join(root, "cookies.txt")},
		} {
			set := exec.Command("git", "config", kv[0], kv[1])
			set.Dir = cmd.Dir
			if out, err := set.CombinedOutput(); err != nil {
				t.Fatalf("git config %s: %v: %s", kv[0], err, out)
			}
		}
		cmd.Env = append(cmd.Env, "RED_TEAM="+root)
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	r.loot(t, []string{"id_checkout", "read"}, secrets, "the repository's config names")
}

// TestRedTeamIgnoredLinkToOutsideSecret: the user's ignored .env is a
// link to a file in a secrets folder outside the checkout (and outside
// the homes, which are hidden anyway). A command agent in the read-only
// phases reads .env: the link's name gives the secret away unless the
// file it leads to is covered too.
func TestRedTeamIgnoredLinkToOutsideSecret(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.New(context.Background(), sandbox.ModeOn); err != nil {
		t.Skipf("needs planex's sandbox (user namespaces: root, or unprivileged ones allowed): %v", err)
	}
	const secret, notes = "linked-dotenv-secret-e41b", "untracked-notes-visible-77f3"
	store := outsideTemp(t, "redteam-linked-env-")
	target := filepath.Join(store, "app.env")
	if err := os.WriteFile(target, []byte("TOKEN="+secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "base", Scope: "a/**"})
	f.write(f.repo, ".gitignore", ".env\n")
	f.git("add", ".gitignore")
	f.git("commit", "-qm", "ignore the local .env")
	f.base = strings.TrimSpace(f.git("rev-parse", "HEAD"))
	if err := os.Symlink(target, filepath.Join(f.repo, ".env")); err != nil {
		t.Fatal(err)
	}
	f.write(f.repo, "notes.txt", notes+"\n")
	_, places := f.runReadIgnored(t, nil, nil, notes)
	for where, text := range places {
		if strings.Contains(text, secret) {
			t.Errorf("the secret the ignored .env links to reached %s", where)
		}
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "TOKEN="+secret+"\n" {
		t.Errorf("the linked file changed: %q, %v", b, err)
	}
}

// TestCheckTempHidden: a $TMPDIR (or a CI's temporary folder) that is
// the checkout or its git directory cannot be hidden, since the sandbox
// shows those folders over the cover: each step's private folder and
// home would be in sight of the others. planex refuses it before any
// step, naming it; one above or below the checkout is hidden.
func TestCheckTempHidden(t *testing.T) {
	t.Parallel()
	shown := []string{"/srv/work/repo", "/srv/work/repo/.git"}
	for _, row := range []struct {
		name   string
		env    map[string]string
		refuse bool
	}{
		{"TMPDIR is the checkout", map[string]string{"TMPDIR": "/srv/work/repo/"}, true},
		{"TMPDIR is the git directory", map[string]string{"TMPDIR": "/srv/work/repo/.git"}, true},
		{"RUNNER_TEMP is the checkout", map[string]string{"RUNNER_TEMP": "/srv/work/repo"}, true},
		{"TMPDIR above the checkout", map[string]string{"TMPDIR": "/srv/work"}, false},
		{"TMPDIR below the checkout", map[string]string{"TMPDIR": "/srv/work/repo/.tmp"}, false},
		{"TMPDIR beside it", map[string]string{"TMPDIR": "/srv/tmp"}, false},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			err := checkTempHidden(shown, func(k string) string { return row.env[k] })
			var ee *exitError
			if row.refuse != (err != nil) || (err != nil && (!errors.As(err, &ee) || ee.code != exitUsage)) {
				t.Errorf("checkTempHidden = %v, want a refusal: %v", err, row.refuse)
			}
		})
	}
}

// TestRedTeamShippedProgramsOnAbsolutePath: a workflow puts a folder of
// the checkout on PATH by its absolute name ($GITHUB_WORKSPACE/
// node_modules/.bin, as setup steps do), where the repository commits a
// cat that the steps' agents run. It must not run for any step, with
// the sandbox or without (then with the user's rights, before any plan
// is approved).
func TestRedTeamShippedProgramsOnAbsolutePath(t *testing.T) {
	t.Parallel()
	modes := []string{"off", "on"}
	atOnce(t, len(modes), func(i int) string { return "sandbox-" + modes[i] }, func(t *testing.T, i int) {
		mode := modes[i]
		f := newFixture(t)
		marks := t.TempDir()
		// cat, which the agent runs; sh, which planex starts a command
		// agent with, found on its own PATH.
		for _, prog := range []string{"cat", "sh"} {
			f.write(f.repo, "node_modules/.bin/"+prog, "#!/bin/sh\ntouch "+filepath.Join(marks, "pwned-"+prog)+"\nexec /bin/"+prog+" \"$@\"\n")
			if err := os.Chmod(filepath.Join(f.repo, "node_modules", ".bin", prog), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		f.git("add", "-f", ".")
		f.git("commit", "-qm", "tools")
		f.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
		cmd := f.command("--sandbox", mode, "--sandbox-write", marks, "-y", "add a file")
		cmd.Env = append(cmd.Env, "PATH="+filepath.Join(f.repo, "node_modules", ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("planex: %v\n%s", err, out.String())
		}
		for _, prog := range []string{"cat", "sh"} {
			if _, err := os.Stat(filepath.Join(marks, "pwned-"+prog)); err == nil {
				t.Errorf("the repository's %s ran\n%s", prog, out.String())
			}
		}
		if got := strings.Join(f.branchLog(), " "); !strings.Contains(got, "|T1") {
			t.Errorf("branch = %q\n%s", got, out.String())
		}
	})
}

// TestRedTeamIgnoredByGlobalExcludes: the user's .env is ignored only by
// their global excludes file (core.excludesFile in their global config),
// not by any .gitignore of the repository. A command agent in the
// read-only phases reads it: it must stay covered like any ignored file.
func TestRedTeamIgnoredByGlobalExcludes(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.New(context.Background(), sandbox.ModeOn); err != nil {
		t.Skipf("needs planex's sandbox (user namespaces: root, or unprivileged ones allowed): %v", err)
	}
	const secret, notes = "globally-ignored-secret-2b7d", "untracked-notes-visible-5e9a"
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "base", Scope: "a/**"})
	cfg := t.TempDir()
	f.write(cfg, "ignore", ".env\n")
	f.write(cfg, "gitconfig", "[core]\n\texcludesFile = "+filepath.Join(cfg, "ignore")+"\n")
	f.write(f.repo, ".env", "TOKEN="+secret+"\n")
	f.write(f.repo, "notes.txt", notes+"\n")
	_, places := f.runReadIgnored(t, []string{"GIT_CONFIG_GLOBAL=" + filepath.Join(cfg, "gitconfig")}, nil, notes)
	for where, text := range places {
		if strings.Contains(text, secret) {
			t.Errorf("the .env the user's global excludes file ignores reached %s", where)
		}
	}
}
