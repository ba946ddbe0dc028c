//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
)

// A procfs or devtmpfs mounted elsewhere than /proc and /dev.
//
// The step's /proc and /dev are its own, but the host's file system,
// bound into the sandbox whole, may hold another mount of either: a
// container given the host's (-v /proc:/host/proc, -v /dev:/host/dev),
// a monitoring agent's, a chroot's. Through a procfs a program lists
// every process of the machine and reads their command lines, and,
// where it has planex's uid (planex run as an ordinary user), planex's
// own environment and memory maps; through a devtmpfs it finds the
// disk, loop, KVM and other devices the minimal /dev leaves out. Every
// such mount is covered like a hidden folder.

// maxMountLine bounds a line of the mount table: two escaped paths and
// the options (an overlay's many lower folders) stay far below it. A
// longer line is skipped, not the rest of the table.
const maxMountLine = 1 << 20

// systemMounts are the file systems whose mounts elsewhere are covered,
// each with the place of the sandbox's own (below which they stay: the
// sandbox mounts its own over them).
var systemMounts = map[string]string{"proc": "/proc", "devtmpfs": "/dev"}

// otherProcMounts are the mount points of the procfs and devtmpfs mounts
// mountinfo (the text of /proc/self/mountinfo) lists, but /proc, /dev and
// what lies below them.
func otherProcMounts(mountinfo string) []string {
	return readOtherProcMounts(strings.NewReader(mountinfo))
}

// readOtherProcMounts is otherProcMounts of the mount table r gives, read
// a line at a time to its end: a machine with tens of thousands of
// mounts (a Kubernetes node's pods) has a table of many MiB, and a procfs
// listed past a bound on the whole was left uncovered.
func readOtherProcMounts(r io.Reader) []string {
	var out []string
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readMountLine(br)
		if point, ok := otherProcMount(line); ok {
			out = append(out, point)
		}
		if err != nil {
			return out
		}
	}
}

// readMountLine reads one line of br without its newline; a line past
// maxMountLine comes back empty (its rest read and dropped).
func readMountLine(br *bufio.Reader) (string, error) {
	var b []byte
	tooLong := false
	for {
		part, err := br.ReadSlice('\n')
		if !tooLong && len(b)+len(part) <= maxMountLine {
			b = append(b, part...)
		} else {
			tooLong, b = true, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return strings.TrimSuffix(string(b), "\n"), err
		}
	}
}

// otherProcMount is the mount point of a mount table line when it is a
// procfs or devtmpfs elsewhere than /proc and /dev and below them.
func otherProcMount(line string) (string, bool) {
	before, after, ok := strings.Cut(line, " - ")
	f, tail := strings.Fields(before), strings.Fields(after)
	if !ok || len(f) < 5 || len(tail) < 1 {
		return "", false
	}
	own, system := systemMounts[tail[0]]
	point := unescapeMountField(f[4])
	if !system || point == own || strings.HasPrefix(point, own+"/") || !strings.HasPrefix(point, "/") {
		return "", false
	}
	return point, true
}

// unescapeMountField decodes the octal escapes (\040 for a space, \011,
// \012, \134) the kernel writes in a mount table's paths.
func unescapeMountField(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hostProcMounts are otherProcMounts of this process's mount table; none
// when it cannot be read.
func hostProcMounts() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	return readOtherProcMounts(f)
}
