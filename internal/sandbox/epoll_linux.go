//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Epoll watches.
//
// The kernel counts the watches of epoll instances (epoll_ctl's
// EPOLL_CTL_ADD) per user on the host, whatever user namespace adds
// them, against one maximum for the machine (fs.epoll.max_user_watches,
// 4% of low memory at about 200 bytes a watch, no namespace's to lower).
// A program of planex's user (an ordinary user's planex: the runner
// user's on GitHub's runners) that added them until refused left every
// other process of that user, planex and the runner among them, unable
// to watch a new socket (ENOSPC: Go's net.Dial failed) while the step
// ran. It needs few descriptors: every instance may watch the same
// pipes, a thousand of each made 5.5 million watches here.
//
// So each step is given a share of the watches as of the counts of
// ucounts_linux.go (a quarter, out of half for planex's live steps), and
// the init's watcher (epollGuard) ends a step whose processes' epoll
// instances hold more: it counts the watches each instance lists in its
// fdinfo. A watch costs the kernel an entry of unreclaimable slab, so it
// counts only when the machine's unreclaimable slab has grown by what
// could take the step past its share, and every epollFullLookEvery
// looks in any case.

// But a count finds only the instances some process's descriptors
// show: an instance sent in flight through a Unix socket (SCM_RIGHTS)
// and closed keeps its watches in no process's table, and a program that
// parked every instance it filled so spent its user's whole count
// (5,491,508 watches in 8 s here) unseen; Go programs of that user
// started then died at their first timer ("runtime: epollctl failed"),
// planex's own init among them. The kernel shows no user's count, so
// the guard also asks it at every look whether the user may still add
// epollRoom watches (roomProbe): where it may not, the user's watches
// are spent, whoever holds them, and the step is ended, as the
// terminal and memory guards end a step when the machine's run low.
// This holds where the program has the init's user on the host (an
// ordinary user's planex); root's program is SandboxID, whose watches
// only the steps share.

// epollWatchesName names a step's share of its user's epoll watches
// among its counts (it is no /proc/sys/user maximum).
const epollWatchesName = "epoll_watches"

// epollWatchBytes is the least slab a watch takes: its epitem (128
// bytes), besides an entry for each wait queue it joins.
const epollWatchBytes = 128

// epollFullLookEvery is how often, in looks, the step's watches are
// counted whatever the slab did: others freeing slab between two looks
// while the step adds watches hide the growth.
const epollFullLookEvery = 25

// stepEpollWatches reads the machine's maximum of a user's epoll
// watches at path (/proc/sys/fs/epoll/max_user_watches) and returns a
// step's share of it, as stepCounts does; nothing when unknown.
func stepEpollWatches(path string) map[string]int64 {
	n := readFirstInt(path)
	if n <= 0 {
		return map[string]int64{}
	}
	return map[string]int64{epollWatchesName: n / stepCountShare}
}

// epollGuard watches the epoll watches of one step: limit is the most it
// may hold (0 watches nothing). It counts them when the machine's
// unreclaimable slab has grown by gate bytes from the lowest it was since
// the last count (base), gate being what half the watches the step had
// left to hold at that count would take; and every epollFullLookEvery
// looks in any case, as others freeing slab while the step adds watches
// hide the growth. A count reads every watch of every instance, and the
// kernel writes an instance's fdinfo whole at each read (2.5 s for a
// million watches here), so a step holding many within its limit must
// not have them counted at every look: each count waits for growth that
// could take the step past its limit.
type epollGuard struct {
	proc  string
	limit int64
	base  int64
	gate  int64
	looks int
	// room reports whether the user may still add epollRoom watches;
	// nil asks nothing.
	room func() bool
	// held is how many watches the step held when the guard ended it,
	// 0 until it did (set by run, read by past).
	held atomic.Int64
	// spent is set when the guard ended the step because room said no.
	spent atomic.Bool
}

// newEpollGuard starts watching for a step that may hold limit watches,
// under the /proc at proc, asking room at every look when it is not nil.
func newEpollGuard(proc string, limit int64, room func() bool) *epollGuard {
	g := &epollGuard{proc: proc, limit: max(limit, 0), room: room}
	g.base = unreclaimableSlab(filepath.Join(proc, "meminfo"))
	g.gate = g.limit / 2 * epollWatchBytes
	return g
}

// run checks every watchInterval until stop is closed and calls end
// once, the first time the step holds more than its limit or its user
// has no room left.
func (g *epollGuard) run(stop <-chan struct{}, end func()) {
	if g.limit == 0 && g.room == nil {
		return
	}
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		g.look(end)
	}
}

// look is one look of run's: it calls end when the step is past its
// limit or its user has no room left, and the guard has not ended it
// before.
func (g *epollGuard) look(end func()) {
	ended := func() bool { return g.held.Load() > 0 || g.spent.Load() }
	if g.room != nil && !ended() && !g.room() {
		g.spent.Store(true)
		end()
	}
	if n := g.check(); n > 0 && !ended() {
		g.held.Store(n)
		end()
	}
}

// past returns how many watches the step held when the guard ended it,
// and its limit (0 and the limit when it did not), and whether it ended
// the step for its user's spent watches.
func (g *epollGuard) past() (held, limit int64, spent bool) {
	return g.held.Load(), g.limit, g.spent.Load()
}

// roomProbe asks the kernel whether its caller's user may still add
// epollRoom watches: it adds them to a fresh epoll instance, one for
// each of its event descriptors, and closes the instance, which frees
// them. An epoll instance counts against the user who made it, so the
// probe is made and used by the init, whose user is the program's.
type roomProbe struct {
	files []int
}

// newRoomProbe opens the probe's descriptors.
func newRoomProbe() (*roomProbe, error) {
	p := &roomProbe{}
	for range epollRoom {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("an event descriptor for the epoll watch probe: %w", err)
		}
		p.files = append(p.files, fd)
	}
	return p, nil
}

// room reports whether epollRoom watches could be added; an error other
// than the kernel's "no space" (ENOSPC: the user's count is spent)
// counts as room, the guard ending no step for what it cannot tell.
func (p *roomProbe) room() bool {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return !errors.Is(err, unix.ENOSPC)
	}
	defer unix.Close(ep)
	for _, fd := range p.files {
		err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN})
		if errors.Is(err, unix.ENOSPC) {
			return false
		}
		if err != nil {
			return true
		}
	}
	return true
}

// close closes the probe's descriptors.
func (p *roomProbe) close() {
	for _, fd := range p.files {
		unix.Close(fd)
	}
	p.files = nil
}

// check returns how many watches the step holds when that is more than
// its limit, else 0.
func (g *epollGuard) check() int64 {
	if g.limit == 0 {
		return 0
	}
	slab := unreclaimableSlab(filepath.Join(g.proc, "meminfo"))
	g.base = min(g.base, slab)
	g.looks++
	if slab-g.base < g.gate && g.looks%epollFullLookEvery != 0 {
		return 0
	}
	n := countPerProcess(g.proc, g.limit, epollWatchesOf)
	if n > g.limit {
		return n
	}
	g.base, g.gate = slab, (g.limit-n)/2*epollWatchBytes
	return 0
}

// unreclaimableSlab reads SUnreclaim from the meminfo file at path, in
// bytes (0 when it cannot).
func unreclaimableSlab(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "SUnreclaim:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			kb, _ := strconv.ParseInt(f[0], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// epollWatchesOf counts the watches of the epoll instances among the
// descriptors listed in the fd folder dir, stopping once past limit. An
// instance shared by several descriptors or processes counts for each.
func epollWatchesOf(dir string, limit int64) int64 {
	f, err := os.Open(dir)
	if err != nil {
		return 0
	}
	defer f.Close()
	info := filepath.Join(filepath.Dir(dir), "fdinfo")
	var n int64
	for n <= limit {
		names, err := f.Readdirnames(1024)
		for _, name := range names {
			// The kernel names every epoll instance so; a file's path
			// starts with a slash.
			if target, err := os.Readlink(filepath.Join(dir, name)); err == nil && target == "anon_inode:[eventpoll]" {
				n += watchesListed(filepath.Join(info, name), limit-n)
			}
		}
		if err != nil {
			break
		}
	}
	return n
}

// watchesListed counts the watches an epoll instance's fdinfo file at
// path lists (a "tfd:" line each), stopping once past limit.
func watchesListed(path string, limit int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var n int64
	for n <= limit && sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte("tfd:")) {
			n++
		}
	}
	return n
}
