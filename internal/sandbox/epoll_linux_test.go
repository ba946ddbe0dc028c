//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRedTeamEpollWatchesShared: the kernel counts epoll watches per
// user on the host (fs.epoll.max_user_watches, 4% of low memory over
// about 200 bytes a watch), whatever namespace adds them, so a program
// of planex's user (an ordinary user's planex: the runner user's) that
// added them until refused left every other process of that user,
// planex and the runner among them, unable to watch a new socket
// (epoll_ctl: ENOSPC) while the step ran. A few thousand descriptors
// suffice: every instance watches the same pipes. The program adds ten
// times the step's share (set low here, not to take the machine's
// kernel memory) and holds them: the init must end the step.
func TestRedTeamEpollWatchesShared(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.epollWatches = 20_000
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PLANEX_COUNTS_PROBE=epoll:200000"},
		os.Args[0]+" -test.run=^TestMachineCountsProbeHelper$")
	if !strings.Contains(out, "epoll: ") && !strings.Contains(out, "epoll watch limit") {
		t.Fatalf("the probe did not run (%v):\n%s", err, out)
	}
	if strings.Contains(out, "held to the end") {
		t.Errorf("the program held its epoll watches past its share to its end (%v):\n%s", err, out)
	}
	if !strings.Contains(out, "epoll watch limit 20000 hit") {
		t.Errorf("the step was not ended for the epoll watches it held, or said nothing (%v):\n%s", err, out)
	}
}

// holdEpollWatches is the program of TestRedTeamEpollWatchesShared
// (TestMachineCountsProbeHelper's "epoll:N"): it adds N epoll watches,
// or as many as the kernel allows, holds them up to ten seconds, and
// says "held to the end".
func holdEpollWatches(want int) {
	n, err := addEpollWatches(want)
	fmt.Printf("epoll: %d watches, then %v\n", n, err)
	os.Stdout.Sync()
	// Go's sleep needs a watch of the runtime's, which the kernel now
	// refuses: the program sleeps by the system call.
	ts := unix.NsecToTimespec(int64(10 * time.Second))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
	fmt.Println("held to the end")
}

// addEpollWatches adds want epoll watches, or as many as the kernel
// allows, a thousand pipes watched by as many instances as it takes, and
// returns how many it added. What it opened stays open.
func addEpollWatches(want int) (int, error) {
	var pipes []int
	for range 1000 {
		p := make([]int, 2)
		if err := unix.Pipe2(p, unix.O_CLOEXEC); err != nil {
			return 0, err
		}
		pipes = append(pipes, p[0])
	}
	added := 0
	for added < want {
		ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return added, err
		}
		for _, fd := range pipes {
			if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN}); err != nil {
				return added, err
			}
			if added++; added == want {
				break
			}
		}
	}
	return added, nil
}

// TestEpollGuard: the guard counts the watches the fdinfo of each epoll
// instance of the step's processes lists (the init's aside, and a file
// merely named like one), once the machine's unreclaimable slab has
// grown by what half the limit would take, or every epollFullLookEvery
// looks, and reports them past the limit (counted up to one past it).
func TestEpollGuard(t *testing.T) {
	t.Parallel()
	const limit = 1000
	grown := int64(limit/2*epollWatchBytes+1023) &^ 1023
	tests := []struct {
		name  string
		slab  int64 // growth of SUnreclaim since the start, bytes
		looks int   // looks before the one checked
		procs map[string][]int
		want  int64
	}{
		{"past the limit, slab grown", grown, 0, map[string][]int{"2": {600}, "3": {300, 200}}, limit + 1},
		{"within the limit", grown, 0, map[string][]int{"2": {600, 300}}, 0},
		{"past the limit, slab not grown", grown - 1024, 0, map[string][]int{"2": {1500}}, 0},
		{"past the limit, slab not grown, a full look", 0, epollFullLookEvery - 1, map[string][]int{"2": {1500}}, limit + 1},
		{"the init's own not counted", grown, 0, map[string][]int{"1": {5000}, "2": {10}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			proc := t.TempDir()
			const baseKB = 100_000
			writeFile(t, filepath.Join(proc, "meminfo"), fmt.Sprintf("MemTotal: 1 kB\nSUnreclaim:     %d kB\n", baseKB), 0o644)
			for pid, instances := range tt.procs {
				fakeEpollProcess(t, filepath.Join(proc, pid), instances)
			}
			g := newEpollGuard(proc, limit, nil)
			g.looks = tt.looks
			writeFile(t, filepath.Join(proc, "meminfo"), fmt.Sprintf("SUnreclaim: %d kB\n", baseKB+tt.slab/1024), 0o644)
			if got := g.check(); got != tt.want {
				t.Errorf("check() = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestEpollGuardEndsWhenRoomSpent: a look ends the step once when its
// user has no room for more watches, whatever the step's processes show
// (none here), and also where no share is known (limit 0); room left
// ends nothing.
func TestEpollGuardEndsWhenRoomSpent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		limit     int64
		room      bool
		wantEnds  int
		wantSpent bool
	}{
		{"room left", 1000, true, 0, false},
		{"no room", 1000, false, 1, true},
		{"no room, no share known", 0, false, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			proc := t.TempDir()
			writeFile(t, filepath.Join(proc, "meminfo"), "SUnreclaim: 100000 kB\n", 0o644)
			asked := 0
			g := newEpollGuard(proc, tt.limit, func() bool { asked++; return tt.room })
			ends := 0
			for range 3 {
				g.look(func() { ends++ })
			}
			if _, _, spent := g.past(); ends != tt.wantEnds || spent != tt.wantSpent {
				t.Errorf("three looks ended the step %d times, spent %v; want %d, %v", ends, spent, tt.wantEnds, tt.wantSpent)
			}
			if asked == 0 {
				t.Error("the guard never asked for room")
			}
		})
	}
}

// TestRoomProbe: the probe finds room for its watches on this machine
// (its user's count is far from spent while the tests run), and frees
// them: a thousand probes in a row all find room.
func TestRoomProbe(t *testing.T) {
	t.Parallel()
	p, err := newRoomProbe()
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	for i := range 1000 {
		if !p.room() {
			t.Fatalf("probe %d found no room", i)
		}
	}
}

// TestEpollGuardCountsAgainOnGrowth: after a count within the limit, the
// guard counts again only once the slab has grown by what half the
// watches left would take (or at a full look): a count of a step holding
// many watches within its limit takes seconds, and a step adding the
// rest grows the slab by more than that.
func TestEpollGuardCountsAgainOnGrowth(t *testing.T) {
	t.Parallel()
	const limit = 1000
	proc := t.TempDir()
	meminfo := filepath.Join(proc, "meminfo")
	slab := func(kb int64) { writeFile(t, meminfo, fmt.Sprintf("SUnreclaim: %d kB\n", kb), 0o644) }
	slab(100_000)
	fakeEpollProcess(t, filepath.Join(proc, "2"), []int{800})
	g := newEpollGuard(proc, limit, nil)
	slab(100_000 + limit/2*epollWatchBytes/1024)
	if got := g.check(); got != 0 {
		t.Fatalf("first count = %d, want 0 (800 of 1000)", got)
	}
	fakeEpollProcess(t, filepath.Join(proc, "3"), []int{300})
	if got := g.check(); got != 0 {
		t.Errorf("a look without growth counted again: %d", got)
	}
	slab(100_000 + limit/2*epollWatchBytes/1024 + (limit-800)/2*epollWatchBytes/1024 + 1)
	if got := g.check(); got != limit+1 {
		t.Errorf("a look after growth by half the watches left = %d, want %d", got, limit+1)
	}
}

// TestEpollWatchesOfSkipsOtherFiles: only descriptors the kernel names
// an epoll instance are read: a file whose path reads like one is not.
func TestEpollWatchesOfSkipsOtherFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "7")
	fakeEpollProcess(t, dir, []int{3})
	if err := os.Symlink("/anon_inode:[eventpoll]", filepath.Join(dir, "fd", "9")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "fdinfo", "9"), strings.Repeat("tfd: 1 events: 19 data: 0\n", 50), 0o644)
	if got := epollWatchesOf(filepath.Join(dir, "fd"), 1000); got != 3 {
		t.Errorf("epollWatchesOf = %d, want 3", got)
	}
}

// fakeEpollProcess makes a /proc/<pid> folder at dir whose descriptors
// 3, 4, … are epoll instances with the given numbers of watches.
func fakeEpollProcess(t *testing.T, dir string, instances []int) {
	t.Helper()
	for _, sub := range []string{"fd", "fdinfo"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range instances {
		fd := strconv.Itoa(3 + i)
		if err := os.Symlink("anon_inode:[eventpoll]", filepath.Join(dir, "fd", fd)); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString("pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\n")
		for w := range n {
			fmt.Fprintf(&b, "tfd: %8d events:       19 data:                0  pos:0 ino:%x sdev:e\n", w+10, w)
		}
		writeFile(t, filepath.Join(dir, "fdinfo", fd), b.String(), 0o644)
	}
}

// TestRedTeamParkedEpollWatchesSpent: the program parks every epoll
// instance it fills in flight in a Unix socket (SCM_RIGHTS, then closes
// it), so no process's descriptors show one and the count of the step's
// watches sees none, and goes on until its user's machine-wide count
// (fs.epoll.max_user_watches) is spent: planex and the runner, of the
// same user, then fail to watch a new socket. The init must end the
// step. It spends a whole user's count (about 8 s here), so it runs as a
// uid no other test or sandbox uses.
func TestRedTeamParkedEpollWatchesSpent(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spends a user's epoll watches, seconds of kernel work")
	}
	t.Log(asUser(t, "TestParkedEpollWatchesSpentAsUser", -1, 1_900_000_000+os.Getpid()%100_000_000))
}

// TestParkedEpollWatchesSpentAsUser is TestRedTeamParkedEpollWatchesSpent
// run as its own ordinary uid.
func TestParkedEpollWatchesSpentAsUser(t *testing.T) {
	t.Parallel()
	if os.Getuid() == 0 {
		t.Skip("spends its user's epoll watches: TestRedTeamParkedEpollWatchesSpent runs it as a uid of its own")
	}
	s := newSandbox(t)
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PLANEX_COUNTS_PROBE=epollpark"},
		os.Args[0]+" -test.run=^TestMachineCountsProbeHelper$")
	if !strings.Contains(out, "epoll: ") {
		t.Fatalf("the probe did not run (%v):\n%s", err, out)
	}
	t.Logf("%v\n%s", err, out)
	if !strings.Contains(out, "epoll: spent") {
		t.Skipf("the program could not spend its user's epoll watches here (%v):\n%s", err, out)
	}
	if strings.Contains(out, "held to the end") {
		t.Errorf("the program held every epoll watch of its user to its end (%v):\n%s", err, out)
	}
	if !strings.Contains(out, "epoll watches spent") {
		t.Errorf("the step was not ended for its user's spent epoll watches, or said nothing (%v):\n%s", err, out)
	}
}

// parkEpollWatches is the program of TestParkedEpollWatchesSpentAsUser
// (TestMachineCountsProbeHelper's "epollpark"): it fills epoll instances
// with watches of the same pipes and sends each through a datagram
// socket whose other end it never reads, closing its own descriptor,
// until the kernel refuses a watch; then it holds them ten seconds and
// says "held to the end".
func parkEpollWatches() {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil {
		lim.Cur = lim.Max
		unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	}
	pipes := make([]int, 0, 1000)
	for len(pipes) < 1000 && uint64(len(pipes)*2+64) < lim.Cur {
		p := make([]int, 2)
		if err := unix.Pipe2(p, unix.O_CLOEXEC); err != nil {
			break
		}
		pipes = append(pipes, p[0])
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fmt.Printf("epoll: %v\n", err)
		return
	}
	watches, parked := 0, 0
	for {
		ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			fmt.Printf("epoll: %d watches, %d instances parked, then %v\n", watches, parked, err)
			return
		}
		for _, fd := range pipes {
			if err = unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN}); err != nil {
				break
			}
			watches++
		}
		sendErr := unix.Sendmsg(pair[0], []byte{0}, unix.UnixRights(ep), nil, unix.MSG_DONTWAIT)
		if sendErr == unix.EAGAIN {
			// This socket's buffer is full: park in a new one.
			if pair, sendErr = unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); sendErr == nil {
				sendErr = unix.Sendmsg(pair[0], []byte{0}, unix.UnixRights(ep), nil, unix.MSG_DONTWAIT)
			}
		}
		if sendErr != nil {
			fmt.Printf("epoll: %d watches, %d instances parked, then %v\n", watches, parked, sendErr)
			return
		}
		unix.Close(ep)
		parked++
		if err != nil {
			fmt.Printf("epoll: spent, %d watches in %d instances parked, then %v\n", watches, parked, err)
			break
		}
	}
	os.Stdout.Sync()
	// Go's sleep needs a watch of the runtime's, which the kernel now
	// refuses: the program sleeps by the system call.
	ts := unix.NsecToTimespec(int64(10 * time.Second))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
	fmt.Println("held to the end")
}
