//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// Network buffers.
//
// What TCP and UDP sockets hold (data queued to send or not yet read) is
// charged to one count per protocol for the whole machine, whatever
// network namespace the socket is in: /proc/net/sockstat's "mem", in
// pages, against net.ipv4.tcp_mem and udp_mem (set by the kernel from
// the machine's memory: about 1.1, 1.5 and 2.2 GiB for TCP on 24 GiB).
// Past the middle number every TCP socket of the machine is under
// pressure, past the last the kernel refuses them memory: the runner's
// connection to GitHub, planex's model calls and other jobs' traffic
// wait or drop. A contained network is the step's own, but not this
// count: a program that opened connections over its loopback and filled
// both ends' buffers, reading nothing, took 212 MiB of it with twenty in
// about a second. Only the init's network namespace shows the limits
// (the first, tcp_mem's "low", is read by planex and passed on), and the
// count is the machine's, so the init ends a step once the count passes
// half of that low mark having grown by more than a quarter of it since
// the step started, looking every 20 ms. Another process taking the
// memory ends the step too, as the memory guard does.

// netMemLimits are the machine's low marks of TCP and UDP memory, in
// pages (the first numbers of net.ipv4.tcp_mem and udp_mem); 0 watches
// nothing of that protocol.
type netMemLimits struct {
	TCP int64 `json:"tcp,omitempty"`
	UDP int64 `json:"udp,omitempty"`
}

// readNetMemLimits reads the low marks under procSysNetIPv4 (planex's
// /proc/sys/net/ipv4). Only the machine's first network namespace shows
// them: in another (a container's) each is taken as the kernel sets it
// at boot from ram, the machine's memory in bytes: three sixty-fourths
// of its pages for TCP, three thirty-seconds for UDP.
func readNetMemLimits(procSysNetIPv4 string, ram uint64) netMemLimits {
	l := netMemLimits{
		TCP: readFirstInt(filepath.Join(procSysNetIPv4, "tcp_mem")),
		UDP: readFirstInt(filepath.Join(procSysNetIPv4, "udp_mem")),
	}
	pages := int64(ram / uint64(os.Getpagesize()))
	if l.TCP <= 0 {
		l.TCP = pages * 3 / 64
	}
	if l.UDP <= 0 {
		l.UDP = pages * 3 / 32
	}
	return l
}

// netMemGuard watches the machine's TCP and UDP memory for one step:
// base is each count when the step started.
type netMemGuard struct {
	sockstat string
	low      netMemLimits
	base     netMemLimits
}

// newNetMemGuard starts watching the sockstat file (the step's
// /proc/net/sockstat) against the low marks.
func newNetMemGuard(sockstat string, low netMemLimits) *netMemGuard {
	g := &netMemGuard{sockstat: sockstat, low: low}
	g.base = g.read()
	return g
}

// read returns the machine's TCP and UDP memory now, in pages.
func (g *netMemGuard) read() netMemLimits {
	var n netMemLimits
	b, err := os.ReadFile(g.sockstat)
	if err != nil {
		return n
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 0 {
			continue
		}
		var dst *int64
		switch string(f[0]) {
		case "TCP:":
			dst = &n.TCP
		case "UDP:":
			dst = &n.UDP
		default:
			continue
		}
		for i := 1; i+1 < len(f); i += 2 {
			if string(f[i]) == "mem" {
				*dst, _ = strconv.ParseInt(string(f[i+1]), 10, 64)
			}
		}
	}
	return n
}

// check returns the protocol ("TCP", "UDP") whose memory is past half of
// its low mark, having grown by more than a quarter of it since the step
// started, and that memory in pages; "" when none is.
func (g *netMemGuard) check() (proto string, pages int64) {
	if g.low.TCP <= 0 && g.low.UDP <= 0 {
		return "", 0
	}
	now := g.read()
	for _, p := range []struct {
		name           string
		low, base, now int64
	}{{"TCP", g.low.TCP, g.base.TCP, now.TCP}, {"UDP", g.low.UDP, g.base.UDP, now.UDP}} {
		if p.low > 0 && p.now > p.low/2 && p.now-p.base > p.low/4 {
			return p.name, p.now
		}
	}
	return "", 0
}
