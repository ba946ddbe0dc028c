//go:build !unix

package repomap

import (
	"io"
	"os"
	"slices"
)

// readRegular reads the regular file name into buf (reused, grown as
// needed) unless it is larger than maxBytes. skip names why a file is left
// out ("" when it was read).
func readRegular(buf []byte, name string, maxBytes int64) (data []byte, size int64, skip string, err error) {
	st, err := os.Lstat(name)
	switch {
	case err != nil:
		// Listed but gone (deleted in the work tree) or unreadable.
		return buf, 0, "unreadable", err
	case st.Mode()&os.ModeSymlink != 0:
		// Symlinks may dangle or leave the repository; their targets
		// inside the repository are mapped on their own.
		return buf, 0, "symlink", nil
	case !st.Mode().IsRegular():
		return buf, 0, "not a regular file", nil
	case st.Size() > maxBytes:
		return buf, 0, "too large", nil
	}
	f, err := os.Open(name)
	if err != nil {
		return buf, 0, "unreadable", err
	}
	defer f.Close()
	buf = slices.Grow(buf[:0], int(st.Size())+1)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, st.Size(), "", nil
		}
		if err != nil {
			return buf, 0, "unreadable", err
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 4096)
		}
	}
}
