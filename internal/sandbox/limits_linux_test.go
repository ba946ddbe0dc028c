//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLimitsStopRunawaySteps: a step writes a huge file, forks without
// end, or allocates until it cannot; each is stopped at its limit, the
// step's error output says which limit, and planex carries on.
func TestLimitsStopRunawaySteps(t *testing.T) {
	s := newSandbox(t)
	hogDir := filepath.Dir(os.Args[0]) // the test binary, our memory hog
	rows := []struct {
		name   string
		limits Limits
		script string
		want   string
		check  func(t *testing.T, work, out string, err error)
	}{
		{"huge file in a script that stops at a failure", Limits{FileSize: 1 << 20}, `set -e; head -c 8M /dev/zero > big; echo "not reached"`, "file size limit 1M hit",
			func(t *testing.T, work, out string, err error) {
				if fi, serr := os.Stat(filepath.Join(work, "big")); serr != nil || fi.Size() > 1<<20 {
					t.Errorf("the file grew past the limit: %v, %v", fi, serr)
				}
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 153 || strings.Contains(out, "not reached") {
					t.Errorf("the writer was not stopped by SIGXFSZ: %v\n%s", err, out)
				}
			}},
		{"huge file as the program itself", Limits{FileSize: 1 << 20}, `exec head -c 8M /dev/zero > big`, "file size limit 1M hit",
			func(t *testing.T, work, out string, err error) {
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 153 {
					t.Errorf("want exit status 153 (SIGXFSZ), got %v", err)
				}
			}},
		{"fork bomb", Limits{Processes: 64}, `perl -e "fork while 1" &
i=0; while [ $i -lt 100000 ]; do set -- /proc/[0-9]*; [ $# -ge 64 ] && break; i=$((i+1)); done; echo $#`, "process limit 64 hit",
			func(t *testing.T, work, out string, err error) {
				// A line counts the processes the program saw.
				k := 0
				for _, line := range strings.Split(out, "\n") {
					if n, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
						k = n
					}
				}
				if k < 32 || k > 64+1 {
					t.Errorf("want the bomb held at 64 processes (and the init), saw %d:\n%s", k, out)
				}
			}},
		{"memory hog", Limits{Memory: 1 << 30}, os.Args[0] + ` -test.run=^TestMemoryHogHelper$`, "memory limit 1G hit",
			func(t *testing.T, work, out string, err error) {
				if !strings.Contains(out, "hog stopped at") {
					t.Errorf("the hog was not stopped by the limit:\n%s", out)
				}
			}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if strings.Contains(r.script, "perl") {
				if _, err := exec.LookPath("perl"); err != nil {
					t.Skip("the fork bomb is perl's `fork while 1` (it keeps forking when a fork fails, where a shell gives up); no perl here")
				}
			}
			work := t.TempDir()
			p := Policy{Writable: []string{work}, ReadOnly: []string{hogDir}, Limits: r.limits}
			out, err := run(t, s, p, work, []string{"PATH=" + os.Getenv("PATH"), "PLANEX_MEMORY_HOG=1"}, r.script)
			if !strings.Contains(out, "planex sandbox: "+r.want) {
				t.Errorf("the step's output does not report %q:\n%s", r.want, out)
			}
			r.check(t, work, out, err)
			// planex survives and starts the next step.
			if out, err := run(t, s, Policy{}, "/", nil, "echo next"); err != nil || out != "next\n" {
				t.Errorf("the next step: %q, %v", out, err)
			}
		})
	}
}

// TestDefaultLimitsAreSet: without limits in the policy the program gets
// the defaults as hard limits it cannot raise (memory: none), no core
// dumps, and the OOM killer's first place.
func TestDefaultLimitsAreSet(t *testing.T) {
	s := newSandbox(t)
	out, err := run(t, s, Policy{}, "/", []string{"PATH=" + os.Getenv("PATH")},
		`grep -E '^Max (file size|processes|address space|core file size)' /proc/self/limits; ulimit -f unlimited 2>/dev/null && echo RAISED; echo "oom_score_adj $(cat /proc/self/oom_score_adj)"`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	d := Limits{}.WithDefaults()
	for _, want := range []string{
		fmt.Sprintf("Max file size %d %d bytes", d.FileSize, d.FileSize),
		fmt.Sprintf("Max processes %d %d processes", d.Processes, d.Processes),
		"Max address space unlimited unlimited bytes",
		"Max core file size 1 1 bytes",
		// The OOM killer's first choice, not planex or the runner.
		"oom_score_adj 1000",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("limits inside lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "RAISED") {
		t.Errorf("the program raised its file size limit:\n%s", out)
	}
}

// TestMemoryHogHelper maps memory until the address space runs out, then
// stays a moment, as a program that caught the failure would.
func TestMemoryHogHelper(t *testing.T) {
	if os.Getenv("PLANEX_MEMORY_HOG") == "" {
		t.Skip("the memory hog of TestLimitsStopRunawaySteps")
	}
	n := 0
	for ; n < 1<<16; n++ {
		// Reserved, never touched: no real memory is used.
		if _, err := syscall.Mmap(-1, 0, 4<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON); err != nil {
			break
		}
	}
	fmt.Printf("hog stopped at %d MiB more\n", 4*n)
	time.Sleep(3 * watchInterval)
}

// TestOOMScoreFloor: a program that fills memory first puts its OOM
// score back to 0 (and -17 through the legacy oom_adj), in itself and in
// a child, so that the kernel kills planex or the runner in its place
// when memory runs out. planex as root sets the score from outside, which
// makes 1000 the floor: every write is refused and the score stays 1000.
// Before, the program's own write of 1000 set no floor, and 0 was read
// back. An ordinary user's planex cannot set one, nor can root without
// the capability (docs/security.md).
func TestOOMScoreFloor(t *testing.T) {
	needRoot(t)
	if !canSetOOMFloor() {
		t.Skip("needs CAP_SYS_RESOURCE, which this machine's root lacks (CapEff in /proc/self/status): without it no write sets an OOM score floor")
	}
	s := newSandbox(t)
	script := `for v in 0 500 999 -1000; do echo $v > /proc/self/oom_score_adj 2>/dev/null && echo "LOWERED to $v"; done
echo -17 > /proc/self/oom_adj 2>/dev/null && echo "LOWERED oom_adj"
sh -c 'echo 0 > /proc/self/oom_score_adj 2>/dev/null && echo "CHILD LOWERED"; echo "child $(cat /proc/self/oom_score_adj)"'
echo "score $(cat /proc/self/oom_score_adj)"`
	out, err := run(t, s, Policy{}, "/", []string{"PATH=" + os.Getenv("PATH")}, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "LOWERED") {
		t.Errorf("a contained program lowered its OOM score:\n%s", out)
	}
	if !strings.Contains(out, "score 1000\n") || !strings.Contains(out, "child 1000\n") {
		t.Errorf("want the OOM score 1000 in the program and its child:\n%s", out)
	}
}

// TestOOMFloorHandshake runs the init's wait for planex's write of its
// OOM score where the machine's root lacks the capability that makes it
// a floor (TestOOMScoreFloor covers the floor): a step still starts, at
// score 1000, and a process other than the init that connects to the
// socket gets no answer, so it learns nothing and sets nothing.
func TestOOMFloorHandshake(t *testing.T) {
	needRoot(t)
	s := newSandbox(t)
	s.oomFloor = true
	out, err := run(t, s, Policy{}, "/", []string{"PATH=" + os.Getenv("PATH")}, `echo "score $(cat /proc/self/oom_score_adj)"`)
	if err != nil || out != "score 1000\n" {
		t.Fatalf("a step with the OOM handshake: %q, %v", out, err)
	}
	root := t.TempDir()
	stop, err := serveOOMFloor(root, filepath.Join(root, configFile))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := awaitOOMFloor(root); !errors.Is(err, errNoOOMFloor) {
		t.Errorf("a process that is not the init was answered: %v", err)
	}
}
