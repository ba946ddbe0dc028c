package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamGradleOnPathCredentials: a Gradle installation unpacked
// outside every home and put on PATH through a link (a self-hosted
// runner's /usr/local/bin/gradle -> /opt/gradle-8.10/bin/gradle, the
// way Gradle's installation guide and many images do it, with no
// GRADLE_HOME set) keeps an admin's repository password in its
// gradle.properties and its init.d scripts. A contained agent read
// both by the path the link gives away. Now they are covered, and the
// rest of the installation (its lib folder) stays readable.
func TestRedTeamGradleOnPathCredentials(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-gradlepath-")
	files := map[string]string{
		"opt/gradle-8.10/gradle.properties":            "systemProp.https.proxyPassword=loot-gradle-path-props",
		"opt/gradle-8.10/init.d/corp.gradle":           "credentials { password 'loot-gradle-path-init' }",
		"opt/gradle-8.10/lib/gradle-launcher-8.10.jar": "gradle-lib-readable",
		"opt/gradle-8.10/bin/gradle":                   "#!/bin/sh",
		"opt/gradle-other/gradle.properties":           "org.gradle.jvmargs=-Xmx2g",
	}
	plant(t, dir, files)
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../opt/gradle-8.10/bin/gradle", filepath.Join(bin, "gradle")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + ":/usr/bin:/bin"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamProfileScriptTokens: an admin of a self-hosted runner gives
// every login a token by name in a machine-wide profile script
// (/etc/profile.d/deploy.sh: export DEPLOY_TOKEN=…), in the shells'
// rc files or in a service's /etc/default file, all readable by every
// uid. A contained agent read them: only URL credentials were taken
// out of those scripts. Now a literal value given to a variable the
// step's environment would not pass is left out where the name says
// it is a secret or the value looks like a token, and the rest of each
// script (a JAVA_HOME, a prompt built from variables, a folder) stays.
func TestRedTeamProfileScriptTokens(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-profile-")
	etc := filepath.Join(dir, "etc")
	files := map[string]string{
		"etc/profile.d/deploy.sh": "export DEPLOY_TOKEN=loot-profile-token\nexport NPM_AUTH='loot-profile-npm-auth'\n" +
			"  export CI_DB_PASS=\"loot-profile-db\" # the build database\nexport JAVA_HOME=/usr/lib/jvm/temurin-21\nexport NVM_DIR=/usr/local/nvm",
		"etc/profile.d/ci.sh":  "export CI_ACCESS=ghp_loot0profile0shaped0token0abcdef1234\nexport EDITOR=vim",
		"etc/bash.bashrc":      "PS1='${debian_chroot:+($debian_chroot)}\\u@\\h:\\w\\$ '\nSENTRY_KEY=loot-bashrc-sentry",
		"etc/default/ci-agent": "AGENT_SECRET=loot-default-secret\nAGENT_OPTS=--verbose",
		"etc/zsh/zshenv":       "export VAULT_TOKEN=loot-zshenv-vault\nexport ARTIFACTORY_API_KEY=\"$(cat /run/key)\"",
	}
	out := catPlanted(t, box, dir, etc, files)
	for _, kept := range []string{
		"export DEPLOY_TOKEN=", "export JAVA_HOME=/usr/lib/jvm/temurin-21", "export NVM_DIR=/usr/local/nvm",
		"export EDITOR=vim", `PS1='${debian_chroot:+($debian_chroot)}\u@\h:\w\$ '`, "AGENT_OPTS=--verbose",
		`export ARTIFACTORY_API_KEY="$(cat /run/key)"`,
	} {
		if !strings.Contains(out, kept) {
			t.Errorf("the machine's profile lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamGemfuryPathTokens: Gemfury's private package URLs carry
// the account's token as the path's first segment
// (https://pypi.fury.io/<token>/<account>/, npm-proxy.fury.io's the
// same), written by an admin into an apt source, a profile script's
// index URL or the machine's npmrc. A contained agent read the token
// there: only Cloudsmith's and Anaconda's path tokens were taken out.
// Now a Gemfury package host's URL with the account after the token
// loses the token, and a URL naming only the account stays.
func TestRedTeamGemfuryPathTokens(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-gemfury-")
	etc := filepath.Join(dir, "etc")
	files := map[string]string{
		"etc/apt/sources.list.d/fury.list": "deb [trusted=yes] https://apt.fury.io/loot-fury-apt/acme/ /",
		"etc/profile.d/pip.sh":             "export PIP_EXTRA_INDEX_URL=https://pypi.fury.io/loot-fury-pypi/acme/",
		"etc/apt/sources.list.d/deb.list":  "deb https://Apt.Fury.IO/loot-fury-case/acme/ /\ndeb https://apt.fury.io/public-acme/ /",
		"opt/npm/npmrc":                    "@acme:registry=https://npm-proxy.fury.io/loot-fury-npm/acme/",
	}
	plant(t, dir, files)
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
	}
	script.WriteString("true")
	env := []string{"PATH=/usr/bin:/bin", "NPM_CONFIG_GLOBALCONFIG=" + filepath.Join(dir, "opt/npm/npmrc")}
	out := runContained(t, Containment{Sandbox: box, etcDir: etc}, env, "sh", "-c", script.String())
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "loot-") {
			t.Errorf("the agent read %q", l)
		}
	}
	for _, kept := range []string{
		"deb [trusted=yes] https://apt.fury.io/acme/ /", "export PIP_EXTRA_INDEX_URL=https://pypi.fury.io/acme/",
		"https://apt.fury.io/public-acme/ /", "@acme:registry=https://npm-proxy.fury.io/acme/",
	} {
		if !strings.Contains(out, kept) {
			t.Errorf("the configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamGradleUserHomeInitScripts: Gradle runs the init scripts of
// its user home (init.gradle, init.gradle.kts and init.d/*) before every
// build, where an admin or a CI image puts the company repository with
// its credentials. With the user home moved out of the home
// (GRADLE_USER_HOME=/cache/gradle) only its gradle.properties was
// covered: a contained agent read the init scripts. Now they are covered
// too, and the caches beside them stay readable.
func TestRedTeamGradleUserHomeInitScripts(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-gradleuser-")
	files := map[string]string{
		"gradle/gradle.properties":             "repoPassword=loot-gradle-user-props",
		"gradle/init.gradle":                   "credentials { password 'loot-gradle-user-init' }",
		"gradle/init.gradle.kts":               "credentials { password = \"loot-gradle-user-init-kts\" }",
		"gradle/init.d/corp.gradle":            "credentials { password 'loot-gradle-user-initd' }",
		"gradle/caches/modules-2/metadata.bin": "gradle-cache-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "GRADLE_USER_HOME=" + dir + "/gradle"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamOversizedConfigShownWhole: planex reads a machine-wide
// configuration to show it without its credentials only up to 1 MiB,
// and one it did not read was shown as it is, whole: a global npmrc in
// a self-hosted runner's tool cache that an earlier job padded with a
// megabyte of comments before a later one's `npm config set --global`
// added its token, an /etc/environment or a profile script as large.
// Now such a file is shown empty.
func TestRedTeamOversizedConfigShownWhole(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-bigconf-")
	etc := filepath.Join(dir, "etc")
	pad := strings.Repeat("# padding padding padding padding padding padding padding\n", 20000)
	files := map[string]string{
		"etc/profile.d/big.sh": pad + "export DEPLOY_TOKEN=loot-big-profile",
		"etc/environment":      pad + "NPM_TOKEN=loot-big-environment",
		"opt/npm/npmrc":        pad + "//registry.npmjs.org/:_authToken=loot-big-npmrc",
		"etc/profile.d/ok.sh":  "export EDITOR=vim",
	}
	plant(t, dir, files)
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null | tail -n 1; ")
	}
	script.WriteString("true")
	env := []string{"PATH=/usr/bin:/bin", "NPM_CONFIG_GLOBALCONFIG=" + filepath.Join(dir, "opt/npm/npmrc")}
	out := runContained(t, Containment{Sandbox: box, etcDir: etc, environmentFile: filepath.Join(etc, "environment")}, env, "sh", "-c", script.String())
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read an oversized configuration's credentials:\n%s", out)
	}
	if !strings.Contains(out, "export EDITOR=vim") {
		t.Errorf("a small configuration was lost:\n%s", out)
	}
}

// TestRedTeamTmpAndTempHidden: Node.js takes its temporary folder from
// TMPDIR, else TMP, else TEMP, and Python from TMPDIR, TEMP, TMP. A CI
// image or a runner's service that sets TMP or TEMP (a Windows habit)
// to a folder outside /tmp, without TMPDIR, has its jobs' tools keep
// their temporary files there (a login's token among them), while
// planex hid only TMPDIR's folder: a contained agent read another
// job's files by that path. Now the folders TMP and TEMP name are hidden
// as TMPDIR's is.
func TestRedTeamTmpAndTempHidden(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-tmpvars-")
	files := map[string]string{
		"scratch-tmp/node-login/token.json": `{"token":"loot-tmp-folder"}`,
		"scratch-temp/py-login/token.json":  `{"token":"loot-temp-folder"}`,
		"tools/readable.txt":                "tools-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "TMP=" + dir + "/scratch-tmp", "TEMP=" + dir + "/scratch-temp"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamNuGetConfigs: NuGet on Linux cannot encrypt a feed's
// password, so its configurations keep it in clear
// (<add key="ClearTextPassword" value="…"/>): the machine-wide ones an
// admin writes for every build (/etc/opt/NuGet/Config/*.config) and the
// user's, which a CI image moves out of the home with DOTNET_CLI_HOME
// ($DOTNET_CLI_HOME/.nuget/NuGet/NuGet.Config, where `dotnet nuget
// add source --password` writes it). A contained agent read both. Now
// the machine-wide ones are shown without their password lines, feeds
// and user names kept, and the moved user configuration is covered.
func TestRedTeamNuGetConfigs(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-nuget-")
	etc := filepath.Join(dir, "etc")
	files := map[string]string{
		"etc/opt/NuGet/Config/corp.config": "<configuration>\n  <packageSources>\n    <add key=\"corp\" value=\"https://nuget.corp/v3/index.json\" />\n  </packageSources>\n" +
			"  <packageSourceCredentials>\n    <corp>\n      <add key=\"Username\" value=\"ci\" />\n      <add key=\"ClearTextPassword\" value=\"loot-nuget-machine\" />\n" +
			"      <add key = 'Password' value = 'loot-nuget-machine-pw' />\n    </corp>\n  </packageSourceCredentials>\n</configuration>",
		"dotnet-home/.nuget/NuGet/NuGet.Config": "<add key=\"ClearTextPassword\" value=\"loot-nuget-user\" />",
		"dotnet-home/.dotnet/readable.txt":      "dotnet-home-readable",
	}
	plant(t, dir, files)
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
	}
	script.WriteString("true")
	env := []string{"PATH=/usr/bin:/bin", "DOTNET_CLI_HOME=" + filepath.Join(dir, "dotnet-home")}
	out := runContained(t, Containment{Sandbox: box, etcDir: etc}, env, "sh", "-c", script.String())
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "loot-") {
			t.Errorf("the agent read %q", l)
		}
	}
	for _, kept := range []string{`<add key="corp" value="https://nuget.corp/v3/index.json" />`, `<add key="Username" value="ci" />`, "</packageSourceCredentials>", "dotnet-home-readable"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamCargoConfigTokens: Cargo takes a registry's token from its
// configuration as well as from credentials.toml (registries.<name>.token,
// registry.token), and a Rust image's CARGO_HOME lies outside every home
// (/usr/local/cargo), where an admin's config.toml gives the company
// registry its token and its proxy a password. credentials.toml was
// covered, config.toml not: a contained agent read both there. Now the
// configuration is shown without its token lines and URL passwords, the
// registries' addresses kept.
func TestRedTeamCargoConfigTokens(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-cargocfg-")
	files := map[string]string{
		"cargo/config.toml": "[registries.corp]\nindex = \"sparse+https://cargo.corp/index/\"\ntoken = \"loot-cargo-config-token\"\n" +
			"[registry]\n  Token='loot-cargo-registry-token'\n[http]\nproxy = \"http://ci:loot-cargo-proxy@proxy.corp:3128\"",
		"cargo/config": "[registries.old]\ntoken = \"loot-cargo-old-config\"",
	}
	plant(t, dir, files)
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
	}
	script.WriteString("true")
	env := []string{"PATH=/usr/bin:/bin", "CARGO_HOME=" + filepath.Join(dir, "cargo")}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", script.String())
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "loot-") {
			t.Errorf("the agent read %q", l)
		}
	}
	for _, kept := range []string{`index = "sparse+https://cargo.corp/index/"`, `proxy = "http://proxy.corp:3128"`, "[registries.old]"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamNuGetKeyCharacterReferences: NuGet reads its configuration
// as XML, so a key may spell its letters as character references
// (key="&#x43;learTextPassword", key="Pass&#119;ord"), which the
// password filter, matching the raw text, let through: a contained agent
// read the machine-wide configuration's password. The key is now read
// with its references decoded.
func TestRedTeamNuGetKeyCharacterReferences(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-nugetref-")
	etc := filepath.Join(dir, "etc")
	files := map[string]string{
		"etc/opt/NuGet/Config/dtd.config": "<?xml version=\"1.0\"?>\n<!DOCTYPE configuration [<!ENTITY p \"ClearTextPassword\">]>\n<configuration>\n  <packageSourceCredentials>\n    <corp>\n" +
			"      <add key=\"&p;\" value=\"loot-nuget-entity\" />\n    </corp>\n  </packageSourceCredentials>\n</configuration>",
		"etc/opt/NuGet/Config/refs.config": "<configuration>\n  <packageSourceCredentials>\n    <corp>\n      <add key=\"Username\" value=\"ci\" />\n" +
			"      <add key=\"&#x43;learTextPassword\" value=\"loot-nuget-hex\" />\n" +
			"      <add key=\"Pass&#119;ord\" value=\"loot-nuget-decimal\" />\n" +
			"      <add key='&#x0050;&#97;ssword' value='loot-nuget-padded' />\n" +
			"    </corp>\n  </packageSourceCredentials>\n</configuration>",
	}
	plant(t, dir, files)
	out := runContained(t, Containment{Sandbox: box, etcDir: etc}, []string{"PATH=/usr/bin:/bin"}, "cat", filepath.Join(dir, "etc/opt/NuGet/Config/refs.config"), filepath.Join(dir, "etc/opt/NuGet/Config/dtd.config"))
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "loot-") {
			t.Errorf("the agent read %q", l)
		}
	}
	if !strings.Contains(out, `<add key="Username" value="ci" />`) {
		t.Errorf("the configuration lost its user name:\n%s", out)
	}
}
