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
// entries to the folder fi describes: it is writable by all, or another
// user's.
func openToOthers(fi fs.FileInfo, uid int) bool {
	if fi.Mode().Perm()&0o002 != 0 {
		return true
	}
	owner, ok := fileOwner(fi)
	return ok && owner != uid && owner != 0
}
