//go:build linux

package sandbox

import (
	"os"
	"strings"
	"testing"
)

// TestRedTeamMemoryLimitCannotBeRaised: under a memory limit a program
// tries to take its address space back: raising the limit itself, in a
// child and a subshell, with prlimit on its own process, and as root of
// a user namespace of its own (unshare -Ur), where it holds every
// capability over that namespace. The limit is a hard one, set by the
// limits helper just before the program replaced it, and raising a hard
// limit needs CAP_SYS_RESOURCE in the host's namespace: every attempt
// fails and every process keeps it. Held.
func TestRedTeamMemoryLimitCannotBeRaised(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	const limit = 2 << 30
	script := `ulimit -v unlimited 2>/dev/null && echo RAISED-SELF
sh -c 'ulimit -v unlimited 2>/dev/null && echo RAISED-CHILD; echo "child $(ulimit -Hv)"'
( ulimit -Hv 4194304 2>/dev/null && echo RAISED-SUBSHELL )
if command -v prlimit >/dev/null; then prlimit --pid $$ --as=unlimited:unlimited 2>/dev/null && echo RAISED-PRLIMIT; fi
if command -v unshare >/dev/null; then unshare -Ur sh -c 'ulimit -v unlimited 2>/dev/null && echo RAISED-USERNS; echo "userns $(ulimit -Hv)"' 2>&1; fi
echo "self $(ulimit -Hv)"`
	out, err := run(t, s, Policy{Limits: Limits{Memory: limit}}, "/", []string{"PATH=" + os.Getenv("PATH")}, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "RAISED") {
		t.Errorf("the program raised its memory limit:\n%s", out)
	}
	for _, want := range []string{"self 2097152", "child 2097152"} {
		if !strings.Contains(out, want) {
			t.Errorf("the limit is not %q everywhere:\n%s", want, out)
		}
	}
	if strings.Contains(out, "userns ") && !strings.Contains(out, "userns 2097152") {
		t.Errorf("a user namespace of the program's own has another limit:\n%s", out)
	}
}
