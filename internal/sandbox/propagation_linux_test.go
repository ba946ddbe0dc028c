//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamMountPropagationToHost: a contained program makes user and
// mount namespaces of its own (unshare -Urm), marks every mount there
// shared (mount --make-rshared /, or unshare's --propagation shared),
// then mounts a tmpfs on the folder it may write and binds a folder of
// its own over it, hoping a mount made in a shared peer group reaches the
// host's mount table: a mount on a host folder would outlive the step and
// show the host what the program chose (a tmpfs over a cache, a bind over
// a configuration). None reaches the host: the step's mount namespace is
// made with a user namespace of its own, so the kernel turns every mount
// the host shares into one that only receives (a slave), and the step
// holds no shared mount to propagate from; the host's folder keeps no
// file the program wrote in its own mounts and its mount table gains
// nothing there. This held before the test was written.
func TestRedTeamMountPropagationToHost(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("util-linux's unshare is not installed: no namespaces of the program's own")
	}
	writable := t.TempDir()
	s := newSandbox(t)
	cases := []struct{ name, script string }{
		{"make-rshared, then a tmpfs", "unshare -Urm sh -c 'mount --make-rshared / && mount -t tmpfs planex-probe W && touch W/planted && echo MOUNTED'"},
		{"propagation shared, then a bind", "unshare -Urm --propagation shared sh -c 'mkdir -p /tmp/own && touch /tmp/own/planted && mount --bind /tmp/own W && echo MOUNTED'"},
	}
	for _, c := range cases {
		out, err := run(t, s, Policy{Writable: []string{writable}}, "/", []string{"PATH=" + os.Getenv("PATH")}, strings.ReplaceAll(c.script, "W", writable))
		if !strings.Contains(out, "MOUNTED") {
			t.Fatalf("%s: the program mounted nothing in namespaces of its own (%v):\n%s", c.name, err, out)
		}
		if _, err := os.Lstat(filepath.Join(writable, "planted")); err == nil {
			t.Errorf("%s: the host sees the file the program wrote in its own mount on %s", c.name, writable)
		}
		mounts, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(mounts), "\n") {
			if f := strings.Fields(line); len(f) > 4 && f[4] == writable {
				t.Errorf("%s: the host's mount table gained a mount on the program's folder: %s", c.name, line)
			}
		}
	}
}
