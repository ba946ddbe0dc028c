package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOutsideConfigFiles: the system config is the installation's and
// the one GIT_CONFIG_SYSTEM names, whatever the environment says (a
// program reads files by name); the global ones are GIT_CONFIG_GLOBAL's,
// XDG's and the home's; relative names are left out.
func TestOutsideConfigFiles(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"nothing set", nil, []string{"/etc/gitconfig", "/usr/local/etc/gitconfig"}},
		{"CI image", map[string]string{"GIT_CONFIG_SYSTEM": "/opt/ci/gitconfig", "GIT_CONFIG_GLOBAL": "/srv/ci/.gitconfig/", "XDG_CONFIG_HOME": "/srv/xdg", "HOME": "/home/ci"},
			[]string{"/opt/ci/gitconfig", "/etc/gitconfig", "/usr/local/etc/gitconfig", "/srv/ci/.gitconfig", "/srv/xdg/git/config", "/home/ci/.config/git/config", "/home/ci/.gitconfig"}},
		{"relative and repeated", map[string]string{"GIT_CONFIG_SYSTEM": "gitconfig", "GIT_CONFIG_GLOBAL": "/etc/gitconfig"}, []string{"/etc/gitconfig", "/usr/local/etc/gitconfig"}},
	} {
		got := OutsideConfigFiles(func(k string) string { return c.env[k] })
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: OutsideConfigFiles = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestReferencedFiles: every file a config includes (absolute, relative
// to the config's folder, from the home, under any condition, nested)
// and every store or socket its credential helpers are given is named,
// so the sandbox can conceal it; a helper's relative path and a helper
// that is a program are not files to name.
func TestReferencedFiles(t *testing.T) {
	t.Parallel()
	r := newRepo(t) // sets RUNNER_TEMP: not parallel
	dir := t.TempDir()
	home := t.TempDir()
	cfg := filepath.Join(dir, "gitconfig")
	nested := filepath.Join(dir, "nested.config")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "relative.config"), "[include]\n\tpath = "+nested+"\n")
	write(nested, "[credential]\n\thelper = cache --socket "+filepath.Join(dir, "nested.sock")+"\n")
	write(cfg, strings.Join([]string{
		"[include]", "\tpath = relative.config", "\tpath = ~/home.config", "\tpath = /srv/absent.config",
		`[includeIf "gitdir:/elsewhere/"]`, "\tpath = /srv/conditional.config",
		"[credential]", "\thelper = store --file=/srv/creds/store", "\thelper = /usr/bin/git-credential-manager",
		`[credential "https://git.example"]`, "\thelper = store --file '/srv/quoted store'", "\thelper = store --file relative-store",
		"[user]", "\tname = Someone", ""}, "\n"))
	got, err := ReferencedFiles(context.Background(), r, cfg, home)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{filepath.Join(dir, "nested.sock"), nested, filepath.Join(dir, "relative.config"),
		filepath.Join(home, "home.config"), "/srv/absent.config", "/srv/conditional.config", "/srv/creds/store", "/srv/quoted store"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("ReferencedFiles =\n%q\nwant\n%q", got, want)
	}
	if got, err := ReferencedFiles(context.Background(), r, filepath.Join(dir, "absent"), home); err != nil || got != nil {
		t.Errorf("a config that does not exist: %q, %v", got, err)
	}
}

// TestConfigFilesWorktreeConfig: with extensions.worktreeConfig, `git
// config --worktree` keeps settings (a credential too) in the main
// worktree's config.worktree and in each linked worktree's; ConfigFiles
// lists both, and the agent's copy of each keeps none of the credential
// while git still reads its settings.
func TestConfigFilesWorktreeConfig(t *testing.T) {
	t.Parallel()
	r := newRepo(t) // sets RUNNER_TEMP: not parallel
	ctx := context.Background()
	linked := filepath.Join(t.TempDir(), "linked")
	mustGit(t, r.Root, "config", "extensions.worktreeConfig", "true")
	mustGit(t, r.Root, "worktree", "add", "-q", "--detach", linked)
	mustGit(t, r.Root, "config", "--worktree", "http.extraheader", "AUTHORIZATION: bearer wt-main-token")
	mustGit(t, linked, "config", "--worktree", "url.https://x:wt-linked-token@git.example/.insteadOf", "https://git.example/")
	mustGit(t, linked, "config", "--worktree", "core.sparseCheckout", "true")
	files := ConfigFiles(r)
	perWorktree := []string{filepath.Join(r.CommonDir, "config.worktree"), filepath.Join(r.CommonDir, "worktrees", "linked", "config.worktree")}
	for _, want := range perWorktree {
		if !slices.Contains(files, want) {
			t.Errorf("ConfigFiles = %q, missing %s", files, want)
		}
	}
	for _, file := range perWorktree {
		cfg, err := AgentConfigOf(ctx, r, file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(cfg), "wt-main-token") || strings.Contains(string(cfg), "wt-linked-token") {
			t.Errorf("the agent's copy of %s keeps a credential:\n%s", file, cfg)
		}
	}
	cfg, _ := AgentConfigOf(ctx, r, perWorktree[1])
	if !strings.Contains(string(cfg), "sparsecheckout") && !strings.Contains(string(cfg), "sparseCheckout") {
		t.Errorf("the linked worktree's settings are lost:\n%s", cfg)
	}
	// A task worktree planex adds later gets git's copy of the main
	// worktree's config.worktree, without the credential.
	mustGit(t, r.Root, "config", "--worktree", "core.sparseCheckout", "false")
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	task := filepath.Join(t.TempDir(), "task")
	if err := r.AddWorktree(ctx, task, head); err != nil {
		t.Fatal(err)
	}
	admin, err := r.worktreeGitDir(task)
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile(filepath.Join(admin, "config.worktree"))
	if err != nil || strings.Contains(string(copied), "wt-main-token") || !strings.Contains(strings.ToLower(string(copied)), "sparsecheckout") {
		t.Errorf("the task worktree's config.worktree: %v\n%s", err, copied)
	}
}

// TestCredentialStores: the store helper's default files and the cache
// helper's default socket, under XDG's folders when set (often outside
// the home, which the sandbox hides anyway) and the home's.
func TestCredentialStores(t *testing.T) {
	t.Parallel()
	env := map[string]string{"XDG_CONFIG_HOME": "/srv/cfg", "XDG_CACHE_HOME": "/srv/cache", "HOME": "/home/ci"}
	got := CredentialStores(func(k string) string { return env[k] })
	want := []string{"/srv/cfg/git/credentials", "/srv/cache/git/credential/socket", "/home/ci/.config/git/credentials",
		"/home/ci/.git-credentials", "/home/ci/.cache/git/credential/socket", "/home/ci/.git-credential-cache/socket"}
	if !slices.Equal(got, want) {
		t.Errorf("CredentialStores = %q, want %q", got, want)
	}
	if got := CredentialStores(func(string) string { return "relative" }); got != nil {
		t.Errorf("relative folders: %q", got)
	}
}

// TestReferencedFilesKeysAndCookies: besides includes and credential
// helpers, a config names files that are credentials themselves: the
// ssh key actions/checkout's ssh-key input writes and names in
// core.sshCommand (-i), a TLS client key (http.sslKey, per URL too) and
// a cookie file holding a session (http.cookieFile). A contained agent
// must not open them by name either, so they are listed.
func TestReferencedFilesKeysAndCookies(t *testing.T) {
	t.Parallel()
	r := newRepo(t) // sets RUNNER_TEMP: not parallel
	dir := t.TempDir()
	home := t.TempDir()
	cfg := filepath.Join(dir, "config")
	if err := os.WriteFile(cfg, []byte(strings.Join([]string{
		"[core]", `	sshCommand = \"/usr/bin/ssh\" -i \"/srv/ci/key one\" -o StrictHostKeyChecking=yes -i/srv/ci/key2 -oIdentityFile=/srv/ci/key3`,
		"[http]", "\tsslKey = /srv/tls/client.key", "\tcookieFile = ~/.gitcookies",
		`[http "https://git.example/"]`, "\tsslKey = /srv/tls/example.key", "\tcookieFile = /srv/cookies.txt", "\tsslCert = /srv/tls/example.pem",
		"[user]", "\tname = Someone", ""}, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReferencedFiles(context.Background(), r, cfg, home)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"/srv/ci/key one", "/srv/ci/key2", "/srv/ci/key3", "/srv/tls/client.key", filepath.Join(home, ".gitcookies"),
		"/srv/tls/example.key", "/srv/cookies.txt", "/srv/tls/example.pem"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("ReferencedFiles =\n%q\nwant\n%q", got, want)
	}
}

// TestRedTeamPathGitSystemConfig: the git on PATH is a Homebrew one
// (/home/linuxbrew/.linuxbrew/bin/git, a link into its Cellar), which
// reads its system config from <prefix>/etc/gitconfig, not /etc's: an
// admin's http.extraheader there was shown to the agent as it was, as
// only /etc/gitconfig and /usr/local/etc/gitconfig were filtered. The
// config of the prefix PATH names and of the one its link leads to are
// listed now, for the agent to be shown without credentials.
func TestRedTeamPathGitSystemConfig(t *testing.T) {
	t.Parallel()
	prefix := t.TempDir()
	real := filepath.Join(prefix, "Cellar", "git", "2.47.0", "bin", "git")
	for _, d := range []string{filepath.Dir(real), filepath.Join(prefix, "bin"), filepath.Join(prefix, "etc")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(prefix, "bin", "git")); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": "/nonexistent:relative/bin:" + filepath.Join(prefix, "bin")}
	got := OutsideConfigFiles(func(k string) string { return env[k] })
	for _, want := range []string{filepath.Join(prefix, "etc", "gitconfig"), filepath.Join(prefix, "Cellar", "git", "2.47.0", "etc", "gitconfig")} {
		if !slices.Contains(got, want) {
			t.Errorf("OutsideConfigFiles = %q; want %s among them", got, want)
		}
	}
}
