//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// devNodes are the only host devices a contained program sees, each bound
// from the host onto an empty file of a fresh /dev: no disks, loop or
// KVM devices, consoles, vsock or memory.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// devLinks are the usual names that lead to a process's own descriptors
// and to the private pseudo-terminals.
var devLinks = map[string]string{
	"fd":     "/proc/self/fd",
	"stdin":  "/proc/self/fd/0",
	"stdout": "/proc/self/fd/1",
	"stderr": "/proc/self/fd/2",
	"ptmx":   "pts/ptmx",
}

// devDirs are mount points: a private devpts, and shm, which coverPlaces
// mounts a fresh tmpfs on.
var devDirs = []string{"pts", "shm"}

// DevEntries lists what /dev holds inside the sandbox, sorted.
func DevEntries() []string {
	out := append(append([]string(nil), devNodes...), devDirs...)
	for name := range devLinks {
		out = append(out, name)
	}
	return sortedCopy(out)
}

// minimalDev covers r/dev with a tmpfs holding only devNodes, devLinks and
// devDirs, mounts a private devpts instance (its own ptmx and numbers, no
// host terminal, at most maxPtys terminals: ptys_linux.go), and makes the
// tmpfs read-only.
func minimalDev(r string) error {
	dev := filepath.Join(r, "dev")
	if err := tmpfs(dev, "0755", 0); err != nil {
		return err
	}
	for _, d := range devDirs {
		if err := os.Mkdir(filepath.Join(dev, d), 0o755); err != nil {
			return fmt.Errorf("preparing /dev/%s: %w", d, err)
		}
	}
	for _, n := range devNodes {
		if err := bindDevice(dev, n); err != nil {
			return err
		}
	}
	for name, target := range devLinks {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return fmt.Errorf("preparing /dev/%s: %w", name, err)
		}
	}
	pts := filepath.Join(dev, "pts")
	if err := unix.Mount("devpts", pts, "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, fmt.Sprintf("newinstance,ptmxmode=0666,mode=0620,max=%d", maxPtys)); err != nil {
		return fmt.Errorf("mounting a private /dev/pts: %w", err)
	}
	if err := unix.MountSetattr(-1, dev, 0, readOnlyAttr()); err != nil {
		return fmt.Errorf("sealing /dev: %w", err)
	}
	return nil
}

// bindDevice binds the host's /dev/name onto an empty file under dev; a
// device the host lacks is left out.
func bindDevice(dev, name string) error {
	host := "/dev/" + name
	fi, err := os.Stat(host)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	target := filepath.Join(dev, name)
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		return fmt.Errorf("preparing /dev/%s: %w", name, err)
	}
	if err := unix.Mount(host, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("binding /dev/%s: %w", name, err)
	}
	return nil
}
