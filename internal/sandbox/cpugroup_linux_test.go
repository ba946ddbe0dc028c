//go:build linux

package sandbox

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// TestRedTeamSessionsGainNoCPU: where the kernel groups the processes of
// the root CPU cgroup by session (kernel.sched_autogroup_enabled), each
// session is a scheduling group weighed like planex's or the runner's
// whole session, so a step that starts its busy processes each with
// setsid takes a share of the machine's CPU that grows with its
// sessions (measured: a host loop had 0.6 of 4 CPU-seconds beside 12
// such processes, 3.5 beside the same 12 in one session). A process
// outside the root CPU cgroup joins no such group: a contained program
// starts a process in a new session, which tries to move itself back to
// the root CPU cgroup, the init's group or its step's, writes the
// weights of its own group and the step's, freezes the init's and makes
// a group below its own, and both say where they are. Neither may be in
// the root CPU group where planex, as root, can make one, nor move, write
// or make anything.
func TestRedTeamSessionsGainNoCPU(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("a CPU cgroup of the step's own needs planex to be root")
	}
	if _, err := cpuGroupParent(); err != nil {
		t.Skipf("this machine gives planex no CPU cgroup to make: %v", err)
	}
	s := newSandbox(t)
	script := `where() { grep -E '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:' /proc/self/cgroup || grep '^0::' /proc/self/cgroup; }
where | sed 's/^/program /'
setsid sh -c 'for f in /sys/fs/cgroup/cpu/cgroup.procs /sys/fs/cgroup/cpu,cpuacct/cgroup.procs /sys/fs/cgroup/cgroup.procs; do echo $$ > $f 2>/dev/null && echo "MOVED by $f"; done
g=$(grep -E "^[0-9]+:([^:]*,)?cpu(,[^:]*)?:" /proc/self/cgroup | cut -d: -f3); [ -n "$g" ] || g=$(grep "^0::" /proc/self/cgroup | cut -d: -f3)
for top in /sys/fs/cgroup/cpu /sys/fs/cgroup/cpu,cpuacct /sys/fs/cgroup; do
  step=$top$(dirname "$g")
  for f in "$step/init/cgroup.procs" "$step/cgroup.procs" "$top$g/cgroup.procs"; do echo $$ > "$f" 2>/dev/null && echo "MOVED by $f"; done
  for f in "$top$g/cpu.shares" "$top$g/cpu.weight" "$step/cpu.shares" "$step/cpu.weight"; do echo 10000 > "$f" 2>/dev/null && echo "WROTE $f"; done
  for f in "$step/init/cgroup.freeze" "$step/init/freezer.state"; do echo 1 > "$f" 2>/dev/null && echo "WROTE $f"; done
  mkdir "$top$g/sub" 2>/dev/null && echo "MADE $top$g/sub"
done
grep -E "^[0-9]+:([^:]*,)?cpu(,[^:]*)?:" /proc/self/cgroup || grep "^0::" /proc/self/cgroup' </dev/null | sed 's/^/session /'
echo probed`
	out, err := run(t, s, Policy{}, "/", nil, script)
	if err != nil || !strings.Contains(out, "probed") {
		t.Fatalf("the probe did not run to its end (%v):\n%s", err, out)
	}
	for _, bad := range []string{"MOVED", "WROTE", "MADE"} {
		if strings.Contains(out, bad) {
			t.Errorf("a contained process moved itself out of the program's CPU cgroup, or wrote or made a group:\n%s", out)
		}
	}
	seen := 0
	for _, line := range strings.Split(out, "\n") {
		who, rest, ok := strings.Cut(line, " ")
		if !ok || (who != "program" && who != "session") {
			continue
		}
		seen++
		if strings.HasSuffix(rest, ":/") || !strings.Contains(rest, cpuGroupPrefix) || !strings.HasSuffix(rest, "/"+cpuGroupProgram) {
			t.Errorf("the %s runs in the root CPU cgroup, where each session is a scheduling group of its own: %s", who, rest)
		}
	}
	if seen < 2 {
		t.Fatalf("the probe listed no CPU cgroup for both processes:\n%s", out)
	}
}

// TestCPUGroupParent: the folder a step's CPU cgroup is made in, from
// the cgroups planex is in.
func TestCPUGroupParent(t *testing.T) {
	t.Parallel()
	v1 := fstest.MapFS{
		"sys/fs/cgroup/cpu,cpuacct/ci/cpu.shares":  {Data: []byte("1024\n")},
		"sys/fs/cgroup/cpu/cpu.shares":             {Data: []byte("1024\n")},
		"sys/fs/cgroup/cgroup.subtree_control":     {Data: []byte("cpu memory pids\n")},
		"sys/fs/cgroup/svc/cgroup.subtree_control": {Data: []byte("memory\n")},
	}
	tests := []struct {
		name, cgroup, want string
	}{
		{"first version, cpu alone", "1:cpu:/\n0::/\n", "sys/fs/cgroup/cpu"},
		{"first version, cpu with cpuacct", "4:cpu,cpuacct:/ci\n0::/\n", "sys/fs/cgroup/cpu,cpuacct/ci"},
		{"first version, cpuset is not cpu", "3:cpuset:/\n0::/svc\n", ""},
		{"first version, its folder missing", "4:cpu,cpuacct:/gone\n", ""},
		{"unified, the root enabling cpu", "0::/\n", "sys/fs/cgroup"},
		{"unified, a service's cgroup without cpu below", "0::/svc\n", ""},
		{"unified, a cgroup without its folder", "0::/container\n", ""},
		{"no cgroup", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fsys := fstest.MapFS{"proc/self/cgroup": {Data: []byte(tt.cgroup)}}
			maps.Copy(fsys, v1)
			got, err := cpuGroupParentIn(fsys)
			if tt.want == "" {
				if !errors.Is(err, errNoCPUGroup) {
					t.Errorf("cpuGroupParentIn = %q, %v; want errNoCPUGroup", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("cpuGroupParentIn = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestRemoveStaleCPUGroups: the CPU cgroups a planex no longer running
// left are removed, with the groups inside them; a live planex's and
// other folders stay.
func TestRemoveStaleCPUGroups(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	for _, d := range []string{"planex-step-111-a/init", "planex-step-111-a/program", "planex-step-222-b/program", "planex-step-x-c", "other"} {
		if err := os.MkdirAll(filepath.Join(parent, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleCPUGroups(parent, func(pid int) bool { return pid == 222 })
	for d, want := range map[string]bool{"planex-step-111-a": false, "planex-step-222-b/program": true, "planex-step-x-c": true, "other": true} {
		_, err := os.Stat(filepath.Join(parent, d))
		if got := err == nil; got != want {
			t.Errorf("%s: there %v, want %v", d, got, want)
		}
	}
}
