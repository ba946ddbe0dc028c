package agent

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRedTeamPackageConfigOtherSpellings: the machine-wide npmrc and
// pip.conf spell their credentials in ways npm's and pip's parsers
// accept but a line-by-line match of the bare key missed: a quoted key
// (npm's ini unquotes it, and decodes \u escapes in a double-quoted
// one), an inline client key (npm's key=, PEM with \n escapes), and a
// proxy given without a scheme (pip's proxy = user:password@host:port).
// A contained agent read each; now none of them is shown, and the
// settings without credentials stay.
func TestRedTeamPackageConfigOtherSpellings(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-pkgspell-")
	plant(t, dir, map[string]string{
		"npm/npmrc": "registry=https://npm.mirror.example/\n" +
			`"//npm.pkg.github.com/:_authToken" = loot-quoted-token` + "\n" +
			`'//r2.example/:_authToken'=loot-single-quoted` + "\n" +
			`"//r3.example/:_auth\u0054oken"=loot-escaped-token` + "\n" +
			`key="-----BEGIN PRIVATE KEY-----\nloot-inline-key\n-----END PRIVATE KEY-----"` + "\n" +
			"//r4.example/:_authToken[]=loot-array-token\n",
		"pip/pip.conf": "[global]\nproxy = proxyuser:loot-pip-proxy@proxy.corp:3128\n" +
			"index-url = https://pypi.corp/simple\n",
	})
	env := []string{"PATH=/usr/bin:/bin", "NPM_CONFIG_GLOBALCONFIG=" + filepath.Join(dir, "npm", "npmrc"), "npm_config_globalconfig=" + filepath.Join(dir, "pip", "pip.conf")}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c",
		"cat "+filepath.Join(dir, "npm", "npmrc")+" "+filepath.Join(dir, "pip", "pip.conf")+" 2>&1; true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read a package manager's credentials:\n%s", out)
	}
	for _, kept := range []string{"registry=https://npm.mirror.example/", "proxy = proxy.corp:3128", "index-url = https://pypi.corp/simple"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamOtherToolCacheVersionsConfig: the runner's tool cache holds
// several Node.js and Python versions; an earlier job's `npm config set
// --global` (or `pip config set --site`) left a token in the
// configuration of a version that is not the one on planex's PATH. The
// agent reads that file by its path (it can list the tool cache); it is
// now shown without credentials too.
func TestRedTeamOtherToolCacheVersionsConfig(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-toolcache-")
	cache := filepath.Join(dir, "toolcache")
	plant(t, dir, map[string]string{
		"toolcache/node/22.1.0/x64/bin/node":      "#!/bin/sh",
		"toolcache/node/20.12.0/x64/bin/node":     "#!/bin/sh",
		"toolcache/node/20.12.0/x64/etc/npmrc":    "registry=https://npm.mirror.example/\n//npm.pkg.github.com/:_authToken=loot-old-node-token",
		"toolcache/Python/3.11.9/x64/pip.conf":    "[global]\nindex-url = https://ci:loot-old-python@pypi.corp/simple",
		"toolcache/Python/3.12.3/x64/bin/python3": "#!/bin/sh",
		"toolcache/PyPy/3.10.14/x64/pip.conf":     "[global]\nindex-url = https://ci:loot-pypy@pypi.corp/simple",
	})
	env := []string{"PATH=" + filepath.Join(cache, "node", "22.1.0", "x64", "bin") + ":" + filepath.Join(cache, "Python", "3.12.3", "x64", "bin") + ":/usr/bin:/bin",
		"RUNNER_TOOL_CACHE=" + cache}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c",
		"cat "+filepath.Join(cache, "node", "20.12.0", "x64", "etc", "npmrc")+" "+
			filepath.Join(cache, "Python", "3.11.9", "x64", "pip.conf")+" "+
			filepath.Join(cache, "PyPy", "3.10.14", "x64", "pip.conf")+" 2>&1; true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read another tool cache version's credentials:\n%s", out)
	}
	for _, kept := range []string{"registry=https://npm.mirror.example/", "index-url = https://pypi.corp/simple"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamSSHCommandOtherSpellings: GIT_SSH_COMMAND names its deploy
// key in ways ssh accepts but the word match missed: an -o option with
// a space instead of = (-o "IdentityFile /path", as an ssh_config line
// reads), -i joined to other flags (-vi /path), and a key the -F
// configuration names. A contained agent read each key.
func TestRedTeamSSHCommandOtherSpellings(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-sshspell-")
	files := map[string]string{
		"ci/deploy_key_a": "loot-key-spaced-option",
		"ci/deploy_key_b": "loot-key-joined-flags",
		"ci/deploy_key_c": "loot-key-in-config",
		"ci/ssh_config":   "Host *\n  IdentityFile " + dir + "/ci/deploy_key_c\n  # loot-config",
		"ci/known_hosts":  "known-hosts-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin",
		"GIT_SSH_COMMAND=ssh -o \"IdentityFile " + dir + "/ci/deploy_key_a\" -4vi " + dir + "/ci/deploy_key_b -F " + dir + "/ci/ssh_config -o UserKnownHostsFile=" + dir + "/ci/known_hosts"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamCredentialFileThroughLink: a credential variable names a
// link (GIT_SSL_KEY=/srv/ci/client.key -> /srv/secrets/k.pem); the
// agent reads the file the link leads to by its own name.
func TestRedTeamCredentialFileThroughLink(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-credlink-")
	files := map[string]string{"secrets/k.pem": "loot-linked-key"}
	plant(t, dir, files)
	if err := os.MkdirAll(filepath.Join(dir, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "secrets", "k.pem"), filepath.Join(dir, "ci", "client.key")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "GIT_SSL_KEY=" + dir + "/ci/../ci/client.key"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
	checkPlantedReads(t, "by the link: ", Containment{Sandbox: box}, env, dir, map[string]string{"ci/client.key": "loot-linked-key"})
}

// TestRedTeamEnvironmentFileBareProxyCredentials: /etc/environment
// gives an allowed proxy variable as user:password@host:port (curl and
// pip take a proxy without its scheme); the password was shown.
func TestRedTeamEnvironmentFileBareProxyCredentials(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-etcenvbare-")
	plant(t, dir, map[string]string{"environment": "ALL_PROXY=runner:loot-bare-proxy@proxy.corp:3128\nLANG=C.UTF-8"})
	c := Containment{Sandbox: box, AllowEnv: []string{"ALL_PROXY"}, environmentFile: filepath.Join(dir, "environment")}
	out := runContained(t, c, []string{"PATH=/usr/bin:/bin"}, "cat", filepath.Join(dir, "environment"))
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read the proxy's password:\n%s", out)
	}
	if !strings.Contains(out, "ALL_PROXY=proxy.corp:3128") {
		t.Errorf("the environment file lost the proxy:\n%s", out)
	}
}

// TestConfigSpellingsKept: what the stripper must not take for a
// credential: an e-mail address, a scoped registry, an ssh URL's user,
// a key file's name, a host and port.
func TestConfigSpellingsKept(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"email=ci@example.com\n",
		"@scope:registry=https://npm.example/\n",
		"url = git@github.com:org/repo.git\n",
		"//r.example/:keyfile=/srv/k.pem\n",
		"trusted-host = pypi.corp:8443\n",
		"//r.example/:username=ci\n",
		"monkey=banana\n",
	} {
		if got, _ := stripConfigCredentials([]byte(line)); string(got) != line {
			t.Errorf("stripConfigCredentials(%q) = %q, want it kept", line, got)
		}
	}
	for line, want := range map[string]string{
		`"//r/:_authToken" = t` + "\n":            "",
		`'_auth'=t` + "\n":                        "",
		`"_auth\u0054oken"=t` + "\n":              "",
		"//r/:_authToken[]=t\n":                   "",
		"KEY=\"-----BEGIN RSA PRIVATE KEY-----\n": "",
		"proxy = u:p@proxy:3128\n":                "proxy = proxy:3128\n",
		"proxy=\"u:p@proxy:3128\"\n":              "proxy=\"proxy:3128\"\n",
	} {
		if got, _ := stripConfigCredentials([]byte(line)); string(got) != want {
			t.Errorf("stripConfigCredentials(%q) = %q, want %q", line, got, want)
		}
	}
}

// TestRedTeamInvokingUsersHomeHidden: planex started through pkexec or
// doas (PKEXEC_UID, DOAS_USER) runs as another account than the user who
// started it, whose home held credentials a contained program read
// where the home's mode let others in (755, many distributions'
// default). That home is hidden now, as sudo's invoking user's was.
// An account of this machine whose home lies under /home or /var stands
// for the invoking user: a folder of the test's inside it is planted.
func TestRedTeamInvokingUsersHomeHidden(t *testing.T) {
	other := someOtherAccount(t)
	box, _ := sandboxAndHostFolder(t, "planex-invoker-")
	dir, err := os.MkdirTemp(other.HomeDir, "planex-redteam-")
	if err != nil {
		t.Skipf("cannot plant in %s: %v", other.HomeDir, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{".ssh/id_ed25519": "loot-invoker-key", ".npmrc": "loot-invoker-npm"}
	plant(t, dir, files)
	for _, v := range []string{"PKEXEC_UID=" + other.Uid, "DOAS_USER=" + other.Username, "SUDO_UID=" + other.Uid} {
		env := []string{"PATH=/usr/bin:/bin", v}
		checkPlantedReads(t, v+": ", Containment{Sandbox: box}, env, dir, files)
	}
}

// someOtherAccount is an account of the password database other than
// planex's whose home is a folder under /home or /var, or skips t.
func someOtherAccount(t *testing.T) *user.User {
	t.Helper()
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Skipf("no password file to find another account in: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 7 || f[2] == strconv.Itoa(os.Getuid()) || f[2] == "0" {
			continue
		}
		if !strings.HasPrefix(f[5], "/home/") && !strings.HasPrefix(f[5], "/var/") {
			continue
		}
		if fi, err := os.Stat(f[5]); err != nil || !fi.IsDir() {
			continue
		}
		if u, err := user.LookupId(f[2]); err == nil && u.HomeDir == f[5] {
			return u
		}
	}
	t.Skip("no other account with a home under /home or /var on this machine")
	return nil
}

// TestRedTeamGitSSHKeysNamedElsewhere: git's ssh is told its deploy key
// in places other than GIT_SSH_COMMAND: a GIT_SSH wrapper script,
// core.sshCommand in git's system configuration (GIT_CONFIG_SYSTEM
// stands for /etc/gitconfig), in the user's global one (in the hidden
// home, naming a key outside it) and in GIT_CONFIG_KEY_<n> pairs, and
// an IdentityFile line of ssh's machine-wide configuration (a file of
// the test's in /etc/ssh/ssh_config.d). A contained agent read each key.
func TestRedTeamGitSSHKeysNamedElsewhere(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-gitssh-")
	files := map[string]string{
		"ci/wrapper.sh":    "#!/bin/sh\nexec ssh -o IdentitiesOnly=yes -i " + dir + "/ci/key_wrapper \"$@\" # loot-wrapper",
		"ci/key_wrapper":   "loot-key-wrapper",
		"ci/gitconfig":     "[user]\n\tname = ci\n[Core]\n\tsshCommand = \"ssh -i \\\"" + dir + "/ci/key_system\\\"\"",
		"ci/key_system":    "loot-key-system",
		"ci/key_global":    "loot-key-global",
		"ci/key_env":       "loot-key-env",
		"ci/key_sshconfig": "loot-key-sshconfig",
		"ci/known_hosts":   "known-hosts-readable",
		"home/.gitconfig":  "[core]\n    sshcommand=ssh -i " + dir + "/ci/key_global",
	}
	plant(t, dir, files)
	if _, err := os.Stat(systemSSHConfigDir); err == nil {
		f, err := os.CreateTemp(systemSSHConfigDir, "planex-redteam-*.conf")
		if err != nil {
			t.Skipf("cannot plant in %s: %v", systemSSHConfigDir, err)
		}
		t.Cleanup(func() { os.Remove(f.Name()) })
		if _, err := f.WriteString("Host planex-redteam.invalid\n  IdentityFile " + dir + "/ci/key_sshconfig\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
	} else {
		delete(files, "ci/key_sshconfig")
		t.Logf("no %s on this machine: ssh's machine-wide configuration not tried", systemSSHConfigDir)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + dir + "/home",
		"GIT_SSH=" + dir + "/ci/wrapper.sh", "GIT_CONFIG_SYSTEM=" + dir + "/ci/gitconfig",
		"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=ci",
		"GIT_CONFIG_KEY_1=core.sshcommand", "GIT_CONFIG_VALUE_1=ssh -i " + dir + "/ci/key_env"}
	delete(files, "home/.gitconfig") // the hidden home's, read by path or not
	delete(files, "ci/gitconfig")    // git's system configuration stays readable
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestGitConfigSSHCommands: core.sshCommand values of a git
// configuration, quoting removed; other sections' keys ignored.
func TestGitConfigSSHCommands(t *testing.T) {
	t.Parallel()
	got := gitConfigSSHCommands([]string{
		"[alias]", "sshCommand = ssh -i /k/alias",
		"[ core ]", `	SSHCOMMAND = "ssh -i \"/k/a b\""`,
		`[core "x"]`, "sshcommand=ssh -i /k/sub",
		"[core]", "editor = vi", "sshCommand=ssh -i/k/c",
	})
	want := []string{`ssh -i "/k/a b"`, "ssh -i/k/c"}
	if !slices.Equal(got, want) {
		t.Errorf("gitConfigSSHCommands = %q, want %q", got, want)
	}
}

// TestRedTeamDotDotAfterALink: a credential variable's path has a ".."
// after a link (GIT_SSL_KEY=/srv/ci/tools/../client.key, tools leading
// to /srv/ci/deep/tools): git's open walks the link and then up, to
// /srv/ci/deep/client.key, while the lexically cleaned name the sandbox
// covered, /srv/ci/client.key, is no file. The agent read the key git
// uses. The same for a tool folder's token file (GRADLE_USER_HOME).
func TestRedTeamDotDotAfterALink(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-dotdot-")
	files := map[string]string{
		"ci/deep/client.key":               "loot-dotdot-key",
		"ci/deep/gradle/gradle.properties": "loot-dotdot-gradle",
		"ci/deep/ssh_key":                  "loot-dotdot-ssh",
		"ci/deep/tools/readme":             "tools-readable",
	}
	plant(t, dir, files)
	if err := os.Symlink(filepath.Join(dir, "ci", "deep", "tools"), filepath.Join(dir, "ci", "tools")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin",
		"GIT_SSL_KEY=" + dir + "/ci/tools/../client.key",
		"GRADLE_USER_HOME=" + dir + "/ci/tools/../gradle",
		"GIT_SSH_COMMAND=ssh -i " + dir + "/ci/tools/../ssh_key"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestWalkedAbs: ".." after a link is walked as the kernel walks it.
func TestWalkedAbs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "a", "b"), filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		dir + "/l/../k":        dir + "/a/k",
		dir + "/l/../b/./../k": dir + "/a/k",
		dir + "/l/k":           dir + "/l/k",
		dir + "//x/./k":        dir + "/x/k",
		dir + "/none/../k":     dir + "/k",
	} {
		if got, err := walkedAbs(in); err != nil || got != want {
			t.Errorf("walkedAbs(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

// TestRealHomeThroughALink: the account's home, as the password
// database gives it, is a link (/home/ci -> /data/ci, a home moved to
// another disk), and HOME names another folder: the agent reads the
// home by the link's target and by a second link to it. Both are
// hidden (the home is covered where it leads).
func TestRealHomeThroughALink(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-homelink-")
	files := map[string]string{"data/ci/.ssh/id_ed25519": "loot-linked-home-key", "data/other/notes": "plain-readable"}
	plant(t, dir, files)
	for _, l := range [][2]string{{"data/ci", "homelink"}, {"data/ci", "second"}} {
		if err := os.Symlink(filepath.Join(dir, l[0]), filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	c := Containment{Sandbox: box, account: func([]string) []string { return []string{filepath.Join(dir, "homelink")} }}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(dir, "override")}
	checkPlantedReads(t, "", c, env, dir, files)
	checkPlantedReads(t, "by a second link: ", c, env, dir, map[string]string{"second/.ssh/id_ed25519": "loot-linked-home-key"})
}

// TestMountAliases: the other names a folder has through the mount
// table: a bind of a folder holding it, a bind of the folder itself
// read from either side, a mount inside it; other devices not.
func TestMountAliases(t *testing.T) {
	t.Parallel()
	mounts := parseMountinfo("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n" +
		"30 22 8:2 / /data rw - ext4 /dev/sdb1 rw\n" +
		"31 22 8:2 /home /home rw - ext4 /dev/sdb1 rw\n" +
		"32 22 8:2 /home/ci/cache /var/cache/ci rw - ext4 /dev/sdb1 rw\n" +
		"33 22 8:2 /home/ci\\040x /srv/space rw - ext4 /dev/sdb1 rw\n" +
		"34 22 8:3 /home/ci /mnt/other rw - ext4 /dev/sdc1 rw\n")
	for path, want := range map[string][]string{
		"/home/ci":       {"/data/home/ci", "/var/cache/ci"},
		"/data/home/ci":  {"/home/ci", "/var/cache/ci"},
		"/home/ci x":     {"/data/home/ci x", "/srv/space"},
		"/var/cache/ci":  {"/data/home/ci/cache", "/home/ci/cache"},
		"/srv/elsewhere": nil,
	} {
		if got := mountAliases(mounts, path); !slices.Equal(got, want) {
			t.Errorf("mountAliases(%s) = %q, want %q", path, got, want)
		}
	}
}

// TestRedTeamOtherSystemEnvironmentFiles: besides /etc/environment, an
// admin gives every login or session its proxy and tokens in pam_env's
// configuration (/etc/security/pam_env.conf: NAME DEFAULT=… OVERRIDE=…)
// or in systemd's /etc/environment.d/*.conf: a contained agent read
// both whole. They are shown filtered as the step's environment is now.
// (A folder under /srv stands for /etc.)
func TestRedTeamOtherSystemEnvironmentFiles(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-etcenvs-")
	etc := filepath.Join(dir, "etc")
	plant(t, etc, map[string]string{
		"environment": "LANG=C.UTF-8",
		"security/pam_env.conf": "# pam_env\n" +
			"http_proxy DEFAULT=http://runner:loot-pam-proxy@proxy.corp:3128\n" +
			"NPM_TOKEN  DEFAULT=loot-pam-npm OVERRIDE=${NPM_TOKEN}\n" +
			"CI_PROXY   DEFAULT=http://ci:loot-pam-allowed@proxy.corp:3128\n" +
			"LANG       DEFAULT=C.UTF-8\n",
		"environment.d/50-ci.conf": "ARTIFACTORY_TOKEN=loot-envd-token\nTZ=UTC\n",
	})
	c := Containment{Sandbox: box, AllowEnv: []string{"CI_PROXY"}, etcDir: etc}
	out := runContained(t, c, []string{"PATH=/usr/bin:/bin"}, "sh", "-c", "cat "+etc+"/security/pam_env.conf "+etc+"/environment.d/50-ci.conf")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read the machine's environment files' secrets:\n%s", out)
	}
	for _, kept := range []string{"# pam_env", "CI_PROXY   DEFAULT=http://proxy.corp:3128", "LANG       DEFAULT=C.UTF-8", "TZ=UTC"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the environment files lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamPipConfigInXDGConfigDirs: pip reads a machine-wide
// pip.conf from each folder of XDG_CONFIG_DIRS, not only /etc/xdg: an
// image's XDG_CONFIG_DIRS=/opt/conf:/etc/xdg kept the index's password
// in /opt/conf/pip/pip.conf, which a contained agent read.
func TestRedTeamPipConfigInXDGConfigDirs(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-xdgdirs-")
	plant(t, dir, map[string]string{"conf/pip/pip.conf": "[global]\nindex-url = https://ci:loot-xdg-pip@pypi.corp/simple"})
	env := []string{"PATH=/usr/bin:/bin", "XDG_CONFIG_DIRS=" + filepath.Join(dir, "conf") + ":/etc/xdg"}
	out := runContained(t, Containment{Sandbox: box}, env, "cat", filepath.Join(dir, "conf", "pip", "pip.conf"))
	if strings.Contains(out, "loot-") || !strings.Contains(out, "index-url = https://pypi.corp/simple") {
		t.Errorf("pip's configuration in XDG_CONFIG_DIRS, as the agent read it:\n%s", out)
	}
}

// TestRedTeamMavenInstallationSettings: the settings.xml of the Maven
// on PATH (a tool cache's or an image's installation, conf/ beside
// bin/mvn) holds the repository manager's server passwords, outside
// every home: a contained agent read them. It is shown with its
// passwords, passphrases, private keys and URL credentials emptied now,
// mirrors and the rest kept.
func TestRedTeamMavenInstallationSettings(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-maven-")
	mvn := filepath.Join(dir, "maven", "3.9.9")
	plant(t, dir, map[string]string{
		"maven/3.9.9/bin/mvn": "#!/bin/sh",
		"maven/3.9.9/conf/settings.xml": "<settings>\n<servers>\n  <server>\n    <id>nexus</id>\n    <username>ci</username>\n    <password>loot-maven-password</password>\n  </server>\n" +
			"  <server><id>ssh</id><privateKey>" + dir + "/keys/deploy.pem</privateKey><passphrase>\n      loot-maven-passphrase\n    </passphrase></server>\n</servers>\n" +
			"<mirrors><mirror><id>m</id><url>https://ci:loot-mirror@nexus.corp/repository/maven/</url></mirror></mirrors>\n</settings>",
		"keys/deploy.pem": "loot-maven-server-key",
	})
	env := []string{"PATH=" + filepath.Join(mvn, "bin") + ":/usr/bin:/bin"}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", "cat "+filepath.Join(mvn, "conf", "settings.xml")+" "+filepath.Join(dir, "keys", "deploy.pem")+" 2>&1; true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read Maven's server credentials:\n%s", out)
	}
	for _, kept := range []string{"<username>ci</username>", "<password></password>", "<url>https://nexus.corp/repository/maven/</url>"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the settings lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamNodeLinkedIntoPath: Node.js unpacked in /opt/node-v22 with
// its node linked into a folder on PATH (/usr/local/bin/node ->
// /opt/node-v22/bin/node): npm's global prefix is the linked-to
// installation's, so `npm config set --global` wrote its token to
// /opt/node-v22/etc/npmrc, not next to the link, and a contained agent
// read it. The same for a Python linked into PATH (its site pip.conf).
func TestRedTeamNodeLinkedIntoPath(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-nodelink-")
	plant(t, dir, map[string]string{
		"opt/node-v22/bin/node":  "#!/bin/sh",
		"opt/node-v22/etc/npmrc": "registry=https://npm.mirror.example/\n//npm.pkg.github.com/:_authToken=loot-linked-node",
		"opt/py312/bin/python3":  "#!/bin/sh",
		"opt/py312/pip.conf":     "[global]\nindex-url = https://ci:loot-linked-python@pypi.corp/simple",
		"usr-local/bin/.keep":    "",
	})
	bin := filepath.Join(dir, "usr-local", "bin")
	for prog, target := range map[string]string{"node": "opt/node-v22/bin/node", "python3": "opt/py312/bin/python3"} {
		if err := os.Symlink(filepath.Join(dir, target), filepath.Join(bin, prog)); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + bin + ":/usr/bin:/bin"}
	out := runContained(t, Containment{Sandbox: box}, env, "cat", filepath.Join(dir, "opt", "node-v22", "etc", "npmrc"), filepath.Join(dir, "opt", "py312", "pip.conf"))
	if strings.Contains(out, "loot-") || !strings.Contains(out, "registry=https://npm.mirror.example/") {
		t.Errorf("the linked installations' configurations, as the agent read them:\n%s", out)
	}
}
