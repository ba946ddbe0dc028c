//go:build linux

package sandbox

import (
	"errors"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// The sandbox's init builds its view of the file system and its network
// in a process of its own, whose coverage and errors a test of the whole
// sandbox sees only as the program's behaviour. The tests in
// initparts_linux_test.go run those parts in this process instead, on one
// OS thread moved into namespaces of its own: fn runs on a locked thread
// after unshare(flags), and the goroutine ends without unlocking, so Go
// ends the thread with it and no other goroutine ever runs in those
// namespaces. Nothing fn does to mounts or the network reaches the host.
//
// A test calling inThread must not run in parallel with tests that start
// sandboxes: the sandbox starts its init with Pdeathsig, which the kernel
// sends when the *thread* that forked it ends, and the thread inThread
// locks and ends may be one another test's goroutine forked an init from
// earlier (that test's program then dies of SIGKILL: TestRelayFloodBounded
// did, one package run in five). Serial tests finish before parallel ones
// resume, so those tests are serial.
func inThread(t *testing.T, flags int, fn func() error) error {
	t.Helper()
	type result struct {
		err      error
		unshared bool
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// Deliberately never unlocked: see above.
		if err := unix.Unshare(flags); err != nil {
			done <- result{err: err}
			return
		}
		done <- result{err: fn(), unshared: true}
	}()
	r := <-done
	if !r.unshared {
		if errors.Is(r.err, unix.EPERM) || errors.Is(r.err, unix.EINVAL) {
			t.Skipf("this process may not make namespaces of its own (%v)", r.err)
		}
		t.Fatalf("unshare: %v", r.err)
	}
	return r.err
}

// needHostRoot skips tests whose namespaces need root in the host's user
// namespace (mount and network namespaces without a user namespace).
func needHostRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a mount or network namespace in this process needs root; the sandbox's own tests cover this unprivileged")
	}
}
