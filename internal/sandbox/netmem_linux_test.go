//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamNetworkBuffersBounded: a contained program opens TCP
// connections over its own loopback and fills both ends' buffers,
// reading nothing. The kernel charges what TCP sockets hold to one count
// for the whole machine, every network namespace's (net.ipv4.tcp_mem:
// about 2.2 GiB at most on this 24 GiB machine, pressure from 1.5 GiB),
// and past its limit every TCP socket of the machine waits for memory:
// the runner's connection to GitHub, planex's model calls, other jobs'.
// Twenty connections took 212 MiB of it in about a second here, so about
// two hundred take it all. The test sets the step's threshold to 64 MiB
// (the machine's own stays) and queues 20 connections' worth; the step
// must be ended, not hold them to its end.
func TestRedTeamNetworkBuffersBounded(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.netMemLow = 16384 // pages: 64 MiB
	out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PLANEX_COUNTS_PROBE=tcp:20"},
		os.Args[0]+" -test.run=^TestMachineCountsProbeHelper$")
	if !strings.Contains(out, "tcp: ") && !strings.Contains(out, "network buffers nearly spent") {
		t.Fatalf("the probe did not run (%v):\n%s", err, out)
	}
	if strings.Contains(out, "held to the end") {
		t.Errorf("the program held its TCP buffers past the threshold to its end (%v):\n%s", err, out)
	}
	if !strings.Contains(out, "network buffers nearly spent") {
		t.Errorf("the step was not ended for the TCP memory it held, or said nothing (%v):\n%s", err, out)
	}
}

// TestNetMemGuard: the guard reads the machine's TCP and UDP memory from
// a sockstat file and ends a step once one is past half of its low mark
// having grown by more than a quarter of it since the step started; a
// network namespace that shows no limits (a container's) takes the
// kernel's own from the machine's memory.
func TestNetMemGuard(t *testing.T) {
	t.Parallel()
	sockstat := func(tcp, udp int) string {
		return fmt.Sprintf("sockets: used 26\nTCP: inuse 6 orphan 0 tw 263 alloc 6 mem %d\nUDP: inuse 0 mem %d\nUDPLITE: inuse 0\nRAW: inuse 0\nFRAG: inuse 0 memory 0\n", tcp, udp)
	}
	low := netMemLimits{TCP: 1000, UDP: 2000}
	for _, c := range []struct {
		name       string
		start, now string
		want       string
		wantPages  int64
	}{
		{"little", sockstat(10, 0), sockstat(400, 300), "", 0},
		{"TCP past half, grown", sockstat(10, 0), sockstat(600, 0), "TCP", 600},
		{"TCP past half, not grown enough", sockstat(400, 0), sockstat(600, 0), "", 0},
		{"UDP past half, grown", sockstat(10, 10), sockstat(10, 1100), "UDP", 1100},
		{"nothing read", "", "", "", 0},
	} {
		p := filepath.Join(t.TempDir(), "sockstat")
		writeFile(t, p, c.start, 0o644)
		g := newNetMemGuard(p, low)
		writeFile(t, p, c.now, 0o644)
		if proto, pages := g.check(); proto != c.want || pages != c.wantPages {
			t.Errorf("%s: check() = %q, %d; want %q, %d", c.name, proto, pages, c.want, c.wantPages)
		}
	}
	if proto, _ := newNetMemGuard(filepath.Join(t.TempDir(), "none"), netMemLimits{}).check(); proto != "" {
		t.Errorf("a guard without limits ended a step: %q", proto)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tcp_mem"), "287898\t383867\t575796\n", 0o644)
	writeFile(t, filepath.Join(dir, "udp_mem"), "575799\t767734\t1151598\n", 0o644)
	if got := readNetMemLimits(dir, 24<<30); got != (netMemLimits{TCP: 287898, UDP: 575799}) {
		t.Errorf("the machine's low marks read as %+v", got)
	}
	pages := int64(24<<30) / int64(os.Getpagesize())
	if got := readNetMemLimits(t.TempDir(), 24<<30); got != (netMemLimits{TCP: pages * 3 / 64, UDP: pages * 3 / 32}) {
		t.Errorf("without the files, the low marks are %+v, want the kernel's from 24 GiB", got)
	}
}
