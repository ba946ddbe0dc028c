package safefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNotPrivate tells PrivateDir's refusal apart: the folder is there but
// another user could change what is in it.
var ErrNotPrivate = errors.New("not a private folder")

// PrivateDir makes sure dir is a folder only this process's user can
// change: it is created with mode 0700 when missing (its parent must
// exist), and refused with ErrNotPrivate, naming dir and why, when it is
// a link, not a folder, owned by another user or writable by group or
// others. A shared temporary folder's names can be taken by anyone, so
// what planex keeps under one goes in a folder that passes this check.
func PrivateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("checking %s: %w", dir, err)
	}
	switch uid, known := Owner(fi); {
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: %w", dir, ErrNotPrivate)
	case !fi.IsDir():
		return fmt.Errorf("%s is %s: %w", dir, modeName(fi.Mode()), ErrNotPrivate)
	case known && uid != os.Getuid():
		return fmt.Errorf("%s belongs to uid %d, not to this user (uid %d): %w", dir, uid, os.Getuid(), ErrNotPrivate)
	case known && fi.Mode().Perm()&0o022 != 0: // where owners are known, so are the mode's bits (Windows reports 0777)
		return fmt.Errorf("%s is writable by group or others (mode %#o): %w", dir, fi.Mode().Perm(), ErrNotPrivate)
	}
	return nil
}

// OpenNoFollow opens path for reading, failing when its last part is a
// symbolic link (where the system can tell) or when it is not a regular
// file (a FIFO planted there opens without waiting and is refused).
func OpenNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is %s, %w", path, modeName(fi.Mode()), ErrNotRegular)
	}
	return f, nil
}

// OpenBeneathNoFollow is OpenNoFollow for rel (slash-separated) inside
// the folder root holds: no part of rel may lead out of that folder
// through a link (one swapped in for a folder after its files were
// listed, absolute or by ..), which os.Root refuses, and the last part
// may be no link at all. os.Root follows a last part that is a link
// inside the folder whatever the flags say, so the file opened must be
// the one rel named before the open (a link there then, or one swapped
// in since, is refused).
func OpenBeneathNoFollow(root *os.Root, rel string) (*os.File, error) {
	name := filepath.FromSlash(rel)
	before, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, %w", rel, modeName(before.Mode()), ErrNotRegular)
	}
	f, err := root.OpenFile(name, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() || !os.SameFile(before, fi) {
		f.Close()
		return nil, fmt.Errorf("%s was replaced while it was opened (%s), %w", rel, modeName(fi.Mode()), ErrNotRegular)
	}
	return f, nil
}

// OpenAppend opens path for appending, creating it with perm when
// missing, and fails when its last part is a symbolic link (where the
// system can tell) or when what it opened is not a regular file: a link
// planted there to a file elsewhere is not written through, and a FIFO
// opens without waiting for a reader and is refused.
func OpenAppend(path string, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY|noFollow, perm)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("checking %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is %s, %w", path, modeName(fi.Mode()), ErrNotRegular)
	}
	return f, nil
}
