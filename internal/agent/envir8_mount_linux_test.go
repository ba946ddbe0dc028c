//go:build linux

package agent

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRedTeamHiddenHomeThroughAnOverlay: a hidden home (or a folder
// inside it) is a layer of an overlay mounted elsewhere (a lower or
// upper folder of a container's or a build tool's overlay): the
// overlay's merged folder shows the same files under another name, on
// a device of its own, which the bind mounts' aliases did not see. A
// contained agent read the home's key there. The mount points of the
// overlays whose layers lie in a hidden or covered folder are hidden
// now. (The test mounts an overlay of its own, as root.)
func TestRedTeamHiddenHomeThroughAnOverlay(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-overlayhome-")
	files := map[string]string{"home/ci/.ssh/id_ed25519": "loot-overlay-lower", "home/ci/up/.netrc": "loot-overlay-upper", "plain/notes": "plain-readable"}
	plant(t, dir, files)
	home := filepath.Join(dir, "home", "ci")
	for _, d := range []string{"merged", "merged2", "work", "work2", "up2"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	merged, merged2 := filepath.Join(dir, "merged"), filepath.Join(dir, "merged2")
	if err := unix.Mount("overlay", merged, "overlay", 0, "lowerdir="+filepath.Join(home, ".ssh")+":"+filepath.Join(dir, "plain")+
		",upperdir="+filepath.Join(dir, "up2")+",workdir="+filepath.Join(dir, "work")); err != nil {
		t.Skipf("cannot mount an overlay here (needs root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(merged, unix.MNT_DETACH) })
	if err := unix.Mount("overlay", merged2, "overlay", 0, "lowerdir="+filepath.Join(dir, "plain")+
		",upperdir="+filepath.Join(home, "up")+",workdir="+filepath.Join(dir, "work2")); err != nil {
		t.Skipf("cannot mount an overlay here (needs root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(merged2, unix.MNT_DETACH) })
	c := Containment{Sandbox: box, account: func([]string) []string { return []string{home} }}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	checkPlantedReads(t, "the overlay's name: ", c, env, dir, map[string]string{
		"merged/id_ed25519": "loot-overlay-lower", "merged2/.netrc": "loot-overlay-upper", "plain/notes": "plain-readable",
	})
}
