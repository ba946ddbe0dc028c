//go:build linux

package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestWriteOnAFullDisk: when the disk fills up mid-write, the state file
// keeps its previous content whole, the error says which file and is
// ENOSPC to errors.Is, and no temporary file is left. The full disk is a
// small tmpfs mounted in a mount namespace of one OS thread's own (never
// unlocked, so the thread ends with the test and the host sees nothing).
func TestWriteOnAFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system to fill needs root")
	}
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "tasks.csv")
	old := []byte("id,status\nT1,completed\n")
	type result struct {
		err, writeErr error
		kept          []byte
		left          []string
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		var r result
		defer func() { done <- r }()
		if err := syscall.Unshare(syscall.CLONE_NEWNS); err != nil {
			r.err = fmt.Errorf("unshare: %w", err)
			return
		}
		if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			r.err = err
			return
		}
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
			r.err = err
			return
		}
		if err := Write(p, old, 0o644); err != nil {
			r.err = err
			return
		}
		r.writeErr = Write(p, bytes.Repeat([]byte("T2,pending\n"), 100_000), 0o644)
		r.kept, _ = os.ReadFile(p)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			r.left = append(r.left, e.Name())
		}
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.writeErr == nil || !errors.Is(r.writeErr, syscall.ENOSPC) || !strings.Contains(r.writeErr.Error(), p) {
		t.Errorf("Write on a full disk = %v; want ENOSPC naming %s", r.writeErr, p)
	}
	if !bytes.Equal(r.kept, old) {
		t.Errorf("the state file holds %d bytes after the failed write, want its previous %d", len(r.kept), len(old))
	}
	if strings.Join(r.left, " ") != "tasks.csv" {
		t.Errorf("the folder holds %v, want only tasks.csv", r.left)
	}
}
