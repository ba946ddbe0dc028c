package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentConfigKeepsNoCredential: the repository's config holds what
// CI systems and tools leave there (a token in a remote's URL as GitLab
// CI clones, Azure Pipelines' and checkout's extraheader, an include of
// a credentials file, a url.insteadOf carrying a token, sendemail's
// password, a tool's token); the config an agent is shown holds none of
// them, and git still reads it, the repository's format and remotes
// included.
func TestAgentConfigKeepsNoCredential(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	secrets := []string{"glcbt-remote-token", "c2VjcmV0LWhlYWRlcg", "ghp_insteadof_token", "smtp-password-1", "hub-oauth-token", "push-url-pass"}
	set := func(args ...string) { mustGit(t, r.Root, append([]string{"config", "--local"}, args...)...) }
	set("remote.origin.url", "https://gitlab-ci-token:glcbt-remote-token@gitlab.example/group/app.git")
	set("remote.origin.pushurl", "https://bot:push-url-pass@gitlab.example/group/app.git")
	set("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
	set("remote.mirror.url", "git@github.com:o/r.git")
	set("http.https://gitlab.example/.extraheader", "AUTHORIZATION: basic c2VjcmV0LWhlYWRlcg==")
	set("url.https://x:ghp_insteadof_token@github.com/.insteadOf", "https://github.com/")
	set("sendemail.smtpPass", "smtp-password-1")
	set("hub.oauthtoken", "hub-oauth-token")
	set("include.path", filepath.Join(t.TempDir(), "creds.config"))
	set("credential.helper", "store --file /srv/creds")
	set("branch.main.remote", "origin")
	set("core.quotePath", "false")
	set("user.name", "Quote \"Name\" \\ Tab\t")

	cfg, err := AgentConfig(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(string(cfg), s) {
			t.Errorf("the agent's config holds %q:\n%s", s, cfg)
		}
	}
	for _, dropped := range []string{"include", "credential", "insteadof", "extraheader", "/srv/creds"} {
		if strings.Contains(strings.ToLower(string(cfg)), dropped) {
			t.Errorf("the agent's config keeps %s:\n%s", dropped, cfg)
		}
	}
	file := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(file, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"remote.origin.url":            "https://gitlab.example/group/app.git",
		"remote.origin.pushurl":        "https://gitlab.example/group/app.git",
		"remote.origin.fetch":          "+refs/heads/*:refs/remotes/origin/*",
		"remote.mirror.url":            "git@github.com:o/r.git",
		"branch.main.remote":           "origin",
		"core.quotepath":               "false",
		"core.repositoryformatversion": "0",
		"user.name":                    "Quote \"Name\" \\ Tab\t",
	} {
		cmd := exec.Command("git", "config", "--file", file, "--get", key)
		out, err := cmd.Output()
		if got := strings.TrimSuffix(string(out), "\n"); err != nil || got != want {
			t.Errorf("%s = %q (%v), want %q; the config:\n%s", key, got, err, want, cfg)
		}
	}
}

// TestAgentConfigSHA256: a SHA-256 repository's format stays in the
// agent's config, so its git still reads the repository's objects.
func TestAgentConfigSHA256(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustGit(t, dir, "init", "-q", "--object-format=sha256")
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := AgentConfig(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), "objectformat = \"sha256\"") {
		t.Errorf("the object format is gone:\n%s", cfg)
	}
}

func TestWithoutUserinfo(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://u:p@host/x":             "https://host/x",
		"https://token@host":             "https://host",
		"https://u%40x:p@host:8443/a@b":  "https://host:8443/a@b",
		"http://host/path@x":             "http://host/path@x",
		"git@github.com:o/r.git":         "git@github.com:o/r.git",
		"ssh://git@host/r.git":           "ssh://host/r.git",
		"/srv/git/r.git":                 "/srv/git/r.git",
		"+refs/heads/*:refs/remotes/o/*": "+refs/heads/*:refs/remotes/o/*",
	} {
		if got := withoutUserinfo(in); got != want {
			t.Errorf("withoutUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
}
