//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRedTeamKernelNetworkSurfaceOutOfReach: a contained program makes
// user and network namespaces of its own (unshare -Urn), where it holds
// CAP_NET_ADMIN and CAP_NET_RAW, and opens what the kernel then gives
// it: nf_tables' netlink socket (NETLINK_NETFILTER), a packet socket
// (AF_PACKET) and an XDP socket (AF_XDP). Each is code of the host's
// kernel that an unprivileged user reaches only this way, and each has
// given root on the host again and again to a program that could (the
// nf_tables bugs of 2022 to 2024, the packet socket bugs of 2016, 2017
// and 2020); on a kernel with modules the rarer families (AppleTalk,
// RDS, TIPC, …) are loaded on the program's first socket, and stay
// loaded after the step. Ubuntu closes this door by default, and the
// Action opens it again for the sandbox. Contained, every family but
// Unix, IPv4, IPv6 and netlink is refused (EAFNOSUPPORT, as a kernel
// without it answers), and netlink's netfilter protocol too
// (EPROTONOSUPPORT); routing netlink and IP sockets still open.
func TestRedTeamKernelNetworkSurfaceOutOfReach(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	helper := os.Args[0] + " -test.run=^TestMachineCountsProbeHelper$"
	cases := []struct{ name, script string }{{"the program's own namespaces", "PLANEX_COUNTS_PROBE=families " + helper}}
	if _, err := exec.LookPath("unshare"); err == nil {
		cases = append(cases, struct{ name, script string }{"user and network namespaces of its own", "unshare -Urn sh -c 'PLANEX_COUNTS_PROBE=families " + helper + "'"})
	} else {
		t.Log("util-linux's unshare is not installed: the program's own namespaces are not tried")
	}
	for _, c := range cases {
		out, err := run(t, s, Policy{ReadOnly: []string{filepath.Dir(os.Args[0])}}, "/", []string{"PATH=" + os.Getenv("PATH")}, c.script)
		if !strings.Contains(out, "families probed") {
			t.Errorf("%s: the probe did not run (%v):\n%s", c.name, err, out)
			continue
		}
		if strings.Contains(out, "REACHED") {
			t.Errorf("%s: a contained program opened the kernel's rarer network code:\n%s", c.name, out)
		}
		if strings.Contains(out, "REFUSED") {
			t.Errorf("%s: a socket programs need was refused:\n%s", c.name, out)
		}
	}
}

// probeFamilies is the families probe: it opens a socket of each kind
// the sandbox refuses, printing REACHED for each that opens or that the
// kernel, not the filter, refused; and one of each kind programs need,
// printing REFUSED for each that does not open.
func probeFamilies() {
	for _, c := range []struct {
		name               string
		family, typ, proto int
		want               unix.Errno
		kernelMayLackItToo bool
	}{
		{"nf_tables' netlink (NETLINK_NETFILTER)", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_NETFILTER, unix.EPROTONOSUPPORT, true},
		{"generic netlink (openvswitch, TIPC, tunnels)", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_GENERIC, unix.EPROTONOSUPPORT, true},
		{"IPsec's xfrm netlink", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_XFRM, unix.EPROTONOSUPPORT, true},
		{"a packet socket (AF_PACKET)", unix.AF_PACKET, unix.SOCK_RAW, 0, unix.EAFNOSUPPORT, false},
		// The kernel still makes an IPv4 socket of the obsolete type
		// SOCK_PACKET a packet socket, family and all.
		{"a packet socket through IPv4's obsolete SOCK_PACKET type", unix.AF_INET, unix.SOCK_PACKET, 0x0300, unix.EAFNOSUPPORT, false},
		{"the same with the type's flags", unix.AF_INET, unix.SOCK_PACKET | unix.SOCK_NONBLOCK, 0x0300, unix.EAFNOSUPPORT, false},
		// UDP-Lite is built into this kernel: the filter, not the
		// kernel, must answer. SCTP, DCCP, L2TP and SMC are modules the
		// kernel loads at a program's first ask where it has them.
		{"a UDP-Lite socket (built in)", unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_UDPLITE, unix.EPROTONOSUPPORT, false},
		{"an IPv6 UDP-Lite socket (built in)", unix.AF_INET6, unix.SOCK_DGRAM, unix.IPPROTO_UDPLITE, unix.EPROTONOSUPPORT, false},
		{"an SCTP socket", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP, unix.EPROTONOSUPPORT, true},
		{"an SCTP packet socket", unix.AF_INET6, unix.SOCK_SEQPACKET, unix.IPPROTO_SCTP, unix.ESOCKTNOSUPPORT, false},
		{"a DCCP socket", unix.AF_INET, unix.SOCK_DCCP, unix.IPPROTO_DCCP, unix.ESOCKTNOSUPPORT, false},
		{"a DCCP socket by its type alone", unix.AF_INET, unix.SOCK_DCCP, 0, unix.ESOCKTNOSUPPORT, false},
		{"an L2TP/IP socket", unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_L2TP, unix.EPROTONOSUPPORT, true},
		{"an XDP socket (AF_XDP)", unix.AF_XDP, unix.SOCK_RAW, 0, unix.EAFNOSUPPORT, true},
		{"an AppleTalk socket", unix.AF_APPLETALK, unix.SOCK_DGRAM, 0, unix.EAFNOSUPPORT, true},
		{"an RDS socket", unix.AF_RDS, unix.SOCK_SEQPACKET, 0, unix.EAFNOSUPPORT, true},
		{"a kernel crypto socket (AF_ALG)", unix.AF_ALG, unix.SOCK_SEQPACKET, 0, unix.EAFNOSUPPORT, true},
	} {
		fd, err := unix.Socket(c.family, c.typ|unix.SOCK_CLOEXEC, c.proto)
		switch {
		case err == nil:
			fmt.Printf("REACHED %s (%d)\n", c.name, fd)
			unix.Close(fd)
		case err != c.want && !(c.kernelMayLackItToo && err == unix.EAFNOSUPPORT):
			fmt.Printf("REACHED %s: the kernel answered (%v), not the filter\n", c.name, err)
		default:
			fmt.Printf("%s: %v\n", c.name, err)
		}
	}
	// A pair is made as two sockets of the family (its module loaded,
	// TIPC's pair usable) before the kernel asks whether it pairs.
	if _, err := unix.Socketpair(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0); err != unix.EAFNOSUPPORT {
		fmt.Printf("REACHED a packet socket pair: the kernel answered (%v), not the filter\n", err)
	}
	if p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
		fmt.Printf("REFUSED a Unix socket pair: %v\n", err)
	} else {
		unix.Close(p[0])
		unix.Close(p[1])
	}
	for _, c := range []struct {
		name               string
		family, typ, proto int
	}{
		{"routing netlink", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE},
		{"socket diagnostics netlink", unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_SOCK_DIAG},
		{"a Unix socket", unix.AF_UNIX, unix.SOCK_STREAM, 0},
		{"an IPv4 socket", unix.AF_INET, unix.SOCK_STREAM, 0},
		{"an IPv6 socket", unix.AF_INET6, unix.SOCK_DGRAM, 0},
		{"a TCP socket named by number", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP},
		{"an IPv6 UDP socket named by number", unix.AF_INET6, unix.SOCK_DGRAM, unix.IPPROTO_UDP},
	} {
		fd, err := unix.Socket(c.family, c.typ|unix.SOCK_CLOEXEC, c.proto)
		if err != nil {
			fmt.Printf("REFUSED %s: %v\n", c.name, err)
			continue
		}
		unix.Close(fd)
	}
	fmt.Println("families probed")
}
