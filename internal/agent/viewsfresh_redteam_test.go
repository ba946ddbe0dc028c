package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRedTeamConfigChangedBetweenSteps: one Containment runs two steps,
// as a planex run does, and between them the machine's configuration
// changes where a view remembered from the first step would show a
// secret: a profile script rewritten to the same size with its times
// set back (a proxy with no password becomes one with a password), and
// a wgetrc that was absent appears with a password. The second step
// reads neither password: the views are filtered from the files as they
// are when the step starts, never from what an earlier step saw.
func TestRedTeamConfigChangedBetweenSteps(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-viewsfresh-")
	etc := filepath.Join(dir, "etc")
	profile := filepath.Join(etc, "profile.d", "proxy.sh")
	wgetrc := filepath.Join(etc, "wgetrc")
	before := "export http_proxy=http://proxy-a.example:3128/"
	after := "export http_proxy=http://ci:loot-pw@prox:3128/"
	if len(before) != len(after) {
		t.Fatalf("the two profiles differ in size: %d, %d", len(before), len(after))
	}
	plant(t, dir, map[string]string{"etc/profile.d/proxy.sh": before})
	fi, err := os.Stat(profile)
	if err != nil {
		t.Fatal(err)
	}
	c := Containment{Sandbox: box, etcDir: etc}
	env := []string{"PATH=/usr/bin:/bin"}
	read := "cat " + profile + " " + wgetrc + " 2>/dev/null; true"
	if out := runContained(t, c, env, "sh", "-c", read); !strings.Contains(out, before) {
		t.Fatalf("the first step did not read the profile as it is:\n%s", out)
	}

	plant(t, dir, map[string]string{"etc/profile.d/proxy.sh": after, "etc/wgetrc": "use_proxy = on\nproxy_password = loot-wget"})
	mtime := fi.ModTime().Truncate(time.Second)
	if err := os.Chtimes(profile, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	out := runContained(t, c, env, "sh", "-c", read)
	if strings.Contains(out, "loot-") {
		t.Errorf("the second step read a password the configuration gained after the first:\n%s", out)
	}
	for _, kept := range []string{"export http_proxy=http://prox:3128/", "use_proxy = on"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the second step did not see the new configuration's %q:\n%s", kept, out)
		}
	}
}
