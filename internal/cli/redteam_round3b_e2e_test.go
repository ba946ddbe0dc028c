//go:build linux

package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/gitrepo"
)

// outsideTemp makes a folder readable by every uid that lies outside
// /tmp, /var/tmp and every home (the sandbox covers those anyway, so a row
// whose files sat there would pass without planex doing anything): in the
// package's own folder when the checkout is not under one of them, else
// under /srv or /mnt (root, as in CI, may make one there).
func outsideTemp(t *testing.T, prefix string) string {
	t.Helper()
	var parents []string
	if wd, err := os.Getwd(); err == nil && !underCovered(wd) {
		parents = append(parents, wd)
	}
	for _, parent := range append(parents, "/srv", "/mnt") {
		dir, err := os.MkdirTemp(parent, prefix)
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	t.Skip("no folder outside /tmp and the homes to put the attacked files in (the checkout is under one, and /srv and /mnt are not writable: run as root)")
	return ""
}

// underCovered says whether dir lies where the sandbox shows an empty
// folder or nothing: the temporary folders and the homes.
func underCovered(dir string) bool {
	covered := []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm", "/root", "/home"}
	if home, err := os.UserHomeDir(); err == nil {
		covered = append(covered, home)
	}
	for _, c := range covered {
		if c == "" {
			continue
		}
		if rel, err := filepath.Rel(c, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// writeReadable writes content at p, readable by every uid, making its
// folders.
func writeReadable(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRedTeamTmpdirHidden: planex keeps each step's private folder, its
// map cache and its egress sockets in $TMPDIR, and so do other programs
// of the same user; when $TMPDIR is set outside /tmp and every home (a
// CI image's /scratch, a user's /data/tmp), the sandbox's fresh /tmp did
// not cover it, and a step of planex run as an ordinary user (same uid)
// read other steps' folders there. Here another step's result, readable
// by every uid so the attack would work as root too, waits in $TMPDIR:
// the contained agent lists and reads the folder and finds nothing but
// what it was granted, and its task still runs (its own step folder,
// below $TMPDIR, stays its own).
func TestRedTeamTmpdirHidden(t *testing.T) {
	t.Parallel()
	const secret = "redteam-other-step-result-in-tmpdir"
	tmp := outsideTemp(t, "redteam-tmpdir-")
	writeReadable(t, filepath.Join(tmp, "planex-execute-T9-4242", "result.json"), `{"findings":"`+secret+`"}`)
	writeReadable(t, filepath.Join(tmp, "build-cache", "token.json"), `{"token":"`+secret+`"}`)
	r := runRedTeam(t, "tmpdir.sh", "on", func(cmd *exec.Cmd) {
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp, "RED_TEAM="+tmp)
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	loot := r.show(t, "a/loot.txt")
	if !strings.Contains(loot, "tmpdir: "+tmp) || !strings.Contains(loot, "own folder: discoveries.ndjson") {
		t.Fatalf("the agent did not look in $TMPDIR or lost its own folder:\n%s", loot)
	}
	for _, found := range []string{secret, "planex-execute-T9-4242", "build-cache"} {
		if strings.Contains(loot, found) {
			t.Errorf("the agent found %q in $TMPDIR:\n%s", found, loot)
		}
	}
}

// TestRedTeamSystemGitConfig: the git configuration outside the
// repository is where CI images and users keep credentials: an
// http.extraheader in the system config (GIT_CONFIG_SYSTEM, else
// /etc/gitconfig), a url.<token URL>.insteadOf and a credential store in
// the global one (GIT_CONFIG_GLOBAL, $XDG_CONFIG_HOME/git/config), files
// they include. The contained agent reads each file, what it includes,
// the store its helper names, and asks git for a credential: it finds
// none of them, while the settings git needs (user.name) are still shown.
func TestRedTeamSystemGitConfig(t *testing.T) {
	t.Parallel()
	root := outsideTemp(t, "redteam-gitconfig-")
	system := filepath.Join(root, "system.gitconfig")
	global := filepath.Join(root, "global.gitconfig")
	xdg := filepath.Join(root, "xdg", "git", "config")
	store := filepath.Join(root, "credential-store")
	included := filepath.Join(root, "included.config")
	writeReadable(t, system, "[core]\n\tautocrlf = false\n[http \"https://git.example/\"]\n\textraheader = AUTHORIZATION: bearer redteam-system-extraheader\n")
	writeReadable(t, global, "[user]\n\tname = Redteam Visible\n"+
		"[url \"https://x:redteam-insteadof-token@git.example/\"]\n\tinsteadOf = https://git.example/\n"+
		"[credential]\n\thelper = store --file "+store+"\n"+
		"[include]\n\tpath = "+included+"\n")
	writeReadable(t, xdg, "[http]\n\textraheader = AUTHORIZATION: basic redteam-xdg-header\n")
	writeReadable(t, store, "https://bot:redteam-store-password@git.example\n")
	writeReadable(t, included, "[sendemail]\n\tsmtpPass = redteam-included-password\n")
	secrets := []string{"redteam-system-extraheader", "redteam-insteadof-token", "redteam-xdg-header", "redteam-store-password", "redteam-included-password"}
	r := runRedTeam(t, "system-gitconfig.sh", "on", func(cmd *exec.Cmd) {
		cmd.Env = append(cmd.Env, "GIT_CONFIG_SYSTEM="+system, "GIT_CONFIG_GLOBAL="+global,
			"XDG_CONFIG_HOME="+filepath.Join(root, "xdg"), "RED_TEAM="+strings.Join([]string{system, global, xdg, store, included}, " "))
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	loot := r.show(t, "a/loot.txt")
	if !strings.Contains(loot, "== "+xdg) || !strings.Contains(loot, "== "+store) || !strings.Contains(loot, "user: Redteam Visible") {
		t.Fatalf("the agent did not look, or its git lost the settings it needs:\n%s", loot)
	}
	for _, s := range secrets {
		if strings.Contains(loot, s) {
			t.Errorf("the agent read %q:\n%s", s, loot)
		}
	}
	// The machine's own /etc/gitconfig is shown cleaned too: no credential
	// section (this machine's names a helper).
	etc, _, _ := strings.Cut(strings.TrimPrefix(loot, "== /etc/gitconfig\n"), "\n== ")
	if strings.Contains(etc, "credential") || strings.Contains(etc, "helper") || strings.Contains(etc, "extraheader") {
		t.Errorf("the agent's /etc/gitconfig keeps a credential setting:\n%s", etc)
	}
	// planex's own files are untouched.
	if b, _ := os.ReadFile(store); !strings.Contains(string(b), "redteam-store-password") {
		t.Errorf("the credential store changed: %q", b)
	}
}

// TestCommandUnderTmpdirRefused: an agent command whose program lies in
// a $TMPDIR the sandbox hides is refused before the first step, naming
// the folder and the --sandbox-read that would show it; one made
// readable is not.
func TestCommandUnderTmpdirRefused(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TMPDIR": "/scratch/me", "HOME": "/home/me"}
	getenv := func(k string) string { return env[k] }
	err := checkCommandVisible(context.Background(), "/scratch/me/agent.sh --fast", nil, getenv, true)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(ee.msg, "under /scratch/me") || !strings.Contains(ee.msg, "--sandbox-read /scratch/me") {
		t.Fatalf("a program in the hidden $TMPDIR: %v", err)
	}
	if err := checkCommandVisible(context.Background(), "/scratch/me/agent.sh", []string{"/scratch/me"}, getenv, true); err != nil {
		t.Errorf("a program made readable was refused: %v", err)
	}
}

// TestCommandUnderRunRefused: with the network contained the sandbox
// shows /run empty but for the links at its top, so an agent command
// whose program lies below a folder there (a USB stick under
// /run/media) is refused before the first step, naming /run; one reached
// through a link at its top (NixOS's /run/current-system) is judged by
// where the link leads, and with the network open /run is the host's.
func TestCommandUnderRunRefused(t *testing.T) {
	t.Parallel()
	needRootForRun(t)
	dir, err := os.MkdirTemp("/run", "planex-media-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	prog := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join("/run", "planex-system-"+filepath.Base(dir))
	if err := os.Symlink("/usr/bin", link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(link) })
	getenv := func(string) string { return "" }
	var ee *exitError
	if err := checkCommandVisible(context.Background(), prog+" --fast", nil, getenv, true); !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(ee.msg, "under /run") {
		t.Errorf("a program below a folder of /run, network contained: %v", err)
	}
	for _, row := range []struct {
		command   string
		contained bool
	}{{prog, false}, {link + "/env", true}, {prog, true}} {
		read := []string(nil)
		if row.command == prog && row.contained {
			read = []string{dir}
		}
		if err := checkCommandVisible(context.Background(), row.command, read, getenv, row.contained); err != nil {
			t.Errorf("%s (contained %v, readable %v) was refused: %v", row.command, row.contained, read, err)
		}
	}
}

// needRootForRun skips a test that plants files under /run, which only
// root may write.
func needRootForRun(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("planting a program under /run needs root")
	}
}

// TestRedTeamMCPConfigNotAFile: the MCP configuration is a path, in the
// Action relative to the repository, so a repository can commit it as a
// link to /dev/zero, and anyone who can write the folder can leave a FIFO
// there. planex refuses either at once (exit 2), naming the file, instead
// of reading without end or waiting for a writer.
func TestRedTeamMCPConfigNotAFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := os.Symlink("/dev/zero", filepath.Join(f.repo, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	f.git("add", ".mcp.json")
	f.git("commit", "-qm", "MCP servers")
	if err := syscall.Mkfifo(filepath.Join(f.repo, "mcp-fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".mcp.json", "mcp-fifo.json"} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := f.command("-y", "--sandbox", "off", "--agent", "anthropic", "--mcp-config", name, "add a file")
		cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
		cmd.Dir, cmd.Env = f.repo, append(f.command().Env, "ANTHROPIC_API_KEY=redteam-unused-key")
		out, err := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		var ee *exec.ExitError
		if timedOut {
			t.Fatalf("%s: planex still reading after 60 s:\n%s", name, out)
		}
		// The committed link to /dev/zero leads out of the checkout, and is
		// refused for that before it is opened.
		want := map[string]string{".mcp.json": "link out of the checkout (to /dev/zero)", "mcp-fifo.json": "not a regular file"}[name]
		if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(string(out), name) || !strings.Contains(string(out), want) {
			t.Errorf("%s: %v, want exit %d naming the file, %q:\n%s", name, err, exitUsage, want, out)
		}
	}
}

// TestRedTeamWorktreeConfigCredentials: with extensions.worktreeConfig
// set, `git config --worktree` keeps settings in the main worktree's
// .git/config.worktree and in each linked worktree's
// .git/worktrees/<name>/config.worktree, inside the git directory a
// contained agent may read; a developer's or CI's credential put there
// (an extraheader, a token in an insteadOf URL) is shown to the agent
// without it, and its git still reads the repository.
func TestRedTeamWorktreeConfigCredentials(t *testing.T) {
	t.Parallel()
	secrets := []string{"redteam-wt-main-header", "redteam-wt-linked-token"}
	linked := filepath.Join(t.TempDir(), "linked")
	r := runRedTeam(t, "worktree-config.sh", "on", func(cmd *exec.Cmd) {
		for _, args := range [][]string{
			{"-C", cmd.Dir, "config", "extensions.worktreeConfig", "true"},
			{"-C", cmd.Dir, "worktree", "add", "-q", "--detach", linked},
			{"-C", cmd.Dir, "config", "--worktree", "http.extraheader", "AUTHORIZATION: bearer " + secrets[0]},
			{"-C", linked, "config", "--worktree", "url.https://x:" + secrets[1] + "@git.example/.insteadOf", "https://git.example/"},
			{"-C", linked, "config", "--worktree", "core.sparseCheckout", "false"},
		} {
			if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v: %s", args, err, out)
			}
		}
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	loot := r.show(t, "a/loot.txt")
	if !strings.Contains(loot, "worktrees/linked/config.worktree") || !strings.Contains(loot, "head: "+r.f.base) {
		t.Fatalf("the agent did not look, or its git no longer reads the repository:\n%s", loot)
	}
	for _, s := range secrets {
		if strings.Contains(loot, s) {
			t.Errorf("the agent read %q from a worktree's config:\n%s", s, loot)
		}
	}
}

// TestAgentGitConfigConceals: what the repository's config names for
// credentials is concealed (a credential store, an included file outside
// the work tree), but not a file of the work tree an include names (the
// repository's own committed .gitconfig) nor a folder a global config's
// include names by mistake.
func TestAgentGitConfigConceals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := t.TempDir()
	store := filepath.Join(outside, "store")
	included := filepath.Join(outside, "creds.config")
	for _, p := range []string{store, included} {
		writeReadable(t, p, "")
	}
	writeReadable(t, filepath.Join(dir, ".gitconfig"), "[core]\n\tautocrlf = false\n")
	for _, args := range [][]string{
		{"init", "-q"},
		{"config", "--add", "include.path", "../.gitconfig"},
		{"config", "--add", "include.path", included},
		{"config", "credential.helper", "store --file " + store},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	repo, err := gitrepo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	// A global config (planex's own git never reads it) may name a
	// folder by mistake; git refuses to write such an include itself.
	global := filepath.Join(outside, "global.gitconfig")
	writeReadable(t, global, "[include]\n\tpath = /etc\n")
	env := map[string]string{"HOME": t.TempDir(), "GIT_CONFIG_GLOBAL": global}
	overlays, conceal, err := agentGitConfig(context.Background(), repo, []func(string) string{func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{store, included} {
		if !slices.Contains(conceal, want) {
			t.Errorf("conceal = %q, missing %s", conceal, want)
		}
	}
	for _, not := range []string{filepath.Join(dir, ".gitconfig"), "/etc"} {
		if slices.Contains(conceal, not) {
			t.Errorf("conceal = %q holds %s", conceal, not)
		}
	}
	if len(overlays) == 0 || overlays[0].Path != filepath.Join(repo.CommonDir, "config") || strings.Contains(string(overlays[0].Content), "store") {
		t.Errorf("the repository's config is not shown cleaned first: %+v", overlays)
	}
}

// TestRedTeamCredentialCacheSocket: git's credential cache keeps
// passwords in a daemon that answers whoever connects to its socket,
// $XDG_CACHE_HOME/git/credential/socket by default, and XDG_CACHE_HOME
// may lie outside every home (a CI image's /cache). A contained agent of
// the same uid (planex as an ordinary user; the socket is opened to
// every uid here so the attack would work as root too) asks it: the
// socket is covered, and it gets nothing.
func TestRedTeamCredentialCacheSocket(t *testing.T) {
	t.Parallel()
	const password = "redteam-cache-password"
	root := outsideTemp(t, "redteam-cache-")
	dir := filepath.Join(root, "cache", "git", "credential")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "socket")
	store := exec.Command("git", "credential-cache", "--socket", sock, "--timeout", "300", "store")
	store.Stdin = strings.NewReader("protocol=https\nhost=git.example\nusername=bot\npassword=" + password + "\n\n")
	if out, err := store.CombinedOutput(); err != nil {
		t.Skipf("no git credential cache here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("git", "credential-cache", "--socket", sock, "exit").Run() })
	// The daemon checks its folder is private when it starts; open it now.
	for _, p := range []string{filepath.Join(root, "cache"), filepath.Join(root, "cache", "git"), dir} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(sock, 0o777); err != nil {
		t.Fatal(err)
	}
	get := exec.Command("git", "credential-cache", "--socket", sock, "get")
	get.Stdin = strings.NewReader("protocol=https\nhost=git.example\n\n")
	if out, _ := get.Output(); !strings.Contains(string(out), password) {
		t.Fatalf("the cache does not hold the password: %q", out)
	}
	r := runRedTeam(t, "credential-cache.sh", "on", func(cmd *exec.Cmd) {
		cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+filepath.Join(root, "cache"), "RED_TEAM="+sock)
	})
	r.noSecretAnywhere(t)
	r.mustHaveRun(t, "a/t1.txt")
	loot := r.show(t, "a/loot.txt")
	if !strings.Contains(loot, "socket: "+sock) || !strings.Contains(loot, "asked") {
		t.Fatalf("the agent did not ask:\n%s", loot)
	}
	if strings.Contains(loot, password) {
		t.Errorf("the agent got the cached password:\n%s", loot)
	}
}

// TestCommandUnderAccountHomeRefused: with HOME overridden (a container
// job's /github/home), the account's own home from the password
// database is hidden too, so an agent command there is refused before
// the first step, naming it, as one under HOME is.
func TestCommandUnderAccountHomeRefused(t *testing.T) {
	me, err := user.Current()
	if err != nil || me.HomeDir == "" || me.HomeDir == "/" {
		t.Skipf("this uid has no home in the password database: %v", err)
	}
	// planex's own HOME too: the account's home is found whatever it
	// says.
	t.Setenv("HOME", "/github/home")
	env := map[string]string{"HOME": "/github/home"}
	getenv := func(k string) string { return env[k] }
	prog := filepath.Join(me.HomeDir, ".local", "bin", "agent.sh")
	err = checkCommandVisible(context.Background(), prog+" --fast", nil, getenv, true)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(ee.msg, "under "+me.HomeDir) {
		t.Fatalf("a program in the account's home with HOME overridden: %v", err)
	}
}

// TestRedTeamAgentGitConfigNamedTwice: planex's environment names
// XDG_CONFIG_HOME and HOME twice. A program reading the first value (git
// linked with glibc's getenv) and one reading the last (a shell) find
// different global configs and credential stores: each is shown
// filtered or concealed, not only those of the one value planex read.
func TestRedTeamAgentGitConfigNamedTwice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	repo, err := gitrepo.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var configs, stores, environ []string
	for _, name := range []string{"first", "last"} {
		root := t.TempDir()
		cfg := filepath.Join(root, "xdg", "git", "config")
		store := filepath.Join(root, "home", ".git-credentials")
		writeReadable(t, cfg, "[http]\n\textraheader = AUTHORIZATION: basic redteam-"+name+"\n")
		writeReadable(t, store, "https://bot:redteam-"+name+"@git.example\n")
		configs, stores = append(configs, cfg), append(stores, store)
		environ = append(environ, "XDG_CONFIG_HOME="+filepath.Join(root, "xdg"), "HOME="+filepath.Join(root, "home"))
	}
	getenvs := envGetters(func(k string) string { return "" }, environ)
	if len(getenvs) != 3 {
		t.Fatalf("%d readings of an environment naming variables twice, want getenv and both values'", len(getenvs))
	}
	overlays, conceal, err := agentGitConfig(context.Background(), repo, getenvs)
	if err != nil {
		t.Fatal(err)
	}
	for i, cfg := range configs {
		at := slices.IndexFunc(overlays, func(o agent.FileOverlay) bool { return o.Path == cfg })
		if at < 0 || strings.Contains(string(overlays[at].Content), "redteam-") {
			t.Errorf("the global config %s is not shown filtered: %+v", cfg, overlays)
		}
		if !slices.Contains(conceal, stores[i]) {
			t.Errorf("conceal = %q, missing the credential store %s", conceal, stores[i])
		}
	}
}
