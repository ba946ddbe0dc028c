package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRedTeamEnvironmentPastTheBound: planex follows at most 64 folders
// of PATH and XDG_CONFIG_DIRS, 256 of git's configuration pairs from the
// environment and 1024 unit files of a systemd folder; what lay past the
// bound was neither read nor covered, so the agent read the npm token of
// the 65th PATH folder's node, the pip password of the 65th
// XDG_CONFIG_DIRS folder, the TLS key of the 257th GIT_CONFIG pair, and
// the environment file the 1025th unit names, whole. Each must now be
// covered, or the step refused with an error naming the bound. A
// GIT_CONFIG_COUNT git reads past leading blanks (" 1") planex read as
// no count at all.
func TestRedTeamEnvironmentPastTheBound(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-pastbound-")
	files := map[string]string{
		"node/bin/node":                 "#!/bin/sh",
		"node/etc/npmrc":                "//npm.corp/:_authToken=loot-past-path",
		"xdg/pip/pip.conf":              "[global]\nindex-url = https://ci:loot-past-xdg@pypi.corp/simple",
		"git/client.key":                "loot-past-git-config-pair",
		"git/params.key":                "loot-past-git-config-parameters",
		"git/spaced.key":                "loot-spaced-git-config-count",
		"svc/ci.env":                    "CI_TOKEN=loot-past-unit-files",
		"etc/systemd/system/zz.service": "[Service]\nEnvironmentFile=" + dir + "/svc/ci.env",
	}
	var filler []string
	for i := range maxPathDirs {
		filler = append(filler, fmt.Sprintf("/nonexistent/%d", i))
	}
	for i := range maxUnitFiles {
		files[fmt.Sprintf("etc/systemd/system/a%04d.service", i)] = "[Service]\nExecStart=/bin/true"
	}
	pairs := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(maxGitConfigPairs+1)}
	for i := range maxGitConfigPairs {
		pairs = append(pairs, fmt.Sprintf("GIT_CONFIG_KEY_%d=core.pager", i), fmt.Sprintf("GIT_CONFIG_VALUE_%d=cat", i))
	}
	pairs = append(pairs, fmt.Sprintf("GIT_CONFIG_KEY_%d=http.sslKey", maxGitConfigPairs), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s/git/client.key", maxGitConfigPairs, dir))
	params := strings.Repeat("'core.pager=cat' ", maxGitConfigPairs) + "'http.sslKey=" + dir + "/git/params.key'"
	plant(t, dir, files)
	loot := []string{"node/etc/npmrc", "xdg/pip/pip.conf", "git/client.key", "git/params.key", "svc/ci.env"}
	for _, tc := range []struct {
		name string
		env  []string
		file string
	}{
		{"PATH", []string{"PATH=" + strings.Join(filler, ":") + ":" + dir + "/node/bin:/usr/bin:/bin"}, loot[0]},
		{"XDG_CONFIG_DIRS", []string{"PATH=/usr/bin:/bin", "XDG_CONFIG_DIRS=" + strings.Join(filler, ":") + ":" + dir + "/xdg"}, loot[1]},
		{"GIT_CONFIG_COUNT", append([]string{"PATH=/usr/bin:/bin"}, pairs...), loot[2]},
		{"GIT_CONFIG_PARAMETERS", []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_PARAMETERS=" + params}, loot[3]},
		{"unit files", []string{"PATH=/usr/bin:/bin"}, loot[4]},
		// git reads the count as strtoul does, past leading blanks.
		{"GIT_CONFIG_COUNT spaced", []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_COUNT= \t1", "GIT_CONFIG_KEY_0=http.sslKey", "GIT_CONFIG_VALUE_0=" + dir + "/git/spaced.key"}, "git/spaced.key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("cat", filepath.Join(dir, tc.file))
			cmd.Dir = "/"
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cleanup, err := Containment{Sandbox: box, etcDir: filepath.Join(dir, "etc")}.PrepareContext(context.Background(), cmd, tc.env, nil, nil)
			if err != nil {
				if !errors.Is(err, ErrPastBound) {
					t.Fatalf("refused with %v; want ErrPastBound", err)
				}
				return
			}
			if err := cmd.Run(); err != nil {
				t.Logf("%v: %s", err, out.String())
			}
			cleanup()
			if strings.Contains(out.String(), "loot-") {
				t.Errorf("the agent read what lay past planex's bound: %s", out.String())
			}
		})
	}
}

// TestRedTeamShellScriptSpellings: an admin's machine-wide shell script
// (a profile.d script, a service's /etc/default file) gives a token in
// a spelling the literal stripping did not read as an assignment; the
// view of the file showed it. Each line is judged as a contained process
// reads the file.
func TestRedTeamShellScriptSpellings(t *testing.T) {
	t.Parallel()
	const tok = "ghp_L00tL00tL00tL00tL00tL00t12"
	for _, tc := range []struct{ name, script string }{
		{"continued line", "export DEPLOY_TOKEN=\\\n  " + tok + "\n"},
		{"alias", "alias deploy='DEPLOY_TOKEN=" + tok + " ./deploy.sh'\n"},
		{"quoted assignment", "export \"DEPLOY_TOKEN=" + tok + "\"\n"},
		{"append", "DEPLOY_TOKEN+=" + tok + "\n"},
		{"ansi-c quoting", "export DEPLOY_TOKEN=$'" + tok + "'\n"},
		{"default value", "export DEPLOY_TOKEN=\"${DEPLOY_TOKEN:-" + tok + "}\"\n"},
		{"printf -v", "printf -v DEPLOY_TOKEN '%s' '" + tok + "'\n"},
		{"header in a function", "deploy() {\n  curl -H \"Authorization: token " + tok + "\" https://api.corp/\n}\n"},
		{"heredoc", "cat >/tmp/creds <<EOF\n" + tok + "\nEOF\n"},
		{"declare -x", "declare -x DEPLOY_TOKEN=\"" + tok + "\"\n"},
		{"set -a", "set -a\nDEPLOY_TOKEN=" + tok + "\nset +a\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			view, _ := filterSysConfig([]byte(tc.script), filterShellURLs, nil, nil)
			if strings.Contains(string(view), "L00t") {
				t.Errorf("the view shows the token:\n%s", view)
			}
		})
	}
}

// TestRedTeamSkeletonShellFiles: an admin gives every new account a
// token through the skeleton of its home (/etc/skel/.bashrc, .profile,
// .bash_aliases), copied by useradd and readable by every uid; planex
// filtered the machine's profiles and rc files but not the skeleton's,
// and the agent read the token there.
func TestRedTeamSkeletonShellFiles(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-skel-")
	files := map[string]string{
		"etc/skel/.bashrc":       "export PS1='$ '\nexport DEPLOY_TOKEN=loot-skel-bashrc",
		"etc/skel/.profile":      "export NPM_TOKEN=\"loot-skel-profile\"",
		"etc/skel/.bash_aliases": "alias pub='curl -H \"Authorization: token ghp_l00tSkelAliasL00tSkelAlias9\" https://api.corp/'",
	}
	out := catPlanted(t, box, dir, filepath.Join(dir, "etc"), files)
	if !strings.Contains(out, "export PS1='$ '") {
		t.Errorf("the skeleton's prompt is no credential, yet hidden:\n%s", out)
	}
	if strings.Contains(out, "l00t") {
		t.Errorf("the agent read the alias's token:\n%s", out)
	}
}
