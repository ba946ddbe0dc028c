package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamOtherAccountsHomesHidden: on a machine shared with other
// people (a self-hosted runner's host with an admin's or a developer's
// account), their homes are of mode 755 on many distributions, and
// what they keep there with the default umask (a .npmrc or .pypirc with
// a token, a project's .env) every uid reads, a contained program (as
// planex's user, or root's unprivileged id) too: the agent read them.
// Now the homes of the password file's people's accounts are hidden; a
// home holding a folder of PATH (a Homebrew under /home/linuxbrew) stays
// readable. A service account's home outside the system's folders (a
// Jenkins server's /var/lib/jenkins, with its credentials.xml and job
// configurations) was readable too: it is hidden as well, and so is a
// home the password file names through a link.
func TestRedTeamOtherAccountsHomesHidden(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-otherhomes-")
	alice, carol := filepath.Join(dir, "home", "alice"), filepath.Join(dir, "people", "carol")
	svc, brew := filepath.Join(dir, "var", "lib", "svc"), filepath.Join(dir, "home", "linuxbrew")
	files := map[string]string{
		"home/alice/.npmrc":                   "//registry.npmjs.org/:_authToken=loot-alice-npm",
		"home/alice/work/app/.env":            "STRIPE_KEY=loot-alice-env",
		"people/carol/.pypirc":                "[pypi]\npassword = loot-carol-pypi",
		"var/lib/svc/credentials.xml":         "<password>loot-jenkins-credentials</password>",
		"data/dora/.netrc":                    "machine example.com password loot-dora-netrc",
		"home/linuxbrew/.linuxbrew/bin/hello": "brew tool",
	}
	plant(t, dir, files)
	if err := os.Symlink(filepath.Join(dir, "data", "dora"), filepath.Join(dir, "home", "dora")); err != nil {
		t.Fatal(err)
	}
	passwd := filepath.Join(dir, "passwd")
	plant(t, dir, map[string]string{"passwd": strings.Join([]string{
		"root:x:0:0:root:/root:/bin/bash",
		"alice:x:1001:1001::" + alice + ":/bin/bash",
		"carol:x:1002:1002::" + carol + "/:/bin/bash",
		"svc:x:998:998::" + svc + ":/usr/sbin/nologin",
		"linuxbrew:x:1003:1003::" + brew + ":/bin/bash",
		"dora:x:1006:1006::" + filepath.Join(dir, "home", "dora") + ":/bin/bash",
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
		"odd:x:1004:1004::/:/bin/sh", "broken line",
	}, "\n")})
	env := []string{"PATH=" + filepath.Join(brew, ".linuxbrew", "bin") + ":/usr/bin:/bin"}
	checkPlantedReads(t, "", Containment{Sandbox: box, passwdFile: passwd}, env, dir, files)
}

// TestRedTeamBrewHomeShowsOnlyItsPrefix: the linuxbrew account's home
// holds the Homebrew on PATH, and was left readable whole for it: the
// account's own files beside the prefix (its .ssh, a .env) were read.
// Now the home is hidden but for the prefix PATH needs (its bin, the
// Cellar the links lead to), and another home's PATH folder alone.
func TestRedTeamBrewHomeShowsOnlyItsPrefix(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-brewhome-")
	brew, dave := filepath.Join(dir, "home", "linuxbrew"), filepath.Join(dir, "home", "dave")
	files := map[string]string{
		"home/linuxbrew/.linuxbrew/Cellar/hello/1.0/bin/hello": "brew tool",
		"home/linuxbrew/.ssh/id_ed25519":                       "loot-brew-account-key",
		"home/linuxbrew/.env":                                  "TOKEN=loot-brew-account-env",
		"home/dave/tools/bin/tool":                             "dave's tool",
		"home/dave/.npmrc":                                     "//registry.npmjs.org/:_authToken=loot-dave-npm",
	}
	plant(t, dir, files)
	if err := os.MkdirAll(filepath.Join(brew, ".linuxbrew", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../Cellar/hello/1.0/bin/hello", filepath.Join(brew, ".linuxbrew", "bin", "hello")); err != nil {
		t.Fatal(err)
	}
	plant(t, dir, map[string]string{"passwd": "linuxbrew:x:1003:1003::" + brew + ":/bin/bash\ndave:x:1005:1005::" + dave + ":/bin/bash"})
	env := []string{"PATH=" + filepath.Join(brew, ".linuxbrew", "bin") + ":" + filepath.Join(dave, "tools", "bin") + ":/usr/bin:/bin"}
	c := Containment{Sandbox: box, passwdFile: filepath.Join(dir, "passwd")}
	checkPlantedReads(t, "", c, env, dir, files)
	if out := runContained(t, c, env, "cat", filepath.Join(brew, ".linuxbrew", "bin", "hello")); !strings.Contains(out, "brew tool") {
		t.Errorf("the Homebrew program on PATH is not readable through its link: %q", out)
	}
}
