package gittest

import "syscall"

// roomInMemory reports whether dir is a file system with at least need
// bytes free for an unprivileged writer.
func roomInMemory(dir string, need uint64) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Bavail*uint64(st.Bsize) >= need
}
