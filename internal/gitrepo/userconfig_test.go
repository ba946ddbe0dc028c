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
