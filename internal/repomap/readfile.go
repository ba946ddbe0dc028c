//go:build unix

package repomap

import (
	"errors"
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
