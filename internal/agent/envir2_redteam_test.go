package agent

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamConfigsPastTheBound: a machine folder holds more matching
// configurations than planex reads (257 profile scripts, tool cache
// versions, environment.d files, conda drop-ins); the filters stopped
// at the bound and the rest were shown whole, so the agent read the
// password in the last one. Those past the bound are now covered.
func TestRedTeamConfigsPastTheBound(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-bound-")
	files := map[string]string{}
	var loot []string
	for i := 0; i <= maxToolCacheConfigs; i++ {
		secret := ""
		if i == maxToolCacheConfigs {
			secret = "ci:loot-past-bound@"
		}
		files[fmt.Sprintf("etc/profile.d/p%03d.sh", i)] = "export https_proxy=http://" + secret + "proxy.corp:3128"
		files[fmt.Sprintf("etc/environment.d/e%03d.conf", i)] = "http_proxy=http://" + secret + "proxy.corp:3128"
		files[fmt.Sprintf("cache/node/1.%03d.0/x64/etc/npmrc", i)] = "registry=https://" + secret + "npm.corp/"
		files[fmt.Sprintf("conda/condarc.d/c%03d.yml", i)] = "channels:\n  - https://" + secret + "conda.corp/main"
	}
	for name := range files {
		if strings.Contains(files[name], "loot-") {
			loot = append(loot, name)
		}
	}
	plant(t, dir, files)
	script := ""
	for _, name := range loot {
		script += "cat " + filepath.Join(dir, name) + " 2>/dev/null; "
	}
	c := Containment{Sandbox: box, etcDir: filepath.Join(dir, "etc")}
	env := []string{"PATH=/usr/bin:/bin", "RUNNER_TOOL_CACHE=" + filepath.Join(dir, "cache"), "CONDA_ROOT=" + filepath.Join(dir, "conda")}
	out := runContained(t, c, env, "sh", "-c", script+"true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read configurations past planex's bound whole:\n%s", out)
	}
}

// TestRedTeamDuplicateVariableFiles: planex's environment holds a
// credential variable twice (a wrapper prepended its own value; env
// -i with a repeated name); planex covered the file the last value
// names, as dash reads it, but Go's and glibc's getenv read the first,
// and the agent read that file. Both are covered now, and the agent's
// environment holds each name once.
func TestRedTeamDuplicateVariableFiles(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-dupvar-")
	files := map[string]string{"gcp/first.json": "loot-first-value", "gcp/last.json": "loot-last-value"}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "GOOGLE_APPLICATION_CREDENTIALS=" + filepath.Join(dir, "gcp", "first.json"),
		"LANG=C", "GOOGLE_APPLICATION_CREDENTIALS=" + filepath.Join(dir, "gcp", "last.json"), "LANG=C.UTF-8"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
	// cat is started without a shell, which would keep one of each.
	out := runContained(t, Containment{Sandbox: box}, env, "cat", "/proc/self/environ")
	if n := strings.Count("\x00"+out, "\x00LANG="); n != 1 {
		t.Errorf("the agent's environment holds LANG %d times: %q", n, out)
	}
}

// TestRedTeamGradleWrapperScriptOnPath: the gradle on PATH is a wrapper
// script, not a link (an image's /usr/local/bin/gradle setting
// GRADLE_HOME and exec'ing the installation's launcher); planex did not
// find the installation, and the agent read the password in its
// gradle.properties and init.d by the path the script gives away.
func TestRedTeamGradleWrapperScriptOnPath(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-gradlewrap-")
	files := map[string]string{
		"opt/gradle-a/gradle.properties":         "systemProp.https.proxyPassword=loot-gradle-wrapper-home",
		"opt/gradle-a/lib/gradle-launcher-8.jar": "gradle-lib-readable",
		"opt/gradle-b/init.d/corp.gradle":        "credentials { password 'loot-gradle-wrapper-exec' }",
		"opt/gradle-b/lib/gradle-launcher-8.jar": "gradle-lib-readable",
		"bin1/gradle":                            "#!/bin/sh\nGRADLE_HOME=\"" + dir + "/opt/gradle-a\"\nexport GRADLE_HOME\nexec \"$GRADLE_HOME/bin/gradle\" \"$@\"",
		"bin2/gradle":                            "#!/bin/sh\nexec " + dir + "/opt/gradle-b/bin/gradle \"$@\"",
	}
	plant(t, dir, files)
	env := []string{"PATH=" + filepath.Join(dir, "bin1") + ":" + filepath.Join(dir, "bin2") + ":/usr/bin:/bin"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamNuGetCommonDataAndCargoAbove: NuGet reads its machine-wide
// configurations from NUGET_COMMON_APPLICATION_DATA/NuGet/Config when
// the variable moves them from /etc/opt, and Cargo reads the
// .cargo/config.toml of every folder above the one it runs in (a runner
// admin's /srv/.cargo above the work folder). Both kept a registry's
// password, shown whole to the agent: only /etc/opt's and CARGO_HOME's
// were filtered.
func TestRedTeamNuGetCommonDataAndCargoAbove(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-nugetcargo-")
	files := map[string]string{
		"nuget/NuGet/Config/corp.config": "<configuration><packageSourceCredentials><corp>\n<add key=\"Username\" value=\"ci\" />\n<add key=\"ClearTextPassword\" value=\"loot-nuget-common\" />\n</corp></packageSourceCredentials></configuration>",
		".cargo/config.toml":             "[registries.corp]\nindex = \"sparse+https://cargo.corp/\"\ntoken = \"loot-cargo-above\"",
		"work/.cargo/config":             "[http]\nproxy = \"http://ci:loot-cargo-above-proxy@proxy.corp:3128\"",
	}
	plant(t, dir, files)
	wd := filepath.Join(dir, "work", "repo")
	if err := os.MkdirAll(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
	}
	cmd := exec.Command("sh", "-c", script.String()+"true")
	cmd.Dir = wd
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	env := []string{"PATH=/usr/bin:/bin", "NUGET_COMMON_APPLICATION_DATA=" + filepath.Join(dir, "nuget")}
	cleanup, err := Containment{Sandbox: box}.PrepareContext(context.Background(), cmd, env, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Run()
	cleanup()
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "loot-") {
		t.Errorf("the agent read a registry's password:\n%s", out.String())
	}
	for _, kept := range []string{`<add key="Username" value="ci" />`, `index = "sparse+https://cargo.corp/"`, `proxy = "http://proxy.corp:3128"`} {
		if !strings.Contains(out.String(), kept) {
			t.Errorf("the configuration lost %q:\n%s", kept, out.String())
		}
	}
}

// TestRedTeamMavenWrapperScriptOnPath: as for Gradle, the mvn on PATH
// is a wrapper script naming its installation (MAVEN_HOME=…, exec
// …/bin/mvn) rather than a link to it; the installation's
// conf/settings.xml kept a repository's password, read whole.
func TestRedTeamMavenWrapperScriptOnPath(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-mvnwrap-")
	files := map[string]string{
		"opt/maven-a/conf/settings.xml": "<settings><servers><server><id>corp</id><password>loot-mvn-wrapper-home</password></server></servers></settings>",
		"opt/maven-b/conf/settings.xml": "<settings><servers><server><id>corp</id><password>loot-mvn-wrapper-exec</password></server></servers></settings>",
		"bin1/mvn":                      "#!/bin/sh\nexport MAVEN_HOME=" + dir + "/opt/maven-a\nexec \"$MAVEN_HOME/bin/mvn\" \"$@\"",
		"bin2/mvn":                      "#!/bin/sh\nexec '" + dir + "/opt/maven-b/bin/mvn' \"$@\"",
	}
	plant(t, dir, files)
	env := []string{"PATH=" + filepath.Join(dir, "bin1") + ":" + filepath.Join(dir, "bin2") + ":/usr/bin:/bin"}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", "cat "+filepath.Join(dir, "opt/maven-a/conf/settings.xml")+" "+filepath.Join(dir, "opt/maven-b/conf/settings.xml")+" 2>&1; true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read the Maven installation's password:\n%s", out)
	}
	if !strings.Contains(out, "<id>corp</id>") {
		t.Errorf("the settings were not shown filtered:\n%s", out)
	}
}

// TestRedTeamDuplicateVariableViews: as above, for the variables that
// lead planex to a configuration it shows filtered: with PATH, MAVEN_HOME
// and NUGET_COMMON_APPLICATION_DATA each present twice in planex's
// environment, the views followed only the last value, and the agent read
// the credentials of the npmrc, settings.xml and NuGet.Config the first
// values lead to. The first SSH_AUTH_SOCK's socket, which planex does not
// cover by name, is covered as every socket bound on the machine is. Both values' files are shown filtered now, and what is
// no credential in them stays readable.
func TestRedTeamDuplicateVariableViews(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-dupview-")
	files := map[string]string{
		"node/bin/node":                    "#!/bin/sh",
		"node/etc/npmrc":                   "registry=https://npm.corp/\n//npm.corp/:_authToken=loot-dup-npm",
		"mvn-a/conf/settings.xml":          "<settings><servers><server><id>corp</id><password>loot-dup-maven</password></server></servers></settings>",
		"nuget-a/NuGet/Config/corp.config": "<configuration><packageSourceCredentials><corp>\n<add key=\"ClearTextPassword\" value=\"loot-dup-nuget\" />\n</corp></packageSourceCredentials></configuration>",
	}
	plant(t, dir, files)
	sock := filepath.Join(dir, "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
	}
	script.WriteString("test -S " + sock + " && echo loot-dup-ssh-agent-socket; ")
	env := []string{
		"SSH_AUTH_SOCK=" + sock,
		"PATH=" + filepath.Join(dir, "node", "bin") + ":/usr/bin:/bin",
		"MAVEN_HOME=" + filepath.Join(dir, "mvn-a"),
		"NUGET_COMMON_APPLICATION_DATA=" + filepath.Join(dir, "nuget-a"),
		"PATH=/usr/bin:/bin",
		"MAVEN_HOME=" + filepath.Join(dir, "mvn-b"),
		"NUGET_COMMON_APPLICATION_DATA=" + filepath.Join(dir, "nuget-b"),
		"SSH_AUTH_SOCK=" + filepath.Join(dir, "none.sock"),
	}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", script.String()+"true")
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "loot-") {
			t.Errorf("the agent read %q", l)
		}
	}
	if !strings.Contains(out, "registry=https://npm.corp/") {
		t.Errorf("the npmrc's registry is no credential, yet hidden:\n%s", out)
	}
}
