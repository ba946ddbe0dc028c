//go:build !unix

package repomap

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ReadRegular reads the regular file rel (slash-separated, relative to the
// folder root) into buf (reused, grown as needed) unless it is larger than
// maxBytes; skip names why a file is left out ("" when it was read).
// Without O_NOFOLLOW (Windows) every part of rel is checked with Lstat
// first (no link, no `..`), and the read stops at maxBytes whatever the
// file grew to in between.
func ReadRegular(buf []byte, root, rel string, maxBytes int64) (data []byte, size int64, skip string, err error) {
	name := root
	var fi os.FileInfo
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." || part == ".." {
			return buf, 0, "outside the repository", nil
		}
		name = filepath.Join(name, part)
		if fi, err = os.Lstat(name); err != nil {
			return buf, 0, "unreadable", err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return buf, 0, "symlink", nil
		}
	}
	switch {
	case !fi.Mode().IsRegular():
		return buf, 0, "not a regular file", nil
	case fi.Size() > maxBytes:
		return buf, 0, "too large", nil
	}
	f, err := os.Open(name)
	if err != nil {
		return buf, 0, "unreadable", err
	}
	defer f.Close()
	buf = buf[:0]
	if c := int(fi.Size()) + 1; cap(buf) < c {
		buf = make([]byte, 0, c)
	}
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF:
			return buf, int64(len(buf)), "", nil
		case err != nil:
			return buf, 0, "unreadable", err
		case int64(len(buf)) > maxBytes:
			return buf, 0, "too large", nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// dirReader reads the files of a tree as ReadRegular does (the
// descriptor-relative opens of the unix build have no portable
// counterpart here).
type dirReader struct{ root string }

func newDirReader(root string) *dirReader { return &dirReader{root: root} }

// read is ReadRegular of rel, a slash-separated path under d's root.
func (d *dirReader) read(buf []byte, rel string, maxBytes int64) (data []byte, size int64, skip string, err error) {
	return ReadRegular(buf, d.root, rel, maxBytes)
}

func (d *dirReader) close() {}
