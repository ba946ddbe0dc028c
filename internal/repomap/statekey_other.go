//go:build !linux

package repomap

import (
	"os"
	"path/filepath"
	"strings"
)

// statStamp is name's stamp, not following a final symlink: size, mtime
// and mode (this system's stat gives no inode or ctime).
func statStamp(name string) stamp {
	fi, err := os.Lstat(name)
	if err != nil {
		return stamp{Missing: true}
	}
	return stamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode()), Regular: fi.Mode().IsRegular()}
}

// isDirStamp is false here: without a ctime in the stamp, an entry added
// to a directory whose mtime was then set back would keep its stamp, so
// every watched path is stamped again (see stateKeyer.holds).
func isDirStamp(stamp) bool { return false }

// stamper stamps paths under root (absolute ones as they are).
type stamper struct{ root string }

func newStamper(root string) *stamper { return &stamper{root: root} }

func (s *stamper) stamp(p string) stamp {
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.root, filepath.FromSlash(strings.TrimSuffix(p, "/")))
	}
	return statStamp(p)
}

func (s *stamper) close() {}
