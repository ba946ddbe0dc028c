//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Bounds of the walk for host sockets: /run is a small tmpfs, and a
// walk that ran out of budget hides what it found so far.
const (
	socketWalkDepth   = 8
	socketWalkEntries = 20000
)

var errWalkBudget = errors.New("walk budget spent")

// runSockets lists the Unix sockets of host services under /var/snap
// (where snaps' services listen: MicroK8s's containerd, LXD) as the
// host's file system bound at r shows them, by their paths on the host.
// A contained network reaches no host service through them. /run and
// /var/run, where most services listen, are not walked: a contained
// network's step sees them empty (runFolders).
//
// Folders in covered (hidden or masked anyway) are not entered.
func runSockets(r string, covered []string) []string {
	skip := map[string]bool{}
	for _, c := range covered {
		skip[filepath.Join(r, c)] = true
	}
	var out []string
	for _, dir := range []string{"/var/snap"} {
		root := filepath.Join(r, dir)
		if !isDir(root) {
			continue // absent, or a link to /run
		}
		seen := 0
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if d != nil && d.IsDir() && p != root {
					return fs.SkipDir // unreadable: unreachable for the program too
				}
				return nil
			}
			if seen++; seen > socketWalkEntries {
				return errWalkBudget
			}
			if d.IsDir() && (skip[p] || strings.Count(strings.TrimPrefix(p, root), "/") >= socketWalkDepth) {
				return fs.SkipDir
			}
			if d.Type()&fs.ModeSocket != 0 {
				out = append(out, strings.TrimPrefix(p, r))
			}
			return nil
		})
	}
	return out
}

// procNetUnix lists the Unix sockets of the reader's network namespace.
const procNetUnix = "/proc/self/net/unix"

// Bounds of what is read of procNetUnix: a busy desktop binds a few
// hundred named sockets.
const (
	maxProcNetUnix = 16 << 20
	maxBoundPaths  = 4096
)

// boundSockets lists the paths of the Unix sockets bound in the network
// namespace procNetUnix (planex's, the host's) describes, wherever they
// lie: a service may listen on one under /var/lib, /opt, /srv or a home
// of its own, which the /run walk never sees, and a path socket reaches
// its service from any network namespace. Abstract names (@…), relative
// paths and unnamed sockets are left out; the paths are as each was
// bound, which the init checks again (boundIn).
func boundSockets(procNetUnix string) []string {
	f, err := os.Open(procNetUnix)
	if err != nil {
		return nil
	}
	defer f.Close()
	seen := map[string]bool{}
	var out []string
	sc := bufio.NewScanner(io.LimitReader(f, maxProcNetUnix))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() && len(out) < maxBoundPaths {
		p := socketPath(sc.Text())
		if filepath.IsAbs(p) && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// socketPath is the Path column of a /proc/net/unix line (after seven
// fields; it may hold spaces), or "".
func socketPath(line string) string {
	rest := line
	for range 7 {
		rest = strings.TrimLeft(rest, " ")
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			return ""
		}
		rest = rest[i:]
	}
	return strings.TrimLeft(rest, " ")
}

// boundIn keeps the paths of bound that are Unix sockets in the file
// system bound at r, but for skip (the step's forwarded sockets, which
// its init dials, and what is masked already).
func boundIn(r string, bound, skip []string) []string {
	var out []string
	for _, p := range bound {
		if slices.Contains(skip, p) {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(r, p)); err == nil && fi.Mode().Type() == fs.ModeSocket {
			out = append(out, p)
		}
	}
	return out
}
