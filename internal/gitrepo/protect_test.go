package gitrepo

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// evil plants programs that, if anything runs them, leave a marker file
// named after themselves (with their environment in it) and otherwise
// behave like a harmless filter, so an operation that wrongly runs one
// still succeeds and only the marker tells.
type evil struct {
	t       *testing.T
	dir     string
	markers string
}

func newEvil(t *testing.T) *evil {
	t.Helper()
	e := &evil{t: t, dir: t.TempDir(), markers: t.TempDir()}
	return e
}

// prog returns the path of a program that marks name when run.
func (e *evil) prog(name string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name+".sh")
	script := "#!/bin/sh\nenv > '" + filepath.Join(e.markers, name) + "'\ncat 2>/dev/null\nexit 0\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// hooks writes every hook git knows of into dir, each marking its name.
func (e *evil) hooks(dir, prefix string) {
	e.t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	for _, h := range []string{"pre-commit", "post-commit", "post-checkout", "post-index-change", "reference-transaction",
		"pre-push", "post-merge", "post-rewrite", "pre-auto-gc", "fsmonitor-watchman", "push-to-checkout", "pre-receive",
		"update", "post-receive", "post-update", "proc-receive", "commit-msg", "prepare-commit-msg", "sendemail-validate"} {
		b, err := os.ReadFile(e.prog(prefix + h))
		if err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, h), b, 0o755); err != nil {
			e.t.Fatal(err)
		}
	}
}

// config is every setting that names a program, each marking prefix+what.
func (e *evil) config(prefix string) string {
	p := func(name string) string { return e.prog(prefix + name) }
	hooks := filepath.Join(e.dir, prefix+"hooks")
	e.hooks(hooks, prefix+"hookspath-")
	return strings.Join([]string{
		"[core]",
		"\tfsmonitor = " + p("fsmonitor"),
		"\thooksPath = " + hooks,
		"\tsshCommand = " + p("sshcommand"),
		"\taskPass = " + p("askpass"),
		"\tpager = " + p("pager"),
		"\teditor = " + p("editor"),
		"\talternateRefsCommand = " + p("alternaterefs"),
		`[filter "evil"]`,
		"\tclean = " + p("clean"),
		"\tsmudge = " + p("smudge"),
		"\trequired = true",
		`[filter "proc"]`,
		"\tprocess = " + p("process"),
		`[diff "evil"]`,
		"\ttextconv = " + p("textconv"),
		"\tcommand = " + p("diffcommand"),
		"[diff]",
		"\texternal = " + p("diffexternal"),
		`[merge "evil"]`,
		"\tdriver = " + p("mergedriver"),
		"[credential]",
		"\thelper = !" + p("credential"),
		"[commit]",
		"\tgpgSign = true",
		"[log]",
		"\tshowSignature = true",
		"[gpg]",
		"\tprogram = " + p("gpg"),
		"[gc]",
		"\tauto = 1",
		`[remote "origin"]`,
		"\tuploadpack = " + p("uploadpack"),
		"\treceivepack = " + p("receivepack"),
		"",
	}, "\n")
}

// ran lists the markers, with the environment each program saw.
func (e *evil) ran() []string {
	e.t.Helper()
	ents, err := os.ReadDir(e.markers)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, d := range ents {
		out = append(out, d.Name())
	}
	return out
}

func (e *evil) assertNothingRan() {
	e.t.Helper()
	for _, name := range e.ran() {
		env, _ := os.ReadFile(filepath.Join(e.markers, name))
		e.t.Errorf("planex's git ran %s; its environment:\n%s", name, env)
	}
}

func appendFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// cleanGit runs the test's own git, untouched by the hostile environment.
func cleanGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	off := []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "filter.evil.clean=",
		"-c", "filter.evil.smudge=", "-c", "filter.evil.required=false", "-c", "filter.proc.process="}
	cmd := exec.Command("git", append(off, args...)...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestRedTeamGitRepoAPIRunsNoPlantedProgram plants every program git can
// be told to run — in the repository's config and hooks, in the user's
// ~/.gitconfig, in attributes, in the inherited environment — and then
// drives every operation planex performs through gitrepo. None may run,
// and the operations must still give the right results.
func TestRedTeamGitRepoAPIRunsNoPlantedProgram(t *testing.T) {
	// Not parallel: the attack sits in the inherited environment (HOME,
	// GIT_* variables), which is this process's, as it is planex's.
	ctx := context.Background()
	r := newRepo(t)
	origin, _ := cloneOf(t, r)
	mustGit(t, r.Root, "remote", "add", "origin", origin)
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := newEvil(t)

	// The repository: config, hooks, attributes, alternates.
	appendFile(t, filepath.Join(r.CommonDir, "config"), e.config("repo-"))
	e.hooks(filepath.Join(r.CommonDir, "hooks"), "repo-hook-")
	appendFile(t, filepath.Join(r.CommonDir, "info", "attributes"), "* filter=evil diff=evil merge=evil\n*.txt filter=proc\n")
	appendFile(t, filepath.Join(r.CommonDir, "objects", "info", "alternates"), filepath.Join(origin, "objects")+"\n")
	// The user's global config, and one in XDG_CONFIG_HOME.
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	appendFile(t, filepath.Join(home, ".gitconfig"), "[user]\n\tname = Home User\n\temail = home@example.com\n"+e.config("global-"))
	appendFile(t, filepath.Join(home, ".config", "git", "config"), e.config("xdg-"))
	// The environment planex inherits.
	execPath := filepath.Join(e.dir, "exec-path")
	for _, name := range []string{"git-upload-pack", "git-receive-pack", "git-remote-https"} {
		b, _ := os.ReadFile(e.prog("env-exec-path-" + name))
		appendFile(t, filepath.Join(execPath, name), string(b))
		os.Chmod(filepath.Join(execPath, name), 0o755)
	}
	other := t.TempDir()
	cleanGit(t, other, "init", "-q")
	for k, v := range map[string]string{
		"GIT_EXTERNAL_DIFF":     e.prog("env-external-diff"),
		"GIT_SSH_COMMAND":       e.prog("env-ssh-command"),
		"GIT_SSH":               e.prog("env-ssh"),
		"GIT_ASKPASS":           e.prog("env-askpass"),
		"SSH_ASKPASS":           e.prog("env-ssh-askpass"),
		"GIT_PROXY_COMMAND":     e.prog("env-proxy"),
		"GIT_EDITOR":            e.prog("env-editor"),
		"GIT_EXEC_PATH":         execPath,
		"GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='" + e.prog("env-config-parameters") + "'",
		"GIT_CONFIG_COUNT":      "1",
		"GIT_CONFIG_KEY_0":      "core.hooksPath",
		"GIT_CONFIG_VALUE_0":    filepath.Join(e.dir, "global-hooks"),
		"GIT_CONFIG":            filepath.Join(home, ".gitconfig"),
		"GIT_DIR":               filepath.Join(other, ".git"),
		"GIT_WORK_TREE":         other,
		"GIT_INDEX_FILE":        filepath.Join(other, "crafted-index"),
		"GIT_OBJECT_DIRECTORY":  filepath.Join(other, ".git", "objects"),
	} {
		t.Setenv(k, v)
	}

	// Everything planex does with a repository.
	tmp := r.TempDir
	r, err = Open(ctx, r.Root)
	if err != nil {
		t.Fatal(err)
	}
	r.TempDir = tmp
	if got, err := r.Head(ctx); err != nil || got != head {
		t.Fatalf("Head = %s, %v; want %s", got, err, head)
	}
	os.WriteFile(filepath.Join(r.Root, "README.md"), []byte("user edit\n"), 0o644)
	if d, err := r.Dirty(ctx); err != nil || len(d) != 1 {
		t.Errorf("Dirty = %v, %v", d, err)
	}
	if st, err := State(ctx, r); err != nil || st.Head != head || st.Changes != 1 {
		t.Errorf("State = %+v, %v", st, err)
	}
	wt, tree, changes := taskSnapshot(ctx, t, r, head, map[string]string{"src/new.txt": "new\n", "src/old.txt": "changed\n"})
	if got := strings.Join(Paths(changes), " "); got != "src/new.txt src/old.txt" {
		t.Errorf("changes = %s", got)
	}
	if bad, err := r.SymlinkEscapes(ctx, tree, changes); err != nil || len(bad) != 0 {
		t.Errorf("SymlinkEscapes = %v, %v", bad, err)
	}
	sha, err := r.CommitChanges(ctx, head, changes, TaskMessage("s1", "T1", "work", ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateBranch(ctx, "planex/s1", sha, "", "planex: T1"); err != nil {
		t.Fatal(err)
	}
	var blob []byte
	if err := r.StreamBlobs(ctx, []string{changes[0].Blob}, func(_ string, content io.Reader) error {
		var err error
		blob, err = io.ReadAll(content)
		return err
	}); err != nil || string(blob) != "new\n" {
		t.Errorf("StreamBlobs = %q, %v", blob, err)
	}
	if err := r.ResetWorktree(ctx, wt, sha); err != nil {
		t.Fatal(err)
	}
	if tcs, err := r.TaskCommits(ctx, "planex/s1", head); err != nil || len(tcs) != 1 {
		t.Errorf("TaskCommits = %v, %v", tcs, err)
	}
	for _, args := range [][]string{
		{"show", "--format=%H%n%B", sha},
		{"diff", head, sha},
		{"log", "-1", "--format=%B", sha},
		{"status", "--porcelain"},
	} {
		if _, err := r.Git(ctx, "", args...); err != nil {
			t.Errorf("git %v: %v", args, err)
		}
	}
	if out, err := Output(ctx, r.Root, "ls-files", "-co", "--exclude-standard"); err != nil || !strings.Contains(string(out), "README.md") {
		t.Errorf("Output(ls-files) = %q, %v", out, err)
	}
	// What locate reads the history and the cache key with.
	if out, err := Output(ctx, r.Root, "-c", "core.quotepath=off", "log", "-n", "5000", "--no-merges", "--no-show-signature",
		"--no-renames", "--relative", "--format=%x00%h%x01%B%x02", "--name-only", "HEAD", "--"); err != nil || !strings.Contains(string(out), "src/") {
		t.Errorf("Output(log --name-only) = %q, %v", out, err)
	}
	if _, err := Output(ctx, r.Root, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		t.Errorf("Output(rev-parse HEAD) = %v", err)
	}
	state := t.TempDir()
	os.WriteFile(filepath.Join(state, "tasks.csv"), []byte("id\n"), 0o644)
	if _, err := saveState(ctx, r, "refs/planex/state/1", state, "planex: state"); err != nil {
		t.Fatal(err)
	}
	if err := r.RestoreDir(ctx, "refs/planex/state/1", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	a := r.WithAuth("https://github.com", "secret-token")
	if err := a.PushRef(ctx, "origin", "refs/heads/planex/s1", false, ""); err != nil {
		t.Fatal(err)
	}
	if got, err := a.RemoteRef(ctx, "origin", "refs/heads/planex/s1"); err != nil || got != sha {
		t.Errorf("RemoteRef = %s, %v; want %s", got, err, sha)
	}
	if ok, err := a.FetchRef(ctx, "origin", "refs/heads/planex/s1"); err != nil || !ok {
		t.Errorf("FetchRef = %v, %v", ok, err)
	}
	if err := a.EnsureCommit(ctx, "origin", sha); err != nil {
		t.Error(err)
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}

	e.assertNothingRan()
	// The commit carries the user's identity, read without running anything.
	if got := cleanGit(t, r.Root, "log", "-1", "--format=%an <%ae>|%cn", sha); strings.TrimSpace(got) != "Test <test@example.com>|Test" {
		t.Errorf("identity = %q (the repository's own user.name wins over ~/.gitconfig)", got)
	}
	// The user's checkout: the redirecting variables changed nothing there.
	if got := cleanGit(t, r.Root, "status", "--porcelain"); strings.TrimSpace(got) != "M README.md" {
		t.Errorf("status = %q", got)
	}
	if _, err := os.Stat(filepath.Join(other, "crafted-index")); err == nil {
		t.Error("GIT_INDEX_FILE from the environment was written")
	}
}

// TestRedTeamGitIdentityFromGlobalConfig: with the user's identity only
// in ~/.gitconfig (which planex's git does not read), commits still carry
// it; with none anywhere, planex's own.
func TestRedTeamGitIdentityFromGlobalConfig(t *testing.T) {
	// Not parallel: Open reads the identity through this process's HOME and
	// GIT_CONFIG_* variables, which the test sets.
	const homeRemote = "[remote \"home\"]\n\turl = https://home.example/r.git\n[remote \"origin\"]\n\tpushurl = https://home.example/push.git\n"
	ctx := context.Background()
	for _, c := range []struct {
		name, gitconfig, want string
	}{
		{"global", "[user]\n\tname = Home User\n\temail = home@example.com\n" + homeRemote, "Home User <home@example.com>"},
		{"include", "[include]\n\tpath = ~/.gitconfig-id\n", "Included <inc@example.com>"},
		{"none", "", "planex <planex@users.noreply.github.com>"},
		// Git cannot read it: the identity is planex's, the remotes are
		// still the repository's.
		{"unreadable", "[user\n\tname = Broken\n" + homeRemote, "planex <planex@users.noreply.github.com>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_SYSTEM"} {
				t.Setenv(k, "")
				os.Unsetenv(k)
			}
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			appendFile(t, filepath.Join(home, ".gitconfig"), c.gitconfig)
			appendFile(t, filepath.Join(home, ".gitconfig-id"), "[user]\n\tname = Included\n\temail = inc@example.com\n")
			cleanGit(t, dir, "init", "-q", "-b", "main")
			os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
			cleanGit(t, dir, "add", ".")
			cleanGit(t, dir, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-qm", "init")
			cleanGit(t, dir, "config", "remote.origin.url", "https://local.example/r.git")
			r, err := Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			// Remotes come from the repository's own config, which is all
			// planex's git reads, never from the user's.
			if got := r.RemoteURL("origin"); got != "https://local.example/r.git" {
				t.Errorf("origin = %q", got)
			}
			if got := r.RemoteURL("home"); got != "" || r.remotes["origin"].push != "" {
				t.Errorf("a remote of the user's config was taken: %q, %q", got, r.remotes["origin"].push)
			}
			head, _ := r.Head(ctx)
			sha, err := r.CommitChanges(ctx, head, nil, "empty\n")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(cleanGit(t, dir, "log", "-1", "--format=%an <%ae>", sha)); got != c.want {
				t.Errorf("author = %q, want %q", got, c.want)
			}
		})
	}
}

// TestRedTeamGitRefusesExtRemotes: a remote rewritten to ext:: (which
// runs a command) or a remote helper is refused, not run.
func TestRedTeamGitRefusesExtRemotes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	e := newEvil(t)
	for _, url := range []string{"ext::" + e.prog("ext") + " %S", "evilhelper::whatever"} {
		mustGit(t, r.Root, "config", "remote.bad.url", url)
		if _, err := r.RemoteRef(ctx, "bad", "refs/heads/main"); err == nil || !strings.Contains(err.Error(), "not allowed") {
			t.Errorf("RemoteRef via %s: %v, want a refusal", url, err)
		}
		mustGit(t, r.Root, "config", "--unset", "remote.bad.url")
	}
	e.assertNothingRan()
}

// TestRedTeamGitSafeDirectory: a checkout owned by another user (a CI
// container) still opens, because planex passes safe.directory for it.
func TestRedTeamGitSafeDirectory(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to give the repository another owner")
	}
	ctx := context.Background()
	r := newRepo(t)
	if err := filepath.Walk(r.Root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 4242, 4242)
	}); err != nil {
		t.Fatal(err)
	}
	// Plain git refuses it…
	cmd := exec.Command("git", "rev-parse", "--show-toplevel")
	cmd.Dir = r.Root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "dubious ownership") {
		t.Fatalf("plain git: %v %s (the test needs git to refuse)", err, out)
	}
	// …planex opens and works in it.
	o, err := Open(ctx, filepath.Join(r.Root, "src"))
	if err != nil {
		t.Fatal(err)
	}
	head, err := o.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wt := o.WorktreeDir("s", "T1")
	if err := o.AddWorktree(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.Snapshot(ctx, wt, head); err != nil {
		t.Fatal(err)
	}
	if err := o.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if out, err := Output(ctx, r.Root, "ls-files"); err != nil || !strings.Contains(string(out), "README.md") {
		t.Errorf("Output: %q, %v", out, err)
	}
}

// TestRedTeamGitRemoteRewritten: the agent rewrites the remote's URL to a
// repository of its own whose hooks would run on a push (with planex's
// environment, token included), or redirects an https remote to such a
// local path with insteadOf. planex keeps talking to the remote it found
// when it opened the repository, and refuses the redirect.
func TestRedTeamGitRemoteRewritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	origin, _ := cloneOf(t, r)
	mustGit(t, r.Root, "remote", "add", "origin", origin)
	mustGit(t, r.Root, "remote", "add", "gh", "https://example.invalid/octo/demo.git")
	r, err := Open(ctx, r.Root)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := r.Head(ctx)
	mustGit(t, r.Root, "update-ref", "refs/heads/planex/s1", head)

	e := newEvil(t)
	own := filepath.Join(t.TempDir(), "own.git")
	cleanGit(t, r.Root, "init", "-q", "--bare", own)
	e.hooks(filepath.Join(own, "hooks"), "own-hook-")
	mustGit(t, r.Root, "config", "remote.origin.url", own)
	mustGit(t, r.Root, "config", "remote.origin.pushurl", own)
	mustGit(t, r.Root, "config", "url."+own+".insteadOf", "https://example.invalid/")

	if err := r.PushRef(ctx, "origin", "refs/heads/planex/s1", false, ""); err != nil {
		t.Fatal(err)
	}
	if got, err := r.RemoteRef(ctx, "origin", "refs/heads/planex/s1"); err != nil || got != head {
		t.Errorf("RemoteRef(origin) = %s, %v; want %s", got, err, head)
	}
	if got := cleanGit(t, origin, "for-each-ref", "--format=%(objectname)", "refs/heads/planex/s1"); strings.TrimSpace(got) != head {
		t.Errorf("the push did not reach the original remote: %s", got)
	}
	if _, err := r.RemoteRef(ctx, "gh", "refs/heads/main"); !errors.Is(err, ErrRemoteRewritten) {
		t.Errorf("RemoteRef(gh) redirected to a local path: %v", err)
	}
	if err := r.PushRef(ctx, "gh", "refs/heads/planex/s1", false, ""); !errors.Is(err, ErrRemoteRewritten) {
		t.Errorf("PushRef(gh) redirected to a local path: %v", err)
	}
	e.assertNothingRan()
}

// TestRedTeamGitProgramsOnRelativePath: the user's PATH names folders
// relative to the working directory (., node_modules/.bin, an empty
// entry) and the repository commits an ssh and a gpg there. git runs
// both by name through PATH, from the repository, with planex's
// environment (its token included): planex's git gets PATH's absolute
// folders only, so neither runs when planex talks to an ssh remote.
func TestRedTeamGitProgramsOnRelativePath(t *testing.T) {
	// Not parallel: the planted PATH is this process's, as it is planex's.
	ctx := context.Background()
	r := newRepo(t)
	e := newEvil(t)
	for _, dir := range []string{".", "node_modules/.bin", "bin"} {
		if err := os.MkdirAll(filepath.Join(r.Root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"ssh", "gpg", "git-upload-pack"} {
			// Unlike e.prog's, it reads no input: git would wait for it.
			mark := filepath.Join(e.markers, strings.ReplaceAll(dir, "/", "-")+"-"+name)
			if err := os.WriteFile(filepath.Join(r.Root, dir, name), []byte("#!/bin/sh\nenv > '"+mark+"'\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Setenv("PATH", ".:node_modules/.bin::bin:"+os.Getenv("PATH"))
	mustGit(t, r.Root, "remote", "add", "far", "ssh://git@example.invalid/octo/demo.git")
	r, err := Open(ctx, r.Root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.RemoteRef(ctx, "far", "refs/heads/main"); err == nil {
		t.Errorf("RemoteRef over ssh to example.invalid worked")
	}
	e.assertNothingRan()
}

// TestRedTeamGitProgramsOnAbsolutePathInRepo: a workflow puts a folder
// of the checkout on PATH by its absolute name ($GITHUB_WORKSPACE/
// node_modules/.bin, a project's bin), where the repository commits an
// ssh, a gpg, a git-upload-pack and a git. planex's own git, and the
// git planex starts, must run none of them: they would run outside the
// sandbox with planex's environment.
func TestRedTeamGitProgramsOnAbsolutePathInRepo(t *testing.T) {
	// Not parallel: the planted PATH is this process's, as it is planex's.
	ctx := context.Background()
	r := newRepo(t)
	e := newEvil(t)
	var dirs []string
	for _, dir := range []string{"node_modules/.bin", "bin"} {
		abs := filepath.Join(r.Root, dir)
		if err := os.MkdirAll(abs, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, abs)
		for _, name := range []string{"ssh", "gpg", "git-upload-pack", "git"} {
			mark := filepath.Join(e.markers, strings.ReplaceAll(dir, "/", "-")+"-"+name)
			if err := os.WriteFile(filepath.Join(abs, name), []byte("#!/bin/sh\nenv > '"+mark+"'\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustGit(t, r.Root, "remote", "add", "far", "ssh://git@example.invalid/octo/demo.git")
	t.Setenv("PATH", strings.Join(append(dirs, os.Getenv("PATH")), string(os.PathListSeparator)))
	r, err := Open(ctx, r.Root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.RemoteRef(ctx, "far", "refs/heads/main"); err == nil {
		t.Errorf("RemoteRef over ssh to example.invalid worked")
	}
	e.assertNothingRan()
}

// TestRedTeamGitProgramsInWritableFolder: a folder every contained step
// may write (--sandbox-write ~/.cargo, whose bin is on PATH before the
// system's) holds a git, an ssh and a gpg a step left there. Under
// AvoidingFolders planex's own git, which runs uncontained with the token
// in its environment, finds the system's git and runs none of them; the
// same call without it runs the planted git (the row that shows the test
// can fail).
func TestRedTeamGitProgramsInWritableFolder(t *testing.T) {
	// Not parallel: the planted PATH is this process's, as it is planex's.
	r := newRepo(t)
	e := newEvil(t)
	shared := t.TempDir()
	bin := filepath.Join(shared, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ssh", "gpg", "git-upload-pack", "git"} {
		mark := filepath.Join(e.markers, "shared-"+name)
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\nenv > '"+mark+"'\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustGit(t, r.Root, "remote", "add", "far", "ssh://git@example.invalid/octo/demo.git")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx := AvoidingFolders(context.Background(), []string{""})
	if avoided(ctx) != nil {
		t.Errorf("an empty folder name is avoided: %q", avoided(ctx))
	}
	// Named relative to planex's working directory, as --sandbox-write
	// may name it.
	rel, err := filepath.Rel(mustGetwd(t), shared)
	if err != nil {
		t.Fatal(err)
	}
	ctx = AvoidingFolders(ctx, []string{rel})
	r, err = Open(ctx, r.Root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.RemoteRef(ctx, "far", "refs/heads/main"); err == nil {
		t.Errorf("RemoteRef over ssh to example.invalid worked")
	}
	if _, err := Output(ctx, r.Root, "rev-parse", "HEAD"); err != nil {
		t.Errorf("planex's git under AvoidingFolders: %v", err)
	}
	e.assertNothingRan()

	if _, err := Output(context.Background(), r.Root, "rev-parse", "HEAD"); err == nil {
		t.Error("without AvoidingFolders the planted git did not run: the row above shows nothing")
	}
	if _, err := os.Stat(filepath.Join(e.markers, "shared-git")); err != nil {
		t.Errorf("without AvoidingFolders the planted git left no marker: %v", err)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
