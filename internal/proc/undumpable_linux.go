package proc

import "golang.org/x/sys/unix"

// HideFromSameUser makes this process non-dumpable: its /proc/<pid>/
// entries then belong to root, so a process of the same user without
// CAP_SYS_PTRACE reads no environ, mem, maps or fd of it, attaches no
// tracer and takes no descriptor of it (pidfd_getfd), and no core file
// of it is written. planex calls it when its agents run without the
// sandbox: they run as its user, and planex's environment holds the
// tokens and keys it keeps from them. The programs it starts are
// dumpable again (exec resets the flag). It is not called when a
// sandbox will be made: the child a user namespace is made for would
// then be root's until it execs, and planex, not root, could not write
// its uid map.
func HideFromSameUser() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
