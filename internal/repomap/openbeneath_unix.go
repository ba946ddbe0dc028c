//go:build unix

package repomap

import (
	"errors"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// errOutside is what opening a path that leads out of the repository
// (a `..` part) answers.
var errOutside = errors.New("path leads outside the repository")

func openRoot(root string) (int, error) {
	for {
		fd, err := syscall.Open(root, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			return fd, err
		}
	}
}

// openPartByPart opens rel under the folder dir one part at a time, each
// with O_NOFOLLOW (a folder with O_DIRECTORY too), so a symlink in any
// part answers ELOOP (or ENOTDIR) and nothing outside dir is reached.
func openPartByPart(dir int, rel string, flags int) (int, error) {
	parts := strings.Split(rel, "/")
	cur := dir
	for i, p := range parts {
		if p == "" || p == "." || p == ".." {
			closeUnless(cur, dir)
			return -1, errOutside
		}
		fl := syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
		last := i == len(parts)-1
		if last {
			fl = flags | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
		}
		fd, err := openatRetry(cur, p, fl)
		closeUnless(cur, dir)
		if err != nil {
			if !last && errors.Is(err, syscall.ENOTDIR) {
				// A link (or a file) where a folder is: O_DIRECTORY
				// with O_NOFOLLOW answers ENOTDIR for a link.
				err = syscall.ELOOP
			}
			return -1, err
		}
		cur = fd
	}
	return cur, nil
}

func openatRetry(dir int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, 0)
		if !errors.Is(err, syscall.EINTR) {
			return fd, err
		}
	}
}

func closeUnless(fd, keep int) {
	if fd != keep {
		syscall.Close(fd)
	}
}
