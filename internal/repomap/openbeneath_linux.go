//go:build linux

package repomap

import (
	"errors"

	"golang.org/x/sys/unix"
)

// openBeneath opens rel (slash-separated, relative) under the folder root
// for reading with no symlink followed in any of rel's parts and nothing
// reached outside root: openat2 with RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH,
// or, on a kernel without it (before 5.6), one part at a time.
func openBeneath(root, rel string, flags int) (int, error) {
	dir, err := openRoot(root)
	if err != nil {
		return -1, err
	}
	defer unix.Close(dir)
	return openBeneathAt(dir, rel, flags)
}

// maxOpenat2Tries bounds the openat2 calls one open makes while they
// answer EINTR or EAGAIN. The kernel answers EAGAIN to a scoped lookup
// (RESOLVE_BENEATH) through `..` when any rename or mount anywhere on the
// system raced it, so an agent renaming without pause could keep the loop
// going for ever; after this many the part-by-part walk answers, which
// takes no such retry (and refuses `..` outright).
const maxOpenat2Tries = 256

// openat2Func is unix.Openat2's shape, so a test can hand in one that
// always races.
type openat2Func func(dirfd int, path string, how *unix.OpenHow) (int, error)

// openBeneathAt is openBeneath under the folder open as dir.
func openBeneathAt(dir int, rel string, flags int) (int, error) {
	return openBeneathWith(unix.Openat2, dir, rel, flags)
}

// openBeneathWith is openBeneathAt with openat2 made by the given call.
func openBeneathWith(openat2 openat2Func, dir int, rel string, flags int) (int, error) {
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	for range maxOpenat2Tries {
		fd, err := openat2(dir, rel, &how)
		switch {
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			// EAGAIN: a rename raced the lookup; try again.
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			// No openat2 (a kernel before 5.6), or a seccomp profile
			// that refuses it: the walk gives the same answer.
			return openPartByPart(dir, rel, flags)
		case errors.Is(err, unix.EXDEV):
			return -1, errOutside
		}
		return fd, err
	}
	// Every try raced: the walk opens each part with O_NOFOLLOW, as safe
	// against a swapped folder, and does not retry.
	return openPartByPart(dir, rel, flags)
}
