//go:build linux

package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamCancelledGitWithAChildReturns: a git planex runs starts a
// program that keeps git's output open and waits for ever: here git's
// upload-pack on a local remote whose packed-refs is a FIFO nobody
// writes. Cancelling the call's context killed git, but not its child,
// which held git's stderr, so the wait for git's output never ended and
// the cancelled run never returned. Now a cancelled git's process group
// is killed, and its output is given up shortly after.
func TestRedTeamCancelledGitWithAChildReturns(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	origin, c := cloneOf(t, r)
	packed := filepath.Join(origin, "packed-refs")
	os.Remove(packed)
	if err := syscall.Mkfifo(packed, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.ListRemoteRefs(ctx, "origin", "refs/heads/*")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("listing a remote whose packed-refs is a FIFO succeeded")
		}
	case <-time.After(2 * time.Minute):
		// Free the child so the test binary can end.
		if f, err := os.OpenFile(packed, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("the cancelled listing did not return: git's child held its output")
	}
}
