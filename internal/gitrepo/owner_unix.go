//go:build unix

package gitrepo

import (
	"os"
	"syscall"
)

// ownedByOther reports the owner of fi when it is not this process's user.
func ownedByOther(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Getuid() {
		return 0, false
	}
	return int(st.Uid), true
}
