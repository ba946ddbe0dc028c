//go:build linux

package agent

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRedTeamMountInsideAHiddenHome: a folder inside the home is a
// mount of a folder kept elsewhere (~/.aws bound from a data disk's
// /data/aws): hiding the home hid the mount at ~/.aws, but the agent
// read the same files by the data disk's name. The other names of the
// mounts inside a hidden folder are hidden too now. (The test binds a
// folder of its own, as root, and unmounts it after.)
func TestRedTeamMountInsideAHiddenHome(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-innerbind-")
	files := map[string]string{"data/aws/credentials": "aws_secret_access_key = loot-inner-bind", "data/other/notes": "plain-readable"}
	plant(t, dir, files)
	home := filepath.Join(dir, "home", "ci")
	inner := filepath.Join(home, ".aws")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(filepath.Join(dir, "data", "aws"), inner, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind a folder here (needs root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(inner, unix.MNT_DETACH) })
	c := Containment{Sandbox: box, account: func([]string) []string { return []string{home} }}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	checkPlantedReads(t, "the data disk's name: ", c, env, dir, files)
	checkPlantedReads(t, "the home's name: ", c, env, dir, map[string]string{"home/ci/.aws/credentials": "aws_secret_access_key = loot-inner-bind"})
}
