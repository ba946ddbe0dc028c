package agent

import (
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
// service account's under /var and a home holding a folder of PATH (a
// Homebrew under /home/linuxbrew) stay readable.
func TestRedTeamOtherAccountsHomesHidden(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-otherhomes-")
	alice, carol := filepath.Join(dir, "home", "alice"), filepath.Join(dir, "people", "carol")
	svc, brew := filepath.Join(dir, "var", "lib", "svc"), filepath.Join(dir, "home", "linuxbrew")
	files := map[string]string{
		"home/alice/.npmrc":                   "//registry.npmjs.org/:_authToken=loot-alice-npm",
		"home/alice/work/app/.env":            "STRIPE_KEY=loot-alice-env",
		"people/carol/.pypirc":                "[pypi]\npassword = loot-carol-pypi",
		"var/lib/svc/README":                  "service data",
		"home/linuxbrew/.linuxbrew/bin/hello": "brew tool",
	}
	plant(t, dir, files)
	passwd := filepath.Join(dir, "passwd")
	plant(t, dir, map[string]string{"passwd": strings.Join([]string{
		"root:x:0:0:root:/root:/bin/bash",
		"alice:x:1001:1001::" + alice + ":/bin/bash",
		"carol:x:1002:1002::" + carol + "/:/bin/bash",
		"svc:x:998:998::" + svc + ":/usr/sbin/nologin",
		"linuxbrew:x:1003:1003::" + brew + ":/bin/bash",
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
		"odd:x:1004:1004::/:/bin/sh", "broken line",
	}, "\n")})
	env := []string{"PATH=" + filepath.Join(brew, ".linuxbrew", "bin") + ":/usr/bin:/bin"}
	checkPlantedReads(t, "", Containment{Sandbox: box, passwdFile: passwd}, env, dir, files)
}
