package agent

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRedTeamPackageManagerGlobalConfig: a workflow's `npm config set
// --global` left a registry token in the global npmrc of the Node.js in
// the runner's tool cache (<prefix>/etc/npmrc, beside bin/node, outside
// every home), and a `pip config set --global` an index URL with a
// user's token in pip's machine-wide file: a contained agent read both.
// Each is now shown without its credentials (the mirror and the rest
// stay), and the client key the npmrc names is covered.
func TestRedTeamPackageManagerGlobalConfig(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-pkgconfig-")
	node := filepath.Join(dir, "toolcache", "node", "22.1.0", "x64")
	plant(t, dir, map[string]string{
		"toolcache/node/22.1.0/x64/bin/node": "#!/bin/sh\n",
		"toolcache/node/22.1.0/x64/etc/npmrc": "registry=https://npm.mirror.example/\n" +
			"//npm.pkg.github.com/:_authToken=loot-npm-token\n" +
			"//registry.example/:_password=bG9vdC1ucG0tcGFzc3dvcmQ=\n" +
			"keyfile=" + dir + "/keys/npm-client.key\n" +
			"proxy=http://proxyuser:loot-proxy-password@proxy.example:3128\n",
		"keys/npm-client.key": "loot-client-key",
		// The tool cache's Python and its site configuration.
		"toolcache/Python/3.12.3/x64/bin/python3": "#!/bin/sh\n",
		"toolcache/Python/3.12.3/x64/pip.conf":    "[global]\nindex-url = https://ci:loot-pip-site@pypi.corp/simple\n",
		"pip/pip.conf": "[global]\nindex-url = https://__token__:loot-pip-token@pypi.example/simple\n" +
			"extra-index-url =\n    https://ci:loot-pip-extra@other.example/simple\ntimeout = 60\n",
	})
	npmrc := filepath.Join(node, "etc", "npmrc")
	// pip's machine-wide files are /etc's, which a test does not write:
	// a file in its format is named as npm's global configuration.
	python := filepath.Join(dir, "toolcache", "Python", "3.12.3", "x64")
	env := []string{"PATH=" + filepath.Join(node, "bin") + ":" + filepath.Join(python, "bin") + ":/usr/bin:/bin", "NPM_CONFIG_GLOBALCONFIG=" + filepath.Join(dir, "pip", "pip.conf")}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c",
		"cat "+npmrc+" "+filepath.Join(python, "pip.conf")+" "+filepath.Join(dir, "pip", "pip.conf")+" "+filepath.Join(dir, "keys", "npm-client.key")+" 2>&1; true")
	if strings.Contains(out, "loot-") || strings.Contains(out, "bG9vdC1") {
		t.Errorf("the agent read a package manager's credentials:\n%s", out)
	}
	for _, kept := range []string{"registry=https://npm.mirror.example/", "index-url = https://pypi.corp/simple", "proxy=http://proxy.example:3128", "index-url = https://pypi.example/simple", "timeout = 60"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestStripConfigCredentials: which lines and URL parts are left out.
func TestStripConfigCredentials(t *testing.T) {
	t.Parallel()
	in := "registry=https://r.example/\n" +
		"//r.example/:_authToken=${NPM_TOKEN}\n" +
		"  _auth = dXNlcjpwYXNz\n" +
		"//r.example/:username=ci\n" +
		"//r.example/:_password=cGFzcw==\n" +
		"keyfile = \"/srv/k.pem\"\n" +
		"client-cert = certs/c.pem\n" +
		"[global]\nindex-url = https://u:p@pypi.example/simple # comment\n" +
		"url = git+ssh://git@host/x\n" +
		"no-equals line\n"
	want := "registry=https://r.example/\n" +
		"//r.example/:username=ci\n" +
		"keyfile = \"/srv/k.pem\"\n" +
		"client-cert = certs/c.pem\n" +
		"[global]\nindex-url = https://pypi.example/simple # comment\n" +
		"url = git+ssh://host/x\n" +
		"no-equals line\n"
	got, keys := stripConfigCredentials([]byte(in))
	if string(got) != want {
		t.Errorf("stripConfigCredentials:\n%s\nwant:\n%s", got, want)
	}
	if !slices.Equal(keys, []string{"/srv/k.pem", "certs/c.pem"}) {
		t.Errorf("key files = %q", keys)
	}
}

// TestPackageConfigFiles: the global npmrc of each Node.js on PATH and
// of npm's prefix, and the machine's own.
func TestPackageConfigFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plant(t, dir, map[string]string{"a/bin/node": "", "b/bin/npm": "", "c/bin/ls": "", "venv/bin/python": ""})
	got, _ := packageConfigFiles([]string{"PATH=" + dir + "/a/bin:" + dir + "/b/bin:" + dir + "/c/bin:" + dir + "/venv/bin:bin", "NPM_CONFIG_PREFIX=/srv/npm"})
	for _, want := range []string{dir + "/venv/pip.conf", dir + "/a/etc/npmrc", dir + "/b/etc/npmrc", "/srv/npm/etc/npmrc", "/etc/npmrc", "/etc/pip.conf"} {
		if !slices.Contains(got, want) {
			t.Errorf("packageConfigFiles = %q, missing %s", got, want)
		}
	}
	if slices.Contains(got, dir+"/c/etc/npmrc") || slices.Contains(got, dir+"/c/pip.conf") {
		t.Errorf("packageConfigFiles = %q: a folder without node or npm counted", got)
	}
}

// TestRedTeamSystemEnvironmentFile: a self-hosted runner's admin keeps
// the proxy's password and a token for every job in /etc/environment,
// which pam_env reads into each login: the variables stay with planex,
// but a contained agent read the file. It is now shown filtered as the
// step's environment is: only names the allow-list passes, no password
// in a URL. (A file under /srv stands for /etc/environment.)
func TestRedTeamSystemEnvironmentFile(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-etcenv-")
	plant(t, dir, map[string]string{"environment": "# the machine's\n" +
		`PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"` + "\n" +
		"http_proxy=http://runner:loot-proxy-password@proxy.corp:3128\n" +
		"export ARTIFACTORY_TOKEN=loot-artifactory\n" +
		"  DB_PASS=loot-db\n" +
		"LANG=C.UTF-8\n" +
		"CI_MIRROR=https://mirror:loot-mirror@repo.corp/\n"})
	env := []string{"PATH=/usr/bin:/bin"}
	c := Containment{Sandbox: box, AllowEnv: []string{"CI_MIRROR"}, environmentFile: filepath.Join(dir, "environment")}
	out := runContained(t, c, env, "cat", filepath.Join(dir, "environment"))
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read the machine's environment file's secrets:\n%s", out)
	}
	for _, kept := range []string{"# the machine's", "PATH=\"/usr/local/sbin", "LANG=C.UTF-8", "CI_MIRROR=https://repo.corp/"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the environment file lost %q:\n%s", kept, out)
		}
	}
}
