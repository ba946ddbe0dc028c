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
// is false when a file changed within racyWindow before now or cannot be
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
		if now.Sub(mtime) < racyWindow || now.Sub(ctime) < racyWindow {
			return "", false
		}
		fmt.Fprintf(&b, "%d:%d:%d:%d:%d\x00", st.Dev, st.Ino, st.Size, mtime.UnixNano(), ctime.UnixNano())
	}
	return b.String(), true
}
