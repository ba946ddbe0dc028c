//go:build linux

package agent

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRedTeamHomeThroughABindMount: the account's home is also mounted
// at a second place (a home kept on a data disk, /data/home/ci bound to
// /home/ci): the sandbox covered the home's name and the agent read the
// same files by the other one. Both names are hidden now. (The test
// binds a folder of its own, as root, and unmounts it after.)
func TestRedTeamHomeThroughABindMount(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-homebind-")
	files := map[string]string{"data/home/ci/.ssh/id_ed25519": "loot-bound-home-key", "data/home/ci/.npmrc": "loot-bound-npmrc", "data/other/notes": "plain-readable"}
	plant(t, dir, files)
	home := filepath.Join(dir, "home", "ci")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(filepath.Join(dir, "data", "home", "ci"), home, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind a folder here (needs root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(home, unix.MNT_DETACH) })
	c := Containment{Sandbox: box, account: func([]string) []string { return []string{home} }}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(dir, "override")}
	checkPlantedReads(t, "the data disk's name: ", c, env, dir, files)
	checkPlantedReads(t, "the home's name: ", c, env, dir, map[string]string{"home/ci/.npmrc": "loot-bound-npmrc"})
}
