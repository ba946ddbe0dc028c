package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamLinkedUnitEnvironmentFile: an admin installs a service's
// unit with `systemctl link`, which leaves in /etc/systemd/system a
// link to the unit file kept beside the service (/opt/app/app.service),
// or enables it into a .wants folder; the unit's EnvironmentFile= names
// the service's token file. The unit folders' walk took only regular
// files, so the linked unit's environment file was shown whole.
func TestRedTeamLinkedUnitEnvironmentFile(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-linkedunit-")
	files := map[string]string{
		"opt/app/app.service":  "[Service]\nEnvironment=APP_KEY=loot-linked-unit\nEnvironmentFile=" + dir + "/opt/app/app.env",
		"opt/app/app.env":      "APP_TOKEN=loot-linked-unit-env\nLANG=C.UTF-8",
		"opt/job/job.service":  "[Service]\nEnvironmentFile=-" + dir + "/opt/job/job.env",
		"opt/job/job.env":      "JOB_TOKEN=loot-wanted-unit-env\nLANG=C.UTF-8",
		"etc/systemd/system/x": "",
	}
	plant(t, dir, files)
	links := map[string]string{
		"etc/systemd/system/app.service":                         dir + "/opt/app/app.service",
		"etc/systemd/system/multi-user.target.wants/job.service": dir + "/opt/job/job.service",
	}
	for name, target := range links {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	out := runContained(t, Containment{Sandbox: box, etcDir: filepath.Join(dir, "etc")}, []string{"PATH=/usr/bin:/bin"}, "sh", "-c",
		"cat "+dir+"/opt/app/app.service "+dir+"/opt/app/app.env "+dir+"/opt/job/job.env 2>/dev/null; true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read a linked unit's environment file:\n%s", out)
	}
	if strings.Count(out, "LANG=C.UTF-8") != 2 {
		t.Errorf("the environment files' passed variables were hidden, not filtered:\n%s", out)
	}
}

// TestRedTeamNestedWrapperScripts: the node wrapper on PATH execs a
// second wrapper (a version switch's shim), which execs the real
// installation; only the first wrapper was read, so the npmrc of the
// installation the second names was shown whole. A loop of wrappers
// must end the walk.
func TestRedTeamNestedWrapperScripts(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-nestedwrap-")
	files := map[string]string{
		"opt/node-v22/etc/npmrc": "registry=https://npm.corp/\n//npm.corp/:_authToken=loot-nested-wrapper",
		"opt/node-v22/bin/node":  "#!/bin/sh",
		"opt/shim/bin/node":      "#!/bin/sh\nexec " + dir + "/opt/node-v22/bin/node \"$@\"",
		"wrap/node":              "#!/bin/sh\nexec " + dir + "/opt/shim/bin/node \"$@\"",
		"loop/a/bin/python3":     "#!/bin/sh\nexec " + dir + "/loop/b/bin/python3 \"$@\"",
		"loop/b/bin/python3":     "#!/bin/sh\nexec " + dir + "/loop/a/bin/python3 \"$@\"",
	}
	plant(t, dir, files)
	for _, f := range []string{"wrap/node", "opt/shim/bin/node", "loop/a/bin/python3", "loop/b/bin/python3"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + dir + "/wrap:" + dir + "/loop/a/bin:/usr/bin:/bin"}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", "cat "+dir+"/opt/node-v22/etc/npmrc")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read an installation's credentials:\n%s", out)
	}
	if !strings.Contains(out, "registry=https://npm.corp/") {
		t.Errorf("the npmrc's registry is no credential, yet hidden:\n%s", out)
	}
}

// TestRedTeamNestedGradleWrapper: the gradle on PATH is a wrapper that
// execs a second wrapper (a version switch's), which execs the real
// installation; only the first was read, so the agent read the password
// in the real installation's gradle.properties.
func TestRedTeamNestedGradleWrapper(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-nestedgradle-")
	files := map[string]string{
		"opt/gradle-8/gradle.properties":         "systemProp.https.proxyPassword=loot-nested-gradle",
		"opt/gradle-8/lib/gradle-launcher-8.jar": "gradle-lib-readable",
		"opt/switch/bin/gradle":                  "#!/bin/sh\nexec " + dir + "/opt/gradle-8/bin/gradle \"$@\"",
		"bin/gradle":                             "#!/bin/sh\nexec " + dir + "/opt/switch/bin/gradle \"$@\"",
	}
	plant(t, dir, files)
	env := []string{"PATH=" + filepath.Join(dir, "bin") + ":/usr/bin:/bin"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}
