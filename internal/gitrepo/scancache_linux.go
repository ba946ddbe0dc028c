//go:build linux

package gitrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"
)

// configStamp identifies the state of files: for each, its device,
// inode, size and modification and change times, or its absence. stable
// is false when a file changed within its window before now (racyWindow,
// or coarseWindow for a file whose times look coarse) or cannot be
// looked at, and then the stamp must not be trusted.
func configStamp(files []string, now time.Time) (stamp string, stable bool) {
	var b strings.Builder
	for _, f := range files {
		fi, err := os.Stat(f)
		if errors.Is(err, fs.ErrNotExist) {
			b.WriteString("-\x00")
			continue
		}
		if err != nil {
			return "", false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return "", false
		}
		mtime := time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
		ctime := time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
		window := racyWindow
		if coarseTimes(mtime, ctime) {
			window = coarseWindow
		}
		if now.Sub(mtime) < window || now.Sub(ctime) < window {
			return "", false
		}
		fmt.Fprintf(&b, "%d:%d:%d:%d:%d\x00", st.Dev, st.Ino, st.Size, mtime.UnixNano(), ctime.UnixNano())
	}
	return b.String(), true
}

// coarseTimes reports whether a file's modification and change times
// both fall on a whole millisecond: the mark of a file system keeping
// times in seconds (ext3, an ext4 of 128-byte inodes, many network file
// systems), two seconds (FAT's modification time) or hundredths (exFAT).
// A rewrite there within that step keeps both times, so racyWindow tells
// nothing; a file system of nanosecond times gives both by chance one
// time in a million million.
func coarseTimes(mtime, ctime time.Time) bool {
	return mtime.Nanosecond()%int(time.Millisecond) == 0 && ctime.Nanosecond()%int(time.Millisecond) == 0
}
