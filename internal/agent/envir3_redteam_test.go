package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
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
		"svc/local.env":                 "CI_TOKEN=loot-past-local-unit-files",
		"local/usr/local/lib/systemd/system/zz.service": "[Service]\nEnvironmentFile=" + dir + "/svc/local.env",
	}
	var filler []string
	for i := range maxPathDirs {
		filler = append(filler, fmt.Sprintf("/nonexistent/%d", i))
	}
	for i := range maxUnitFiles {
		files[fmt.Sprintf("etc/systemd/system/a%04d.service", i)] = "[Service]\nExecStart=/bin/true"
		files[fmt.Sprintf("local/usr/local/lib/systemd/system/a%04d.service", i)] = "[Service]\nExecStart=/bin/true"
	}
	pairs := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(maxGitConfigPairs+1)}
	for i := range maxGitConfigPairs {
		pairs = append(pairs, fmt.Sprintf("GIT_CONFIG_KEY_%d=core.pager", i), fmt.Sprintf("GIT_CONFIG_VALUE_%d=cat", i))
	}
	pairs = append(pairs, fmt.Sprintf("GIT_CONFIG_KEY_%d=http.sslKey", maxGitConfigPairs), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s/git/client.key", maxGitConfigPairs, dir))
	params := strings.Repeat("'core.pager=cat' ", maxGitConfigPairs) + "'http.sslKey=" + dir + "/git/params.key'"
	plant(t, dir, files)
	loot := []string{"node/etc/npmrc", "xdg/pip/pip.conf", "git/client.key", "git/params.key", "svc/ci.env"}
	// Only the unit files' case has the unit folder: the others must
	// be held by their own bound.
	for _, tc := range []struct {
		name   string
		env    []string
		file   string
		etc    string
		refuse bool // whether a refusal holds the attack
	}{
		{"PATH", []string{"PATH=" + strings.Join(filler, ":") + ":" + dir + "/node/bin:/usr/bin:/bin"}, loot[0], "etc-none", true},
		{"XDG_CONFIG_DIRS", []string{"PATH=/usr/bin:/bin", "XDG_CONFIG_DIRS=" + strings.Join(filler, ":") + ":" + dir + "/xdg"}, loot[1], "etc-none", true},
		{"GIT_CONFIG_COUNT", append([]string{"PATH=/usr/bin:/bin"}, pairs...), loot[2], "etc-none", true},
		{"GIT_CONFIG_PARAMETERS", []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_PARAMETERS=" + params}, loot[3], "etc-none", true},
		{"unit files", []string{"PATH=/usr/bin:/bin"}, loot[4], "etc", true},
		// /usr/local/lib's unit folders are read as /etc's, under the
		// same bound.
		{"local unit files", []string{"PATH=/usr/bin:/bin"}, "svc/local.env", "local/etc", true},
		// git reads the count as strtoul does, past leading blanks.
		{"GIT_CONFIG_COUNT spaced", []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_COUNT= \t1", "GIT_CONFIG_KEY_0=http.sslKey", "GIT_CONFIG_VALUE_0=" + dir + "/git/spaced.key"}, "git/spaced.key", "etc-none", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("cat", filepath.Join(dir, tc.file))
			cmd.Dir = "/"
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cleanup, err := Containment{Sandbox: box, etcDir: filepath.Join(dir, tc.etc)}.PrepareContext(context.Background(), cmd, tc.env, nil, nil)
			if err != nil {
				if !tc.refuse || !errors.Is(err, ErrPastBound) {
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
		{"quotes splitting the token", "export DEPLOY_KEY=\"ghp_\"'" + tok[4:] + "'\n"},
		{"quotes splitting the prefix", "export BUILD_FLAGS=gh\"\"p_" + tok[4:] + "\n"},
		{"CRLF line ending", "export BUILD_FLAGS=" + tok + "\r\n"},
		{"byte order mark", "\ufeffexport BUILD_FLAGS=" + tok + "\n"},
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

// TestRedTeamWrapperScriptRelativeToItself: the gradle or mvn on PATH
// is a wrapper script that finds its installation from its own place
// ($0): exec "$(dirname "$0")/../gradle-c/bin/gradle", GRADLE_HOME="${0%/*}/../gradle-d",
// MAVEN_HOME=`dirname $0`/../maven-e, or through variables
// (DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"; APP_HOME="$DIR/..";
// exec "${APP_HOME}/bin/gradle"). Only absolute paths were followed,
// and the agent read the installations' passwords.
func TestRedTeamWrapperScriptRelativeToItself(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-wrapself-")
	files := map[string]string{
		"tools/gradle-c/gradle.properties":         "systemProp.https.proxyPassword=loot-wrapper-dirname",
		"tools/gradle-c/lib/gradle-launcher-8.jar": "gradle-lib-readable",
		"tools/bin-c/gradle":                       "#!/bin/sh\nexec \"$(dirname \"$0\")/../gradle-c/bin/gradle\" \"$@\"",
		"tools/gradle-d/gradle.properties":         "systemProp.https.proxyPassword=loot-wrapper-param",
		"tools/gradle-d/lib/gradle-launcher-8.jar": "gradle-lib-readable",
		"tools/bin-d/gradle":                       "#!/bin/sh\nGRADLE_HOME=\"${0%/*}/../gradle-d\"\nexport GRADLE_HOME\nexec \"$GRADLE_HOME/bin/gradle\" \"$@\"",
		"tools/maven-e/conf/settings.xml":          "<settings><servers><server><password>loot-wrapper-maven</password></server></servers></settings>",
		"tools/bin-e/mvn":                          "#!/bin/sh\nMAVEN_HOME=`dirname $0`/../maven-e\nexec \"$MAVEN_HOME/bin/mvn\" \"$@\"",
		"tools/gradle-f/init.d/corp.gradle":        "credentials { password 'loot-wrapper-variables' }",
		"tools/gradle-f/lib/gradle-launcher-8.jar": "gradle-lib-readable",
		"tools/bin-f/gradle":                       "#!/bin/bash\nDIR=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\nAPP_HOME=\"$DIR/../gradle-f\"\nexec \"${APP_HOME}/bin/gradle\" \"$@\"",
	}
	plant(t, dir, files)
	env := []string{"PATH=" + strings.Join([]string{dir + "/tools/bin-c", dir + "/tools/bin-d", dir + "/tools/bin-e", dir + "/tools/bin-f", "/usr/bin", "/bin"}, ":")}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamCargoConfigSpellings: a Cargo configuration planex shows
// filtered gives a token in a spelling the filter did not read: an [env]
// variable as an inline table ({ value = "…", force = true }), as a
// table of its own ([env.NPM_TOKEN]) or a dotted key (env.NPM_TOKEN.value),
// or a credential provider's command line holding the token
// (cargo:token-from-stdout echo …).
func TestRedTeamCargoConfigSpellings(t *testing.T) {
	t.Parallel()
	const tok = "ghp_L00tL00tL00tL00tL00t123"
	for _, config := range []string{
		"[env]\nREGISTRY_CRED = { value = \"" + tok + "\", force = true }\n",
		"[env.NPM_TOKEN]\nvalue = \"L00t\"\n",
		"env.NPM_TOKEN.value = \"L00t\"\n",
		"[registries.corp]\ncredential-provider = [\"cargo:token-from-stdout\", \"echo\", \"" + tok + "\"]\n",
		"[registry]\nglobal-credential-providers = [\"cargo:token-from-stdout echo " + tok + "\"]\n",
		"[registries.corp]\ncredential-provider = [\n  \"cargo:token-from-stdout\",\n  \"echo\",\n  \"" + tok + "\",\n]\n",
	} {
		view, _ := stripCargoCredentials([]byte(config))
		if strings.Contains(string(view), "L00t") {
			t.Errorf("the view shows the token: %q", view)
		}
	}
}

// TestRedTeamBrewPrefixVar: the Homebrew prefix a hidden home holds for
// PATH was shown whole, its var folder too, where Homebrew's services
// keep their data (a PostgreSQL cluster's files, Redis's dump, their
// logs): the agent read the database of the machine's owner. The prefix
// is shown but for var.
func TestRedTeamBrewPrefixVar(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-brewvar-")
	brew := filepath.Join(dir, "home", "linuxbrew")
	files := map[string]string{
		"home/linuxbrew/.linuxbrew/bin/hello":                   "brew tool",
		"home/linuxbrew/.linuxbrew/etc/hello.conf":              "brew config",
		"home/linuxbrew/.linuxbrew/var/postgresql@16/base/1/42": "loot-brew-var-database",
		"home/linuxbrew/.linuxbrew/var/log/redis.log":           "loot-brew-var-log",
	}
	plant(t, dir, files)
	plant(t, dir, map[string]string{"passwd": "linuxbrew:x:1003:1003::" + brew + ":/bin/bash"})
	env := []string{"PATH=" + filepath.Join(brew, ".linuxbrew", "bin") + ":/usr/bin:/bin"}
	checkPlantedReads(t, "", Containment{Sandbox: box, passwdFile: filepath.Join(dir, "passwd")}, env, dir, files)
}

// TestRedTeamOtherHomesPastTheBound: a shared machine has more people's
// accounts than planex hides homes of (512); the homes past the bound
// were shown, and the agent read the token in the 513th. Those past the
// bound are hidden with the folder that holds them.
func TestRedTeamOtherHomesPastTheBound(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-manyhomes-")
	files := map[string]string{fmt.Sprintf("people/u%03d/.npmrc", maxOtherHomes): "//registry.npmjs.org/:_authToken=loot-home-past-bound"}
	var passwd []string
	for i := 0; i <= maxOtherHomes; i++ {
		home := filepath.Join(dir, "people", fmt.Sprintf("u%03d", i))
		files[fmt.Sprintf("people/u%03d/.keep", i)] = "loot-home-kept"
		passwd = append(passwd, fmt.Sprintf("u%03d:x:%d:%d::%s:/bin/sh", i, 2000+i, 2000+i, home))
	}
	plant(t, dir, files)
	plant(t, dir, map[string]string{"passwd": strings.Join(passwd, "\n")})
	out := runContained(t, Containment{Sandbox: box, passwdFile: filepath.Join(dir, "passwd")}, []string{"PATH=/usr/bin:/bin"},
		"sh", "-c", fmt.Sprintf("cat %s/people/u%03d/.npmrc %s/people/u000/.keep 2>&1; true", dir, maxOtherHomes, dir))
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read another account's home:\n%s", out)
	}
}

// TestRedTeamSourcedShellFiles: a machine-wide profile script planex
// shows filtered sources another file with the secrets (set -a; .
// /opt/ci/secrets.env; set +a, or source /srv/ci/env.sh): that file lies
// outside every folder planex filters, and the agent read it whole.
func TestRedTeamSourcedShellFiles(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-sourced-")
	files := map[string]string{
		"etc/profile.d/ci.sh": "set -a\n. " + dir + "/opt/ci/secrets.env\nset +a\n[ -r \"" + dir + "/srv/env.sh\" ] && source \"" + dir + "/srv/env.sh\"",
		"opt/ci/secrets.env":  "DEPLOY_TOKEN=loot-sourced-set-a\nREGISTRY=https://ci:loot-sourced-url@reg.corp/\nREGION=eu-west-1",
		"srv/env.sh":          "export NPM_TOKEN='loot-sourced-source'\n. " + dir + "/srv/nested.sh",
		"srv/nested.sh":       "export VAULT_TOKEN=loot-sourced-nested",
	}
	out := catPlanted(t, box, dir, filepath.Join(dir, "etc"), files)
	if !strings.Contains(out, "REGION=eu-west-1") {
		t.Errorf("the sourced file's region is no credential, yet hidden:\n%s", out)
	}
}

// TestRedTeamShellSecretFromFile: a machine-wide profile script gives a
// secret variable the content of a file (export GH_TOKEN=$(cat
// /etc/ci/gh-token), $(< file), `cat file`, read -r NAME < file): the
// view kept the line, as its value is a command's output, and the agent
// read the file it names. Those files are covered; a file read into a
// variable whose name says nothing secret stays readable.
func TestRedTeamShellSecretFromFile(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-shellfile-")
	files := map[string]string{
		"etc/profile.d/ci.sh": strings.Join([]string{
			"export GH_TOKEN=$(cat " + dir + "/ci/gh-token)",
			"NPM_TOKEN=\"$(< " + dir + "/ci/npm-token)\"",
			"export VAULT_PASSWORD=`cat '" + dir + "/ci/vault'`",
			"read -r DEPLOY_KEY < " + dir + "/ci/deploy",
			"export CI_REGION=$(cat " + dir + "/ci/region)",
		}, "\n"),
		"etc/profile.d/ci.csh": "setenv GH_TOKEN `cat " + dir + "/ci/csh-token`\nset -gx NPM_TOKEN (cat " + dir + "/ci/fish-token)",
		"ci/csh-token":         "loot-file-csh",
		"ci/fish-token":        "loot-file-fish",
		"ci/gh-token":          "loot-file-gh",
		"ci/npm-token":         "loot-file-npm",
		"ci/vault":             "loot-file-vault",
		"ci/deploy":            "loot-file-deploy",
		"ci/region":            "eu-west-1",
	}
	out := catPlanted(t, box, dir, filepath.Join(dir, "etc"), files)
	if !strings.Contains(out, "eu-west-1") {
		t.Errorf("the region file is no secret, yet hidden:\n%s", out)
	}
}

// TestRedTeamShellSecretInParts: a machine-wide profile script builds a
// secret from parts given to plain names, none of a token's shape
// (A=ghp_L00t; B=Parts2x; export GH_TOKEN="$A$B"): each part stayed in
// the view, and the agent joined them. The literal values of names a
// secret variable's value uses are left out too.
func TestRedTeamShellSecretInParts(t *testing.T) {
	t.Parallel()
	script := "PART_A=ghp_L00tA\nexport PART_B='L00tB'\nexport GH_TOKEN=\"${PART_A}$PART_B\"\nCI_REGION=eu-west-1\n"
	view, _ := filterSysConfig([]byte(script), filterShellURLs, nil, nil)
	if strings.Contains(string(view), "L00t") {
		t.Errorf("the view shows the secret's parts:\n%s", view)
	}
	if !strings.Contains(string(view), "CI_REGION=eu-west-1") {
		t.Errorf("the view lost a setting that is no part of a secret:\n%s", view)
	}
}

// TestRedTeamGradleUserHomeFromJVMOptions: a CI image moves Gradle's
// user home by a JVM option (GRADLE_OPTS="-Dgradle.user.home=/cache/gradle",
// or JAVA_TOOL_OPTIONS), not by GRADLE_USER_HOME: its gradle.properties
// and init scripts, with a repository's password, were not covered, and
// the agent read them by the path the option gives; so was the TLS
// client keystore -Djavax.net.ssl.keyStore names.
func TestRedTeamGradleUserHomeFromJVMOptions(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-gradleopts-")
	files := map[string]string{
		"cache/gradle/gradle.properties":         "corpRepoPassword=loot-gradle-opts-properties",
		"cache/gradle/init.d/corp.gradle":        "credentials { password 'loot-gradle-opts-init' }",
		"cache/gradle/caches/modules-2/note.txt": "gradle cache readable",
		"tool/gradle/init.gradle.kts":            "password = \"loot-gradle-tool-options\"",
		"tls/client.p12":                         "loot-jvm-client-keystore",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "GRADLE_OPTS=-Xmx2g \"-Dgradle.user.home=" + dir + "/cache/gradle\"",
		"JAVA_TOOL_OPTIONS=-Dfile.encoding=UTF-8 -Dgradle.user.home=" + dir + "/tool/gradle",
		"JAVA_OPTS=-Djavax.net.ssl.keyStore=" + dir + "/tls/client.p12 -Djavax.net.ssl.keyStorePassword=changeit"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamMoreToolCredentialVariables: planex's environment names
// the credential files of tools planex did not know: sbt's and
// Coursier's credentials files (SBT_CREDENTIALS, COURSIER_CREDENTIALS),
// R's user environment file where GITHUB_PAT lives (R_ENVIRON_USER),
// uv's configuration with an index's password (UV_CONFIG_FILE), the
// JFrog CLI's home with its server tokens (JFROG_CLI_HOME_DIR), Conan's
// home with its remotes' logins (CONAN_HOME), Hex's API key
// (HEX_HOME) and cabal's Hackage password (CABAL_DIR). The agent read
// each by the path the variable gives.
func TestRedTeamMoreToolCredentialVariables(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-toolvars-")
	files := map[string]string{
		"ci/sbt.credentials":             "realm=Artifactory\nhost=art.corp\nuser=ci\npassword=loot-sbt",
		"ci/coursier.properties":         "corp.host=art.corp\ncorp.password=loot-coursier",
		"ci/Renviron":                    "GITHUB_PAT=loot-r-environ",
		"ci/uv.toml":                     "[[index]]\nurl = \"https://ci:loot-uv@pypi.corp/simple\"",
		"jfrog/jfrog-cli.conf.v6":        "{\"servers\":[{\"accessToken\":\"loot-jfrog\"}]}",
		"conan/credentials.json":         "{\"credentials\":[{\"remote\":\"corp\",\"password\":\"loot-conan\"}]}",
		"hex/hex.config":                 "{'$write_key', <<\"loot-hex\">>}.",
		"cabal/config":                   "repository hackage.haskell.org\n  password: loot-cabal",
		"conan/p/cache/readable-pkg.txt": "conan package cache",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin",
		"SBT_CREDENTIALS=" + dir + "/ci/sbt.credentials", "COURSIER_CREDENTIALS=" + dir + "/ci/coursier.properties",
		"R_ENVIRON_USER=" + dir + "/ci/Renviron", "UV_CONFIG_FILE=" + dir + "/ci/uv.toml",
		"JFROG_CLI_HOME_DIR=" + dir + "/jfrog", "CONAN_HOME=" + dir + "/conan", "HEX_HOME=" + dir + "/hex", "CABAL_DIR=" + dir + "/cabal"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestCargoConfigKeepsRevisions: a patch pinned to a git revision in a
// Cargo configuration keeps its revision, which has a token's shape but
// is none: the build needs it.
func TestCargoConfigKeepsRevisions(t *testing.T) {
	t.Parallel()
	const line = `foo = { git = "https://github.com/o/foo", rev = "0123456789abcdef0123456789abcdef01234567" }` + "\n"
	view, _ := stripCargoCredentials([]byte("[patch.crates-io]\n" + line))
	if !strings.Contains(string(view), line) {
		t.Errorf("the view lost the patch's revision:\n%s", view)
	}
}

// TestRedTeamEnvironmentDOutsideEtc: systemd reads environment.d files
// from /usr/local/lib/environment.d and /usr/lib/environment.d as well
// as /etc's, and an admin of a runner's host put a proxy's password for
// every user session in the first: only /etc/environment.d was shown
// filtered, and the agent read the password.
func TestRedTeamEnvironmentDOutsideEtc(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-envd-")
	files := map[string]string{
		"usr/local/lib/environment.d/50-proxy.conf": "https_proxy=http://ci:loot-envd-local@proxy.corp:3128\nLANG=C.UTF-8",
		"usr/lib/environment.d/60-ci.conf":          "CI_DEPLOY_TOKEN=loot-envd-usr-lib",
	}
	out := catPlanted(t, box, dir, filepath.Join(dir, "etc"), files)
	if !strings.Contains(out, "LANG=C.UTF-8") {
		t.Errorf("the file lost a variable the step is passed:\n%s", out)
	}
}

// TestRedTeamMoreMachineFiles: other machine-wide files of mode 644 an
// admin keeps a secret in: the cron tables (a job's token in its
// command line or an assignment above it), rc.local, MySQL's and
// MariaDB's client options ([client] password=), ODBC's data sources,
// Subversion's proxy password, PostgreSQL's service file and boto's
// keys. The agent read each.
func TestRedTeamMoreMachineFiles(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-moremachine-")
	files := map[string]string{
		"etc/crontab":                           "SHELL=/bin/sh\nDEPLOY_TOKEN=loot-crontab-env\n17 * * * * root cd / && run-parts --report /etc/cron.hourly",
		"etc/cron.d/sync":                       "0 3 * * * ci curl -fsS -H \"Authorization: token ghp_L00tCronL00tCronL00tCron12\" https://api.corp/sync",
		"etc/rc.local":                          "#!/bin/sh\nexport RUNNER_TOKEN=AAAL00tRcLocalL00tRcLocal99\nexit 0",
		"etc/mysql/my.cnf":                      "[client]\nuser = ci\npassword = loot-mysql-client",
		"etc/mysql/conf.d/ci.cnf":               "[client]\npassword=loot-mysql-confd",
		"etc/odbc.ini":                          "[corp]\nDriver = PostgreSQL\nServername = db.corp\nPassword = loot-odbc",
		"etc/subversion/servers":                "[global]\nhttp-proxy-host = proxy.corp\nhttp-proxy-password = loot-svn-proxy",
		"etc/postgresql-common/pg_service.conf": "[corp]\nhost=db.corp\npassword=loot-pg-service",
		"etc/boto.cfg":                          "[Credentials]\naws_access_key_id = AKIAL00T\naws_secret_access_key = loot-boto",
	}
	out := catPlanted(t, box, dir, filepath.Join(dir, "etc"), files)
	if strings.Contains(out, "L00t") {
		t.Errorf("the agent read a token:\n%s", out)
	}
	for _, kept := range []string{"run-parts --report", "Servername = db.corp", "http-proxy-host = proxy.corp", "user = ci"} {
		if !strings.Contains(out, kept) {
			t.Errorf("a file lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamNodePythonWrapperScripts: the node or python3 on PATH is a
// wrapper script that execs the installation's program (an image's
// /usr/local/bin/node: exec /opt/node-v22/bin/node "$@"): npm's global
// npmrc and pip's site pip.conf of that installation, with a registry's
// token and an index's password, were not found, and the agent read
// them by the path the script gives.
func TestRedTeamNodePythonWrapperScripts(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-nodewrap-")
	files := map[string]string{
		"opt/node-v22/etc/npmrc": "registry=https://npm.corp/\n//npm.corp/:_authToken=loot-node-wrapper",
		"opt/node-v22/bin/node":  "#!/bin/sh",
		"opt/py312/pip.conf":     "[global]\nindex-url = https://ci:loot-python-wrapper@pypi.corp/simple",
		"opt/py312/bin/python3":  "#!/bin/sh",
		"wrap/node":              "#!/bin/sh\nexec \"" + dir + "/opt/node-v22/bin/node\" \"$@\"",
		"wrap/python3":           "#!/bin/sh\nexec " + dir + "/opt/py312/bin/python3 \"$@\"",
	}
	plant(t, dir, files)
	for _, f := range []string{"wrap/node", "wrap/python3"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + dir + "/wrap:/usr/bin:/bin"}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", "cat "+dir+"/opt/node-v22/etc/npmrc "+dir+"/opt/py312/pip.conf")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read an installation's credentials:\n%s", out)
	}
	if !strings.Contains(out, "registry=https://npm.corp/") {
		t.Errorf("the npmrc's registry is no credential, yet hidden:\n%s", out)
	}
}

// TestRedTeamLocalUnitFolders: an admin installs a service's unit under
// /usr/local/lib/systemd/system (systemd reads it as /etc's), a runner's
// registration token on its Environment= line: only /etc's unit folders
// were covered, and the agent read it.
func TestRedTeamLocalUnitFolders(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-localunits-")
	files := map[string]string{
		"usr/local/lib/systemd/system/ci-runner.service": "[Service]\nEnvironment=RUNNER_TOKEN=loot-local-unit\nEnvironmentFile=" + dir + "/srv/runner.env",
		"usr/local/lib/systemd/user/sync.service":        "[Service]\nExecStart=/usr/bin/sync --token loot-local-user-unit",
		"srv/runner.env": "RUNNER_TOKEN=loot-local-unit-env\nLANG=C.UTF-8",
	}
	out := catPlanted(t, box, dir, filepath.Join(dir, "etc"), files)
	if !strings.Contains(out, "LANG=C.UTF-8") {
		t.Errorf("the unit's environment file lost a passed variable:\n%s", out)
	}
}
