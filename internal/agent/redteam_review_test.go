package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRedTeamPipClientCertSpellings: pip's site configuration (of a
// Python on PATH: a tool cache's, a virtual environment's) names the
// client key pip presents to a private index, spelt as pip's
// configparser reads it besides "client-cert = FILE": with an
// underscore (pip folds _ to -), with a colon (configparser's other
// separator) and as the long option (--client-cert, whose dashes pip
// drops). The key, outside every home, was readable to a contained
// agent: only "client-cert =" was taken for a key file.
func TestRedTeamPipClientCertSpellings(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-pipcert-")
	files := map[string]string{
		"keys/underscore.pem": "loot-pip-underscore-key",
		"keys/colon.pem":      "loot-pip-colon-key",
		"keys/dashes.pem":     "loot-pip-dashes-key",
		"keys/upper.pem":      "loot-pip-upper-key",
		"py/bin/python3":      "#!/bin/sh",
		"py/pip.conf": "[global]\nindex-url = https://pypi.corp/simple\n" +
			"client_cert = " + dir + "/keys/underscore.pem\n" +
			"[install]\nclient-cert: " + dir + "/keys/colon.pem\n" +
			"[download]\n--client-cert=" + dir + "/keys/dashes.pem\n" +
			"[wheel]\nCLIENT_CERT : " + dir + "/keys/upper.pem",
		"keys/readme": "key-folder-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=" + filepath.Join(dir, "py", "bin") + ":/usr/bin:/bin"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestConfigSettingsPipSpellings: the settings a line is read as, by npm
// and by pip, and the key files taken from them.
func TestConfigSettingsPipSpellings(t *testing.T) {
	t.Parallel()
	for line, want := range map[string][]string{
		"client_cert = /k/a.pem\n":               {"/k/a.pem"},
		"client-cert: /k/b.pem\n":                {"/k/b.pem"},
		"--client-cert=/k/c.pem\n":               {"/k/c.pem"},
		"  Client_Cert :\t'/k/d.pem'\n":          {"/k/d.pem"},
		"//r.example/:keyfile=/k/e.pem\n":        {"/k/e.pem"},
		"keyfile = /k/f.pem\n":                   {"/k/f.pem"},
		"cert = /k/ca.pem\n":                     nil,
		"index-url = https://h:8443/simple\n":    nil,
		"@scope:registry=https://npm.example/\n": nil,
	} {
		_, got := stripConfigCredentials([]byte(line))
		if !slices.Equal(got, want) {
			t.Errorf("stripConfigCredentials(%q) key files = %q, want %q", line, got, want)
		}
	}
	if got, _ := stripConfigCredentials([]byte("token: abc\nx = 1\n")); string(got) != "x = 1\n" {
		t.Errorf("a credential key set with a colon was kept: %q", got)
	}
}

// TestRedTeamRunnerConfigGoFlagSpellings: GitLab Runner and Buildkite's
// agent read their options with Go's flag package, which takes one dash
// as two (-config FILE, --c=FILE). A runner among planex's ancestors
// started so kept its configuration, with its token, readable: only
// --config and -c were looked for.
func TestRedTeamRunnerConfigGoFlagSpellings(t *testing.T) {
	_, dir := sandboxAndHostFolder(t, "planex-runnerflag-")
	plant(t, dir, runnerFlagLayout())
	plant(t, dir, map[string]string{
		"bk.sh": `bash -c 'exec -a gitlab-runner bash gl.sh run --c="$0/gl.toml" "$1"' "$PWD" "$4"; s=$?; exit $s`,
		"gl.sh": `"$3" -test.run='^TestRunnerFlagHelper$' -test.v; s=$?; exit $s`,
	})
	cmd := exec.Command("bash", "-c", `exec -a buildkite-agent bash bk.sh start -config bk.cfg "$0"`, os.Args[0])
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLANEX_RUNNERFLAG_PROBE="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRunnerFlagHelper") {
		t.Errorf("the contained agent under the runners read what it must not (%v):\n%s", err, out)
	}
}

// runnerFlagLayout are the runners' configurations, and a file beside
// them that stays readable.
func runnerFlagLayout() map[string]string {
	return map[string]string{"gl.toml": "loot-gitlab-flag-token", "bk.cfg": "loot-buildkite-dash-token", "notes": "runner-folder-readable"}
}

// TestRunnerFlagHelper is the planex of
// TestRedTeamRunnerConfigGoFlagSpellings.
func TestRunnerFlagHelper(t *testing.T) {
	dir := os.Getenv("PLANEX_RUNNERFLAG_PROBE")
	if dir == "" {
		t.Skip("a program of TestRedTeamRunnerConfigGoFlagSpellings")
	}
	box, _ := sandboxAndHostFolder(t, "planex-runnerflag-helper-")
	checkPlantedReads(t, "", Containment{Sandbox: box}, []string{"PATH=/usr/bin:/bin"}, dir, runnerFlagLayout())
}

// TestGoFlag: the words Go's flag package reads as an option.
func TestGoFlag(t *testing.T) {
	t.Parallel()
	for w, want := range map[string][3]string{
		"-config":       {"config", "", ""},
		"--config":      {"config", "", ""},
		"--c=/x":        {"c", "/x", "joined"},
		"-config=a=b":   {"config", "a=b", "joined"},
		"-":             {"", "", ""},
		"--":            {"", "", ""},
		"---config":     {"", "", ""},
		"--=x":          {"", "", ""},
		"/opt/bk/a.cfg": {"", "", ""},
	} {
		name, v, joined := goFlag(w)
		got := [3]string{name, v, ""}
		if joined {
			got[2] = "joined"
		}
		if got != want {
			t.Errorf("goFlag(%q) = %q, want %q", w, got, want)
		}
	}
}

// TestRedTeamBuildkiteJobPathsHidden: a Buildkite job's environment
// names its agent's configuration file, hooks folder and the job's
// environment file (BUILDKITE_CONFIG_PATH, BUILDKITE_HOOKS_PATH,
// BUILDKITE_ENV_FILE). An agent set up outside /etc/buildkite-agent
// (an admin's /srv/buildkite) kept its registration token, the
// environment hook exporting every build's secrets and the job's
// session token readable to a contained agent, which finds the places
// by guessing or by the job's other files.
func TestRedTeamBuildkiteJobPathsHidden(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-bkpaths-")
	files := map[string]string{
		"bk/buildkite-agent.cfg":  "loot-bk-registration-token",
		"bk/hooks/environment":    "loot-bk-hook-secret",
		"bk/tmp/job-env-1234":     "loot-bk-job-session",
		"bk/plugins/readme":       "plugins-readable",
		"bk/builds/this/checkout": "builds-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "BUILDKITE_CONFIG_PATH=" + dir + "/bk/buildkite-agent.cfg",
		"BUILDKITE_HOOKS_PATH=" + dir + "/bk/hooks", "BUILDKITE_ENV_FILE=" + dir + "/bk/tmp/job-env-1234",
		"BUILDKITE_PLUGINS_PATH=" + dir + "/bk/plugins"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamGitSSHWrapperAmongPrograms: GIT_SSH names a wrapper script
// an admin installed with the system's programs (/usr/local/bin, where
// programs go), or by a bare name git finds on PATH. The wrapper itself
// is no secret there, but the deploy key its line names was: only a
// wrapper outside the program folders, given by its full path, was read
// for the keys it names.
func TestRedTeamGitSSHWrapperAmongPrograms(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-gitsshprog-")
	files := map[string]string{
		"ci/key_program": "loot-key-program-wrapper",
		"ci/key_bare":    "loot-key-bare-wrapper",
		"bin/ci-ssh":     "#!/bin/sh\nexec ssh -i " + dir + "/ci/key_bare \"$@\" # loot-bare-wrapper",
	}
	plant(t, dir, files)
	if err := os.Chmod(filepath.Join(dir, "bin", "ci-ssh"), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := os.CreateTemp("/usr/local/bin", "planex-redteam-gitssh-*")
	if err != nil {
		t.Skipf("cannot plant a wrapper among the system's programs: %v", err)
	}
	t.Cleanup(func() { os.Remove(w.Name()) })
	if _, err := w.WriteString("#!/bin/sh\nexec ssh -o IdentitiesOnly=yes -i " + dir + "/ci/key_program \"$@\"\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	for name, c := range map[string]struct {
		wrapper string
		files   []string
	}{
		"among the programs": {w.Name(), []string{"ci/key_program"}},
		"by a bare name":     {"ci-ssh", []string{"ci/key_bare", "bin/ci-ssh"}},
	} {
		env := []string{"PATH=" + dir + "/bin:/usr/local/bin:/usr/bin:/bin", "GIT_SSH=" + c.wrapper}
		want := map[string]string{}
		for _, f := range c.files {
			want[f] = files[f]
		}
		checkPlantedReads(t, name+": ", Containment{Sandbox: box}, env, dir, want)
	}
}

// TestGitSSHProgram: where GIT_SSH leads, as git runs it.
func TestGitSSHProgram(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plant(t, dir, map[string]string{"a/ci-ssh": "#!/bin/sh", "b/ci-ssh": "#!/bin/sh"})
	if err := os.Chmod(filepath.Join(dir, "b", "ci-ssh"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := "PATH=rel:" + dir + "/a:" + dir + "/b"
	for value, want := range map[string]string{
		"/opt/ci/ssh.sh": "/opt/ci/ssh.sh",
		"ci-ssh":         dir + "/b/ci-ssh", // a's is not executable
		"ci/ssh.sh":      "",                // relative to git's folder: the repository's own
		"no-such-ssh":    "",
		"":               "",
	} {
		if got := gitSSHProgram([]string{path, "GIT_SSH=" + value}); got != want {
			t.Errorf("gitSSHProgram(GIT_SSH=%q) = %q, want %q", value, got, want)
		}
	}
}

// TestRedTeamGitConfigFromEnvironmentFiles: git takes configuration from
// the environment as well as from files (GIT_CONFIG_COUNT with its
// GIT_CONFIG_KEY_<n>/GIT_CONFIG_VALUE_<n> pairs, as an image or a
// workflow sets them, and GIT_CONFIG_PARAMETERS, which git -c sets for
// what it starts). Only core.sshCommand was read there: a TLS client
// key, a credential store, an included file, a proxy's TLS key and a
// cookie file named so stayed readable to a contained agent.
func TestRedTeamGitConfigFromEnvironmentFiles(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-gitenvcfg-")
	files := map[string]string{
		"ci/client.key":    "loot-env-ssl-key",
		"ci/store":         "loot-env-credential-store",
		"ci/inc.gitconfig": "[http]\n\textraHeader = loot-env-include",
		"ci/proxy.key":     "loot-env-proxy-key",
		"ci/cookies":       "loot-env-cookies",
		"ci/ssh_key":       "loot-env-ssh-key",
		"ci/readme":        "ci-folder-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_COUNT=5",
		"GIT_CONFIG_KEY_0=http.sslKey", "GIT_CONFIG_VALUE_0=" + dir + "/ci/client.key",
		"GIT_CONFIG_KEY_1=credential.https://git.example.helper", "GIT_CONFIG_VALUE_1=store --file=" + dir + "/ci/store",
		"GIT_CONFIG_KEY_2=include.path", "GIT_CONFIG_VALUE_2=" + dir + "/ci/inc.gitconfig",
		"GIT_CONFIG_KEY_3=HTTP.proxySSLKey", "GIT_CONFIG_VALUE_3=" + dir + "/ci/proxy.key",
		"GIT_CONFIG_KEY_4=core.sshCommand", "GIT_CONFIG_VALUE_4=ssh -qi " + dir + "/ci/ssh_key",
		"GIT_CONFIG_PARAMETERS='user.name'='ci' 'http.cookiefile'='" + dir + "/ci/cookies'"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestEnvConfigFiles: the pairs and parameters read, bounded, and what
// names no file.
func TestEnvConfigFiles(t *testing.T) {
	t.Parallel()
	got := envConfigFiles([]string{"GIT_CONFIG_COUNT=3",
		"GIT_CONFIG_KEY_0=http.sslCert", "GIT_CONFIG_VALUE_0=/k/cert.pem",
		"GIT_CONFIG_KEY_1=user.name", "GIT_CONFIG_VALUE_1=/not/a/file",
		"GIT_CONFIG_KEY_2=http.sslKey", "GIT_CONFIG_VALUE_2=relative.key",
		"GIT_CONFIG_KEY_3=http.sslKey", "GIT_CONFIG_VALUE_3=/k/past-count.key",
		"GIT_CONFIG_PARAMETERS='http.sslkey=/k/old-format.key' 'include.path'='~/inc' 'core.sshcommand'='ssh -i /k/id'"})
	want := []string{"/k/cert.pem", "/k/old-format.key", "/k/id"}
	if !slices.Equal(got, want) {
		t.Errorf("envConfigFiles = %q, want %q", got, want)
	}
}

// TestRedTeamHiddenFoldersDotDotAfterALink: HOME, TMPDIR and a CI
// system's temporary folder (RUNNER_TEMP) are named with a ".." after a
// link (/srv/ci/tools/../home, tools leading to /srv/ci/deep/tools): the
// kernel walks the link and then up, to /srv/ci/deep/home, while the
// sandbox covered the lexically cleaned name, /srv/ci/home, no folder
// at all. The agent read the real home's and temporary folders' files.
func TestRedTeamHiddenFoldersDotDotAfterALink(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-hiddendotdot-")
	files := map[string]string{
		"ci/deep/home/.git-credentials":        "loot-dotdot-home",
		"ci/deep/tmp/planex-step/result.json":  "loot-dotdot-tmpdir",
		"ci/deep/_temp/git-credentials-1.conf": "loot-dotdot-runner-temp",
		"ci/deep/tools/readme":                 "tools-readable",
	}
	plant(t, dir, files)
	if err := os.Symlink(filepath.Join(dir, "ci", "deep", "tools"), filepath.Join(dir, "ci", "tools")); err != nil {
		t.Fatal(err)
	}
	via := dir + "/ci/tools/.."
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + via + "/home", "TMPDIR=" + via + "/tmp", "RUNNER_TEMP=" + via + "/_temp"}
	c := Containment{Sandbox: box, account: func([]string) []string { return nil }}
	checkPlantedReads(t, "", c, env, dir, files)
}

// TestRedTeamMavenSettingsOtherSpellings: Maven's settings hold
// credentials the stripper did not see: a tag with white space before
// its > (<password >…</password >, which XML and Maven's parser
// accept), a repository manager's token sent as an HTTP header
// (GitLab's documented <httpHeaders><property><name>Private-Token</name>
// <value>…</value>, in a server's configuration), and a settings file
// named by MAVEN_ARGS or MAVEN_OPTS (-s FILE, --global-settings=FILE, as a
// CI image keeps one outside every home), with the master password file
// -Dsettings.security names. The agent read all of them.
func TestRedTeamMavenSettingsOtherSpellings(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-mavenspell-")
	mvn := filepath.Join(dir, "maven")
	plant(t, dir, map[string]string{
		"maven/bin/mvn": "#!/bin/sh",
		"maven/conf/settings.xml": "<settings><servers><server><id>a</id><username>ci</username><password >loot-spaced-password</password >\n" +
			"<passphrase\n>loot-spaced-passphrase</passphrase\t></server>\n" +
			"<server><id>gitlab</id><configuration><httpHeaders><property><name>Private-Token</name><value>loot-header-token</value></property></httpHeaders></configuration></server>\n" +
			"</servers></settings>",
		"ci/settings.xml":          "<settings><servers><server><id>b</id><password>loot-args-settings</password></server></servers></settings>",
		"ci/global.xml":            "<settings><proxies><proxy><password>loot-opts-global</password></proxy></proxies></settings>",
		"ci/settings-security.xml": "<settingsSecurity><master>loot-master-password</master></settingsSecurity>",
	})
	env := []string{"PATH=" + filepath.Join(mvn, "bin") + ":/usr/bin:/bin",
		"MAVEN_ARGS=-B -s " + dir + "/ci/settings.xml",
		"MAVEN_OPTS=-Xmx1g --global-settings=" + dir + "/ci/global.xml -Dsettings.security=" + dir + "/ci/settings-security.xml"}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c",
		"cat "+filepath.Join(mvn, "conf", "settings.xml")+" "+dir+"/ci/settings.xml "+dir+"/ci/global.xml "+dir+"/ci/settings-security.xml 2>&1; true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read Maven's credentials:\n%s", out)
	}
	for _, kept := range []string{"<username>ci</username>", "<name>Private-Token</name>", "<id>b</id>", "<proxies>"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the settings lost %q:\n%s", kept, out)
		}
	}
}

// TestMavenArgFiles: the settings files mvn's options in MAVEN_ARGS and
// MAVEN_OPTS name, in each spelling.
func TestMavenArgFiles(t *testing.T) {
	t.Parallel()
	env := []string{"MAVEN_ARGS=-B -s /a/s1.xml --settings=/a/s2.xml -s/a/s3.xml -gs rel.xml --global-settings '/a/g 1.xml'",
		"MAVEN_OPTS=-Xmx1g -Dsettings.security=/a/sec.xml -gs=/a/g2.xml"}
	if got, want := mavenArgFiles(env, mavenSettingsOptions), []string{"/a/s1.xml", "/a/s2.xml", "/a/s3.xml", "/a/g 1.xml", "/a/g2.xml"}; !slices.Equal(got, want) {
		t.Errorf("settings files = %q, want %q", got, want)
	}
	if got, want := mavenArgFiles(env, mavenSecurityOptions), []string{"/a/sec.xml"}; !slices.Equal(got, want) {
		t.Errorf("security files = %q, want %q", got, want)
	}
}

// TestRedTeamCondaSystemConfig: a CI image's `conda config --system`
// left a private channel's token (the /t/<token>/ part of its URL) in
// the .condarc of the conda installation (/opt/conda), an admin a
// proxy's password in the machine's /etc/conda/condarc.d, and a client
// key named there; outside every home and readable by every uid, a
// contained agent read them. (A conda installation under the test's
// folder stands for /opt/conda, found from PATH and from CONDA_ROOT.)
func TestRedTeamCondaSystemConfig(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-conda-")
	plant(t, dir, map[string]string{
		"conda/bin/conda": "#!/bin/sh",
		"conda/.condarc": "channels:\n  - https://conda.anaconda.org/t/loot-conda-token-1/private-org\n  - conda-forge\n" +
			"channel_alias: https://conda.corp/t/loot-conda-alias\nclient_ssl_cert_key: " + dir + "/keys/conda.key\n",
		"root/condarc.d/proxy.yml": "proxy_servers:\n  https: http://ci:loot-conda-proxy@proxy.corp:3128\n",
		"keys/conda.key":           "loot-conda-client-key",
	})
	env := []string{"PATH=" + filepath.Join(dir, "conda", "bin") + ":/usr/bin:/bin", "CONDA_ROOT=" + filepath.Join(dir, "root")}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c",
		"cat "+dir+"/conda/.condarc "+dir+"/root/condarc.d/proxy.yml "+dir+"/keys/conda.key 2>&1; true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read conda's credentials:\n%s", out)
	}
	for _, kept := range []string{"https://conda.anaconda.org/private-org", "conda-forge", "http://proxy.corp:3128"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestStripCondaCredentials: tokens and URL passwords go, the rest and
// the key files named stay.
func TestStripCondaCredentials(t *testing.T) {
	t.Parallel()
	in := "channels:\n  - 'https://c.example/t/tk-1_a/org'\nclient_ssl_cert: \"/k/c.pem\" # mine\ncustom_channels:\n  x: https://u:p@h.example\nssl_verify: true\n"
	want := "channels:\n  - 'https://c.example/org'\nclient_ssl_cert: \"/k/c.pem\" # mine\ncustom_channels:\n  x: https://h.example\nssl_verify: true\n"
	got, keys := stripCondaCredentials([]byte(in))
	if string(got) != want || !slices.Equal(keys, []string{"/k/c.pem"}) {
		t.Errorf("stripCondaCredentials = %q, %q; want %q, [/k/c.pem]", got, keys, want)
	}
}

// TestRedTeamRubyToolConfigs: the Ruby images keep Bundler's
// application configuration in their gem folder (BUNDLE_APP_CONFIG=
// /usr/local/bundle), where `bundle config set --local` writes a
// private gem server's user:token; a user configuration may be moved out
// of the home (BUNDLE_USER_CONFIG), and RubyGems' gemrc (GEMRC, a list of
// files) holds a source URL with a password. All were readable; the
// installed gems stay.
func TestRedTeamRubyToolConfigs(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-rubycfg-")
	files := map[string]string{
		"bundle/config":                 "BUNDLE_GEMS__CORP__COM: \"ci:loot-bundle-app\"",
		"bundle/gems/rake-13.0/rake.rb": "gems-readable",
		"ci/bundle-user":                "BUNDLE_GEMS__CORP__COM: \"ci:loot-bundle-user\"",
		"ci/gemrc":                      ":sources:\n- https://ci:loot-gemrc@gems.corp/",
		"ci/gemrc2":                     ":sources:\n- https://ci:loot-gemrc-second@gems.corp/",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "BUNDLE_APP_CONFIG=" + dir + "/bundle", "BUNDLE_USER_CONFIG=" + dir + "/ci/bundle-user",
		"GEMRC=" + dir + "/ci/gemrc:" + dir + "/ci/gemrc2"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamSSHConfigIncludes: ssh's machine-wide configuration and a
// -F configuration GIT_SSH_COMMAND names pull other files in with
// Include (an admin's `Include /opt/ci/ssh/*.conf`), whose IdentityFile
// lines name deploy keys outside every home: only the lines of the
// named files themselves were read, so the included files' keys were
// readable. (A file of the test's in /etc/ssh/ssh_config.d stands for an
// admin's.)
func TestRedTeamSSHConfigIncludes(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-sshinclude-")
	files := map[string]string{
		"ci/extra/deploy.conf":  "Host git.example\n  IdentityFile " + dir + "/ci/key_system_include",
		"ci/cmd.conf":           "Include \"" + dir + "/ci/nested/*.conf\"",
		"ci/nested/a.conf":      "Host *\n  CertificateFile " + dir + "/ci/key_cmd_include",
		"ci/key_system_include": "loot-key-system-include",
		"ci/key_cmd_include":    "loot-key-cmd-include",
		"ci/readme":             "ci-folder-readable",
	}
	plant(t, dir, files)
	if _, err := os.Stat(systemSSHConfigDir); err != nil {
		t.Skipf("no %s on this machine: ssh's machine-wide configuration not tried", systemSSHConfigDir)
	}
	f, err := os.CreateTemp(systemSSHConfigDir, "planex-redteam-*.conf")
	if err != nil {
		t.Skipf("cannot plant in %s: %v", systemSSHConfigDir, err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	if _, err := f.WriteString("Include " + dir + "/ci/extra/*.conf\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	env := []string{"PATH=/usr/bin:/bin", "GIT_SSH_COMMAND=ssh -F " + dir + "/ci/cmd.conf"}
	delete(files, "ci/cmd.conf") // named by the command: covered itself
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamMoreToolCredentialFiles: tools' variables naming a key or
// password file outside every home (a CI image's or a workflow's):
// Terraform's Google provider's service account key, Snowflake's key
// pair, sudo's askpass program (printing the runner's sudo password),
// restic's and Borg's repository keys, Consul's token file, Ansible's
// become and connection passwords. A contained agent read each.
func TestRedTeamMoreToolCredentialFiles(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-toolcreds-")
	vars := []string{"GOOGLE_CREDENTIALS", "GOOGLE_CLOUD_KEYFILE_JSON", "GCLOUD_KEYFILE_JSON", "SNOWFLAKE_PRIVATE_KEY_PATH", "SUDO_ASKPASS",
		"RESTIC_PASSWORD_FILE", "BORG_KEY_FILE", "CONSUL_HTTP_TOKEN_FILE", "ANSIBLE_BECOME_PASSWORD_FILE", "ANSIBLE_CONNECTION_PASSWORD_FILE"}
	files := map[string]string{"ci/readme": "ci-folder-readable"}
	env := []string{"PATH=/usr/bin:/bin"}
	for _, v := range vars {
		name := "ci/" + strings.ToLower(v)
		files[name] = "loot-" + strings.ToLower(v)
		env = append(env, v+"="+filepath.Join(dir, name))
	}
	plant(t, dir, files)
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamClientConfigsMovedOutOfHome: command-line clients'
// configurations with a token or password, moved out of the home by a
// variable (a CI image's): curl's .curlrc in CURL_HOME, wget's WGETRC,
// glab's GLAB_CONFIG_DIR, hub's HUB_CONFIG, Scaleway's SCW_CONFIG_PATH,
// Hetzner Cloud's HCLOUD_CONFIG and Pulumi's credentials.json in
// PULUMI_HOME (whose plugins stay). A contained agent read each.
func TestRedTeamClientConfigsMovedOutOfHome(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-clientcfg-")
	files := map[string]string{
		"curl/.curlrc":                    "user = ci:loot-curlrc",
		"ci/wgetrc":                       "password = loot-wgetrc",
		"glab/config.yml":                 "token: loot-glab",
		"ci/hub":                          "oauth_token: loot-hub",
		"ci/scw.yaml":                     "secret_key: loot-scw",
		"ci/hcloud.toml":                  "token = \"loot-hcloud\"",
		"pulumi/credentials.json":         "{\"accessTokens\": {\"https://api.pulumi.com\": \"loot-pulumi\"}}",
		"pulumi/plugins/resource-aws/doc": "plugins-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "CURL_HOME=" + dir + "/curl", "WGETRC=" + dir + "/ci/wgetrc", "GLAB_CONFIG_DIR=" + dir + "/glab",
		"HUB_CONFIG=" + dir + "/ci/hub", "SCW_CONFIG_PATH=" + dir + "/ci/scw.yaml", "HCLOUD_CONFIG=" + dir + "/ci/hcloud.toml", "PULUMI_HOME=" + dir + "/pulumi"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamTeamCityBuildFilesHidden: a TeamCity build's environment
// names its properties file (TEAMCITY_BUILD_PROPERTIES_FILE), which
// holds the build's REST credentials and names the configuration's and
// the runner's properties files (password parameters' values) and the
// agent's home, whose conf/buildAgent.properties holds the agent's
// server token; each properties file has an XML twin. A contained
// agent read them all; the agent's other files stay.
func TestRedTeamTeamCityBuildFilesHidden(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-teamcity-")
	tmp := dir + "/agent/temp/buildTmp"
	files := map[string]string{
		"agent/temp/buildTmp/teamcity.build1.properties": "teamcity.auth.userId=TeamCityBuildId\\=1\nteamcity.auth.password=loot-tc-build-password\n" +
			"agent.home.dir=" + dir + "/agent\nteamcity.configuration.properties.file=" + tmp + "/teamcity.config1.properties\n" +
			"teamcity.runner.properties.file=" + strings.ReplaceAll(tmp, "/", "\\/") + "/teamcity.runner1.properties",
		"agent/temp/buildTmp/teamcity.build1.properties.xml": "<entry key=\"teamcity.auth.password\">loot-tc-build-xml</entry>",
		"agent/temp/buildTmp/teamcity.config1.properties":    "env.DEPLOY_TOKEN=loot-tc-config-secret",
		"agent/temp/buildTmp/teamcity.runner1.properties":    "secure.password=loot-tc-runner-secret",
		"agent/conf/buildAgent.properties":                   "authorizationToken=loot-tc-agent-token",
		"agent/conf/readme":                                  "agent-conf-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "TEAMCITY_BUILD_PROPERTIES_FILE=" + tmp + "/teamcity.build1.properties"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamNpmConfigOddCase: npm reads its npm_config_* variables
// whatever the case of their names, so a user npmrc or a global one
// named by Npm_Config_Userconfig or NPM_Config_Globalconfig is read
// like one named by the usual spellings. A contained agent read both,
// registry tokens in them; planex looked up the two usual spellings
// only.
func TestRedTeamNpmConfigOddCase(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-npmcase-")
	files := map[string]string{
		"ci/user-npmrc":   "//registry.example.com/:_authToken=loot-npm-user",
		"ci/global-npmrc": "//npm.example.com/:_authToken=loot-npm-global",
		"ci/readme":       "npm-folder-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "Npm_Config_Userconfig=" + dir + "/ci/user-npmrc", "NPM_Config_Globalconfig=" + dir + "/ci/global-npmrc"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamGradleInstallationCredentials: a Gradle installation
// (GRADLE_HOME) reads its own gradle.properties and the init scripts of
// its init.d folder, where a runner image can keep repository
// credentials. A contained agent read them; the installation's other
// files stay.
func TestRedTeamGradleInstallationCredentials(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-gradlehome-")
	files := map[string]string{
		"gradle/gradle.properties":       "repoPassword=loot-gradle-home-props",
		"gradle/init.d/repos.gradle":     "credentials { password 'loot-gradle-init' }",
		"gradle/lib/gradle-launcher.txt": "gradle-lib-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "GRADLE_HOME=" + dir + "/gradle"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}
