//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The kernel counts some of what a process makes against its user on
// the host, whichever user namespace makes it: each user namespace
// keeps a count per user and a maximum (/proc/sys/user/max_*), and a
// thing made counts in the maker's namespace and in every one above it,
// against each one's maximum. A contained program's inotify instances
// therefore counted against planex's user (root, or the runner user) on
// the host, where 128 is the default: a program that made them until it
// could not left every other process of that user (systemd, the runner,
// planex, another step) without one while it ran. The same holds for
// inotify watches, fanotify groups and marks, and namespaces.
//
// A fresh namespace allows any number, so the init, which holds every
// capability over its own, sets its namespace's maximum of each to a
// quarter of what planex's namespace allows: whatever the program does
// (a namespace of its own included, which counts against the init's
// too), its step makes at most that, and the user keeps the rest.

// stepCountShare is the part of each count a step may use (1/n).
const stepCountShare = 4

// One count is set to none: cgroup namespaces. The sandbox makes no
// cgroup of its own, so a step runs in planex's cgroup, and a program
// that made user, mount and cgroup namespaces (unshare -UrmC) could
// mount the cgroup2 file system there, rooted at that cgroup, which is
// the program's to write wherever its files are the program's user's: a
// desktop session delegates each terminal's and application's cgroup
// to its user (systemd --user). Run by that user, a program wrote
// cgroup.kill (ending planex and every process of the user's terminal,
// its shell and editor among them), cgroup.freeze (stopping them all) or
// the memory and process limits of them all. A program can make no
// cgroup namespace in a namespace whose maximum is 0, nor in any below,
// and without one it holds no right to mount a cgroup file system (the
// host's cgroup tree stays bound read-only). Nested sandboxes still make
// every other namespace.
const noCgroupNamespaces = "max_cgroup_namespaces"

// kernelCountNames are the counts of /proc/sys/user each step is held
// to a share of.
var kernelCountNames = []string{
	"max_inotify_instances", "max_inotify_watches",
	"max_fanotify_groups", "max_fanotify_marks",
	"max_user_namespaces", "max_mnt_namespaces", "max_pid_namespaces",
	"max_net_namespaces", "max_ipc_namespaces", "max_uts_namespaces",
	"max_cgroup_namespaces", "max_time_namespaces",
}

// stepCounts reads the maxima of planex's user namespace under
// procSysUser (/proc/sys/user) and returns a step's share of each (none
// of cgroup namespaces); a count this kernel lacks is left out.
func stepCounts(procSysUser string) map[string]int64 {
	out := map[string]int64{}
	for _, name := range kernelCountNames {
		b, err := os.ReadFile(filepath.Join(procSysUser, name))
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n < 0 {
			continue
		}
		out[name] = n / stepCountShare
		if name == noCgroupNamespaces {
			out[name] = 0
		}
	}
	return out
}

// capKernelCounts, in the init, sets its user namespace's maxima to
// counts, under procSysUser. Best effort, as capSysVShm: a kernel that
// refuses one keeps its default.
func capKernelCounts(procSysUser string, counts map[string]int64) {
	for name, n := range counts {
		if !strings.HasPrefix(name, "max_") || strings.ContainsRune(name, '/') {
			continue
		}
		f, err := os.OpenFile(filepath.Join(procSysUser, name), os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			continue
		}
		_, _ = f.WriteString(strconv.FormatInt(n, 10))
		f.Close()
	}
}
