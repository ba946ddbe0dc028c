//go:build unix

package clis

import (
	"io/fs"
	"syscall"
)

// fileOwner is the uid owning fi's file.
func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// openToOthers reports whether a user other than uid and root may add
// entries to the folder fi describes, for a user whose primary group is
// gid (see sharedFolder).
func openToOthers(fi fs.FileInfo, uid, gid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fi.Mode().Perm()&0o002 != 0
	}
	return sharedFolder(fi.Mode().Perm(), int(st.Uid), int(st.Gid), uid, gid)
}

// noFollow makes an open fail on a link rather than follow it.
const noFollow = syscall.O_NOFOLLOW
