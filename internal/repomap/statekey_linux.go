//go:build linux

package repomap

import (
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// statStamp is name's stamp, not following a final symlink: size, mtime
// and ctime to the nanosecond, inode and mode, as git compares them.
func statStamp(name string) stamp {
	var st syscall.Stat_t
	if err := retryEINTR(func() error { return syscall.Lstat(name, &st) }); err != nil {
		return stamp{Missing: true}
	}
	return toStamp(&st)
}

func toStamp(st *syscall.Stat_t) stamp {
	return stamp{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: uint64(st.Ino), Mode: uint32(st.Mode),
		Regular: st.Mode&syscall.S_IFMT == syscall.S_IFREG}
}

// isDirStamp reports whether s is a directory's (one whose ctime is in
// the stamp, so that an entry added to it always changes the stamp).
func isDirStamp(s stamp) bool { return !s.Missing && s.Mode&syscall.S_IFMT == syscall.S_IFDIR }

func retryEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}

// stamper stamps paths under root relative to a descriptor of their
// directory, kept open while the next path is in the same directory: the
// kernel then looks up one name per file instead of the whole path.
type stamper struct {
	root   string
	rootFd int    // root, opened at the first relative path; -1 before
	dir    string // the open directory, relative to root
	fd     int    // -1 when none is open
	// raw is set when the stat calls go to the kernel without the
	// scheduler's bookkeeping (fstatatRaw); name is the NUL-terminated
	// name passed to it, reused.
	raw  bool
	name []byte
}

func newStamper(root string) *stamper {
	return &stamper{root: root, rootFd: -1, fd: -1, raw: haveRawFstatat && localDiskFS(root) && !mountInside(root)}
}

// maxMountinfo bounds what is read of /proc/self/mountinfo.
const maxMountinfo = 4 << 20

// mountInside reports whether a file system is mounted on a folder
// inside root (or it cannot tell): the statfs of root says nothing of
// such a folder, and a stat of its name, or of a file under it, goes to
// that file system, a network or user-space one whose stat may wait.
// The raw call would hold its processor meanwhile.
func mountInside(root string) bool {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return true
	}
	defer f.Close()
	info, err := io.ReadAll(io.LimitReader(f, maxMountinfo+1))
	if err != nil || len(info) > maxMountinfo {
		return true
	}
	roots := []string{filepath.Clean(root)}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		roots = append(roots, real)
	}
	return mountsUnder(info, roots)
}

// mountsUnder reports whether the mountinfo text names a mount point
// strictly inside one of roots (absolute, clean).
func mountsUnder(mountinfo []byte, roots []string) bool {
	for _, line := range strings.Split(string(mountinfo), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		at := unescapeMountField(f[4])
		for _, r := range roots {
			if strings.HasPrefix(at, strings.TrimSuffix(r, "/")+"/") {
				return true
			}
		}
	}
	return false
}

// unescapeMountField undoes the kernel's octal escapes of a mountinfo
// field (a space is \040, a backslash \134).
func unescapeMountField(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// localDiskFS reports whether root is on a file system whose stat of a
// name answers from memory or a local disk, never waiting on a network
// or a user-space server: only there may a stat call keep its processor
// (fstatatRaw). Anything else, or a root statfs cannot tell, takes the
// scheduler's ordinary system call.
func localDiskFS(root string) bool {
	var fs unix.Statfs_t
	if err := retryEINTR(func() error { return unix.Statfs(root, &fs) }); err != nil {
		return false
	}
	return localDiskMagic(int64(fs.Type))
}

func localDiskMagic(magic int64) bool {
	switch magic {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.OVERLAYFS_SUPER_MAGIC:
		return true
	}
	return false
}

// stamp is p's stamp; p is slash-separated under root, or absolute.
func (s *stamper) stamp(p string) stamp {
	if filepath.IsAbs(p) {
		return statStamp(p)
	}
	p = strings.TrimSuffix(p, "/")
	dir, name := path.Split(p)
	if name == "" || name == "." || name == ".." {
		return statStamp(filepath.Join(s.root, filepath.FromSlash(p)))
	}
	if s.fd < 0 || dir != s.dir {
		s.closeDir()
		fd, err := s.openDir(dir)
		if beyondTree(err) {
			return stamp{Missing: true}
		}
		if err != nil {
			return statStamp(filepath.Join(s.root, filepath.FromSlash(p)))
		}
		s.fd, s.dir = fd, dir
	}
	var st unix.Stat_t
	if err := s.fstatat(name, &st); err != nil {
		return stamp{Missing: true}
	}
	return stamp{Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino, Mode: st.Mode,
		Regular: st.Mode&unix.S_IFMT == unix.S_IFREG}
}

// fstatat stats name in the open directory, not following a final
// symlink.
func (s *stamper) fstatat(name string, st *unix.Stat_t) error {
	if !s.raw {
		return retryEINTR(func() error { return unix.Fstatat(s.fd, name, st, unix.AT_SYMLINK_NOFOLLOW) })
	}
	if strings.IndexByte(name, 0) >= 0 {
		return syscall.EINVAL
	}
	s.name = append(append(s.name[:0], name...), 0)
	for {
		switch err := fstatatRaw(s.fd, s.name, st); err {
		case 0:
			return nil
		case syscall.EINTR:
		default:
			return err
		}
	}
}

// openDir opens dir (slash-separated under root, "" for root) without
// following a link in any of its parts (openBeneathAt): a folder of the
// tree replaced by a link leads out of the tree, maybe to a network or
// user-space file system whose stat waits (with the raw call, holding
// its processor), and git itself sees no file beyond a link.
func (s *stamper) openDir(dir string) (int, error) {
	if s.rootFd < 0 {
		fd, err := syscall.Open(s.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_PATH, 0)
		if err != nil {
			return -1, err
		}
		s.rootFd = fd
	}
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		return unix.Dup(s.rootFd)
	}
	return openBeneathAt(s.rootFd, dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_PATH)
}

// beyondTree reports whether openDir failed because the folder is not
// one of the tree's: a link or a file in its way, gone, or outside.
func beyondTree(err error) bool {
	return errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ENOENT) || errors.Is(err, errOutside)
}

// closeDir closes the open directory.
func (s *stamper) closeDir() {
	if s.fd >= 0 {
		syscall.Close(s.fd)
		s.fd = -1
	}
}

func (s *stamper) close() {
	s.closeDir()
	if s.rootFd >= 0 {
		syscall.Close(s.rootFd)
		s.rootFd = -1
	}
}
