//go:build unix

package repomap

import (
	"errors"
	"path"
	"strings"
	"syscall"
)

// ReadRegular reads the regular file rel (slash-separated, relative to the
// folder root) into buf (reused, grown as needed) unless it is larger than
// maxBytes. skip names why a file is left out ("" when it was read). No
// symlink is followed in any part of rel, the folders leading to the file
// included (a worktree's `src -> /home/user` made `src/.bashrc` read), and
// nothing outside root is reached (openBeneath). One open and an fstat of
// the open file replace lstat then open: no os.File (poller registration,
// finalizer), and no window between check and open.
// O_NONBLOCK keeps a FIFO from blocking the open; fstat then skips it.
// The read stops at the size fstat gave, and at maxBytes whatever fstat
// said.
func ReadRegular(buf []byte, root, rel string, maxBytes int64) (data []byte, size int64, skip string, err error) {
	fd, err := openBeneath(root, rel, syscall.O_RDONLY|syscall.O_NONBLOCK)
	return readOpened(buf, fd, err, maxBytes)
}

// readOpened is the rest of ReadRegular once the file is opened as fd
// (err: why it was not), and closes fd.
func readOpened(buf []byte, fd int, err error, maxBytes int64) (data []byte, size int64, skip string, _ error) {
	switch {
	case errors.Is(err, syscall.ELOOP):
		// Symlinks, the file's or a folder's on the way to it, may
		// dangle or leave the repository; their targets inside the
		// repository are mapped on their own.
		return buf, 0, "symlink", nil
	case errors.Is(err, errOutside):
		return buf, 0, "outside the repository", nil
	case err != nil:
		// Listed but gone (deleted in the work tree) or unreadable.
		return buf, 0, "unreadable", err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return buf, 0, "unreadable", err
	}
	switch {
	case st.Mode&syscall.S_IFMT != syscall.S_IFREG:
		return buf, 0, "not a regular file", nil
	case st.Size > maxBytes:
		return buf, 0, "too large", nil
	}
	buf = buf[:0]
	if c := int(st.Size) + 1; cap(buf) < c {
		buf = make([]byte, 0, c)
	}
	for {
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return buf, 0, "unreadable", err
		case n == 0:
			return buf, st.Size, "", nil
		}
		buf = buf[:len(buf)+n]
		switch {
		case int64(len(buf)) == st.Size:
			// All fstat reported: no second read to see the end (one
			// syscall a file). A file growing meanwhile is read as it
			// was when opened.
			return buf, st.Size, "", nil
		case int64(len(buf)) > maxBytes:
			// Grown past the bound since fstat, or a file whose fstat
			// size says nothing (size 0, content read): the buffer
			// stays bounded.
			return buf[:0], 0, "too large", nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// dirReader reads the files of a tree one after the other as ReadRegular
// does, with the repository's root kept open and the folder of the last
// file read kept open while the next files are in the same folder. A tree
// listed in path order has each folder's files together, so the kernel
// walks a folder's path once per run of its files rather than once a
// file, and no joined path is built a file. The folder is opened beneath
// the root with no symlink in any part (openBeneathAt), the file in it by
// its name with O_NOFOLLOW: the same answers as ReadRegular. A name
// openBeneathAt refuses is read by ReadRegular, which says why. Not safe
// for concurrent use.
type dirReader struct {
	root   string
	rootFD int    // -1 until opened
	dir    string // rel's folder part (with its slash) open as fd
	fd     int    // -1 when none is open
}

func newDirReader(root string) *dirReader { return &dirReader{root: root, rootFD: -1, fd: -1} }

// read is ReadRegular of rel, a slash-separated path under d's root.
func (d *dirReader) read(buf []byte, rel string, maxBytes int64) (data []byte, size int64, skip string, err error) {
	dir, name := path.Split(rel)
	if name == "" || name == "." || name == ".." || d.openRoot() != nil {
		return ReadRegular(buf, d.root, rel, maxBytes)
	}
	at := d.rootFD
	if dir != "" {
		if d.fd < 0 || dir != d.dir {
			d.closeDir()
			fd, err := openBeneathAt(d.rootFD, strings.TrimSuffix(dir, "/"), syscall.O_RDONLY|syscall.O_DIRECTORY)
			if err != nil {
				return ReadRegular(buf, d.root, rel, maxBytes)
			}
			d.fd, d.dir = fd, dir
		}
		at = d.fd
	}
	fd, err := openatRetry(at, name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
	return readOpened(buf, fd, err, maxBytes)
}

func (d *dirReader) openRoot() error {
	if d.rootFD >= 0 {
		return nil
	}
	fd, err := openRoot(d.root)
	if err == nil {
		d.rootFD = fd
	}
	return err
}

func (d *dirReader) closeDir() {
	if d.fd >= 0 {
		syscall.Close(d.fd)
		d.fd, d.dir = -1, ""
	}
}

// close closes what d holds open.
func (d *dirReader) close() {
	d.closeDir()
	if d.rootFD >= 0 {
		syscall.Close(d.rootFD)
		d.rootFD = -1
	}
}
