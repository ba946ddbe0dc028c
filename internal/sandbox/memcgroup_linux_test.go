//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRedTeamMemoryInACgroup: planex runs in a container or pod with a
// memory limit (docker --memory, a Kubernetes runner's limits), and a
// contained program writes a memfd a GiB long, memory no resident size
// counts. /proc/meminfo shows the machine's memory, plenty, so the
// memory guard saw nothing, and when the cgroup's limit ran out the
// kernel ended a process of the cgroup by resident size: planex or the
// runner, where the program lowered its score (as it may where planex
// sets no OOM floor: an ordinary user, a root without CAP_SYS_RESOURCE,
// Docker's default). The test runs the step from a child of its own in a
// memory cgroup it makes (as root), limited to what the child uses plus
// the GiB and 160 MiB, with a floor of 512 MiB (the machine has GiBs
// more); the step must be ended, not hold its GiB.
func TestRedTeamMemoryInACgroup(t *testing.T) {
	t.Parallel()
	needRoot(t)
	left := memoryLeft(readFile(t, "/proc/meminfo"))
	if left < 3<<30 {
		t.Skipf("the machine has %d MiB of memory and swap left; the test takes 1 GiB", left>>20)
	}
	parent := memoryCgroupParent(t)
	dir := filepath.Join(parent, fmt.Sprintf("planex-memtest-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a memory cgroup under %s: %v", parent, err)
	}
	t.Cleanup(func() { _ = os.Remove(dir) })
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryCgroupProbeHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "PLANEX_MEM_CGROUP="+dir)
	b, err := cmd.CombinedOutput()
	out := string(b)
	if strings.Contains(out, "--- SKIP") {
		t.Skipf("the child could not set its cgroup up:\n%s", out)
	}
	if !strings.Contains(out, "memfd: ") && !strings.Contains(out, "memory nearly exhausted") {
		t.Fatalf("the probe did not run (%v):\n%s", err, out)
	}
	if strings.Contains(out, "held to the end") {
		t.Errorf("the program held a GiB past its cgroup's floor, and ran on (%v):\n%s", err, out)
	}
	if !strings.Contains(out, "memory nearly exhausted") {
		t.Errorf("the step was not ended for the memory it held in its cgroup, or said nothing (%v):\n%s", err, out)
	}
}

// memoryCgroupParent is where the test may make a memory cgroup with a
// limit: this process's own cgroup of the first version's memory
// controller, or the root of a unified hierarchy that hands its children
// the memory controller; it skips when there is neither.
func memoryCgroupParent(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no cgroups: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && parts[0] != "0" && strings.Contains(","+parts[1]+",", ",memory,") {
			dir := filepath.Join("/sys/fs/cgroup/memory", parts[2])
			if _, err := os.Stat(filepath.Join(dir, "memory.limit_in_bytes")); err == nil {
				return dir
			}
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err == nil && strings.Contains(" "+strings.TrimSpace(string(b))+" ", " memory ") {
		return "/sys/fs/cgroup"
	}
	t.Skip("no memory cgroup to make a limited one in")
	return ""
}

// TestMemoryCgroupProbeHelper moves itself into the cgroup
// PLANEX_MEM_CGROUP names, limits it to what it uses plus a GiB and
// 160 MiB, and runs TestMachineCountsProbeHelper's memfd probe contained
// with a memory floor of 512 MiB, printing what the step printed.
func TestMemoryCgroupProbeHelper(t *testing.T) {
	dir := os.Getenv("PLANEX_MEM_CGROUP")
	if dir == "" {
		t.Skip("TestRedTeamMemoryInACgroup's child")
	}
	limitFile, usageFile := "memory.max", "memory.current"
	if _, err := os.Stat(filepath.Join(dir, "memory.limit_in_bytes")); err == nil {
		limitFile, usageFile = "memory.limit_in_bytes", "memory.usage_in_bytes"
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		t.Skipf("joining %s: %v", dir, err)
	}
	used := readFirstInt(filepath.Join(dir, usageFile))
	if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(strconv.FormatInt(used+1<<30+160<<20, 10)), 0); err != nil {
		t.Skipf("limiting %s: %v", dir, err)
	}
	s := newSandbox(t)
	// A floor well above what the cgroup keeps once the GiB is held
	// (its file cache is counted as left), and far below the machine's.
	s.memFloor = 512 << 20
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PLANEX_COUNTS_PROBE=memfd"},
		os.Args[0]+" -test.run=^TestMachineCountsProbeHelper$")
	fmt.Printf("%s\n(%v)\n", out, err)
}
