//go:build unix

package safefile

import (
	"io/fs"
	"syscall"
)

// Owner returns the uid that owns the file fi describes; ok is false
// where the system does not say (another OS, a synthetic FileInfo).
func Owner(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
