//go:build linux

package sandbox

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// Bounds of the walk for host sockets: /run is a small tmpfs, and a
// walk that ran out of budget hides what it found so far.
const (
	socketWalkDepth   = 8
	socketWalkEntries = 20000
)

var errWalkBudget = errors.New("walk budget spent")

// runSockets lists the Unix sockets of host services under /run (and
// /var/run when it is a folder of its own) and /var/snap (where snaps'
// services listen: MicroK8s's containerd, LXD) as the host's file system
// bound at r shows them, by their paths on the host. A contained
// network reaches no host service through them: systemd-resolved's
// varlink socket, nscd and avahi resolve any name for the asker (a DNS
// query for <data>.attacker.example carries data out), and others
// (snapd, databases) make connections of their own.
//
// Folders in covered (hidden or masked anyway, like /run/user, where a
// desktop's FUSE mounts live) are not entered.
func runSockets(r string, covered []string) []string {
	skip := map[string]bool{}
	for _, c := range covered {
		skip[filepath.Join(r, c)] = true
	}
	var out []string
	for _, dir := range []string{"/run", "/var/run", "/var/snap"} {
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
