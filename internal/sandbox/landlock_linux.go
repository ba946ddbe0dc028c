//go:build linux

package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Abstract Unix sockets belong to a network namespace, so a contained
// network holds them. With the network open (--network open) the
// program shares the host's, and the services listening there act for
// whoever of the user's uid connects: an X server (Xwayland's
// "localuser" rule) types into the user's terminal, a session bus on an
// abstract address starts commands outside the sandbox (systemd-run
// --user). Landlock's scope (Linux 6.12 and later) keeps a process from
// connecting to an abstract socket made outside its own Landlock domain,
// whatever the network: the program's own sockets, and those of the
// processes it starts, still work. The domain is scoped to signals too:
// the program's only process outside it is the sandbox's init, which
// shares its uid when planex is not root (a SIGTERM sent there was
// passed on to the program, ending the step).

// landlockRulesetAttr is struct landlock_ruleset_attr of Landlock ABI 6.
type landlockRulesetAttr struct {
	handledAccessFS  uint64
	handledAccessNet uint64
	scoped           uint64
}

// scopeRuleset makes a Landlock ruleset scoped to abstract Unix sockets
// and signals and returns its descriptor, or -1 on a kernel without
// Landlock, with Landlock off or refused, or with a Landlock that has no
// scopes.
func scopeRuleset() (int, error) {
	attr := landlockRulesetAttr{scoped: unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	switch e {
	case 0:
		return int(fd), nil
	case unix.ENOSYS, unix.EOPNOTSUPP, unix.EINVAL, unix.E2BIG, unix.EPERM:
		// EPERM: a container's own seccomp profile refusing the call.
		return -1, nil
	}
	return -1, fmt.Errorf("making a Landlock ruleset: %w", e)
}

// landlockScopes reports whether this kernel scopes abstract sockets.
func landlockScopes() bool {
	fd, err := scopeRuleset()
	if fd >= 0 {
		unix.Close(fd)
	}
	return err == nil && fd >= 0
}

// ScopesAbstractSockets reports whether this machine keeps a contained
// program with the host's network (--network open) from its abstract
// Unix sockets and from signalling the sandbox's init: Landlock's scopes,
// Linux 6.12 and later. Callers say so at run time where it does not.
func ScopesAbstractSockets() bool { return landlockScopes() }

// scopeAbstractSockets puts the calling thread (which must then exec the
// program) in a Landlock domain scoped to its abstract Unix sockets and
// signals; it
// needs no_new_privs on this thread. Where the kernel has no such scope
// it does nothing: a contained network still holds the host's abstract
// sockets, an open one does not (docs/security.md).
func scopeAbstractSockets() error {
	fd, err := scopeRuleset()
	if err != nil || fd < 0 {
		return err
	}
	defer unix.Close(fd)
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); e != 0 {
		return fmt.Errorf("entering the Landlock domain: %w", e)
	}
	return nil
}
