//go:build !linux

package proc

import "os/exec"

// underReaper: the reaper needs Linux (a child subreaper, a parent-death
// signal); elsewhere a command's process group is killed when it ends.
func underReaper(*exec.Cmd) bool { return false }
