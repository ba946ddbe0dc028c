//go:build linux

package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// The disk a step writes.
//
// The file-size limit bounds each file, not how many: a program that
// writes file after file under it fills the file system holding its
// worktree (or a --sandbox-write folder), which is the runner's and
// planex's too, and no quota is kept per step. So the init looks at each
// file system the step may write, every 20 ms (diskInterval), and ends the step when
// one has less than diskFloor left and less than when the step
// started: the runner, planex's git and its state files keep what is
// left, and planex's reset of the worktree takes the step's files away.
// A disk that was nearly full before the step still ends it at its first
// write. fallocate, which took the free space in one call between two
// looks, is refused by the system call filter (with the ioctls that
// reach it), and a disk falling fast counts as full early (check); a
// program whose pace jumps, within one look, from nothing to more than
// what is left still fills it. The
// file system's inodes are watched the same way: empty files, folders
// and links take no space a block count shows, yet once a file system
// has no inode left nothing more can be created there (git's objects and
// index, planex's state files), whatever space it has.

// diskFloorMost is the most a step leaves free: 256 MiB, or a twentieth
// of a smaller file system.
const diskFloorMost = 256 << 20

// inodeFloorMost is the most inodes a step leaves free: 65,536, or a
// twentieth of a file system with fewer.
const inodeFloorMost = 1 << 16

// diskGuard watches the file systems of a step's writable folders.
type diskGuard struct {
	fss    []watchedFS
	statfs func(string, *unix.Statfs_t) error
}

// watchedFS is one file system: a folder on it, the space and the
// inodes it must keep available and what it had of each when the step
// started (a file system that counts no inodes, as btrfs, has a floor of
// none).
type watchedFS struct {
	path                   string
	floor, start           uint64
	inodeFloor, inodeStart uint64
	// last is the space available at the previous look.
	last uint64
}

// newDiskGuard starts watching the file systems holding paths, each
// once; statfs is unix.Statfs but in tests.
func newDiskGuard(paths []string, statfs func(string, *unix.Statfs_t) error) *diskGuard {
	g := &diskGuard{statfs: statfs}
	seen := map[unix.Fsid]bool{}
	for _, p := range paths {
		var st unix.Statfs_t
		if statfs(p, &st) != nil || seen[st.Fsid] {
			continue
		}
		seen[st.Fsid] = true
		size := st.Blocks * uint64(st.Bsize)
		avail := st.Bavail * uint64(st.Bsize)
		g.fss = append(g.fss, watchedFS{path: p, floor: min(diskFloorMost, size/20), start: avail,
			inodeFloor: min(inodeFloorMost, st.Files/20), inodeStart: st.Ffree, last: avail})
	}
	return g
}

// check returns a folder whose file system the step has filled past its
// floor of space or of inodes, and what is left there ("3 MiB", "900
// inodes"); ok is false while none has. A file system whose space fell
// since the previous look by more than a quarter of what is left is full
// within four looks at that pace: it counts as filled too (several
// writers at memory speed took a small file system's last block between
// two looks 20 ms apart, past a floor of a twentieth, their pace rising
// as they started: TestRedTeamDiskFillBetweenLooks). On a large disk this
// ends a step early only when it writes more than 64 MiB every 20 ms
// (3 GiB/s) within a GiB of the floor.
func (g *diskGuard) check() (path, left string, ok bool) {
	for i := range g.fss {
		fs := &g.fss[i]
		var st unix.Statfs_t
		if g.statfs(fs.path, &st) != nil {
			continue
		}
		avail := st.Bavail * uint64(st.Bsize)
		fell := fs.last - min(fs.last, avail)
		fs.last = avail
		if avail < fs.floor && avail < fs.start {
			return fs.path, fmt.Sprintf("%d MiB", avail>>20), true
		}
		if avail < 4*fell && avail < fs.start {
			return fs.path, fmt.Sprintf("%d MiB (falling %d MiB in %s)", avail>>20, fell>>20, diskInterval), true
		}
		if st.Ffree < fs.inodeFloor && st.Ffree < fs.inodeStart {
			return fs.path, fmt.Sprintf("%d inodes (files, folders, links)", st.Ffree), true
		}
	}
	return "", "", false
}
