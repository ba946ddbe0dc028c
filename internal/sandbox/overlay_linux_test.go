//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOverlayShowsPlanexFile: a file the policy overlays (the
// repository's git config, credentials removed) reads as planex's
// version, in a read-only and in a writable directory alike; the program
// can neither write it, nor replace, move or unmount it to reach the
// real one, which stays unchanged.
func TestOverlayShowsPlanexFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	src := filepath.Join(t.TempDir(), "agent-config")
	writeFile(t, src, "clean-config\n", 0o644)
	for _, writable := range []bool{false, true} {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		real := filepath.Join(dir, "config")
		writeFile(t, real, "token=overlay-real-secret\n", 0o666)
		p := Policy{ReadOnly: []string{dir}, Overlay: []Overlay{{Path: real, Source: src}}}
		if writable {
			p = Policy{Writable: []string{dir}, Overlay: p.Overlay}
		}
		out, _ := run(t, s, p, "/", nil, strings.Join([]string{
			"cat " + real,
			"echo overwritten > " + real,
			"mv " + real + " " + dir + "/moved",
			"rm -f " + real,
			"umount " + real,
			"cat " + real,
			"cat " + dir + "/moved",
		}, "; "))
		if strings.Contains(out, "overlay-real-secret") || strings.Count(out, "clean-config") != 2 {
			t.Errorf("writable=%v: the program reached the real file or lost planex's:\n%s", writable, out)
		}
		if b, _ := os.ReadFile(real); string(b) != "token=overlay-real-secret\n" {
			t.Errorf("writable=%v: the real file changed: %q", writable, b)
		}
		if b, _ := os.ReadFile(src); string(b) != "clean-config\n" {
			t.Errorf("writable=%v: planex's file changed: %q", writable, b)
		}
	}
}
