package sandbox

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
)

// TestRedTeamAddressSpellingsOutOfReach: a contained program (the network
// a named CLI's step has, with the gateway's and proxy's ports forwarded)
// spells the host's own services every way an address can: the
// unspecified 0.0.0.0 and [::] (which Linux reads as this host), another
// loopback address (127.0.0.2), IPv6 loopback [::1] and an IPv4-mapped
// [::ffff:127.0.0.1], all towards a listener on every address of the
// host, IPv4 and IPv6. Held: each is this host of the step's own
// namespace, where nothing but the forwarded ports listens; with the
// network open the same spellings reach the listener (the probe works).
func TestRedTeamAddressSpellingsOutOfReach(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	if err := s.ProbeNetwork(context.Background()); err != nil {
		t.Fatalf("this machine makes network namespaces (CI too), yet: %v", err)
	}
	probe := probeBuild.Path(t)
	addr := "[::]:0"
	v6 := true
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Logf("no IPv6 on this machine (%v): the IPv6 rows are left out", err)
		addr, v6 = "0.0.0.0:0", false
	} else {
		ln.Close()
	}
	all := sandboxtest.Listen(t, "tcp", addr)
	port := strconv.Itoa(all.Addr().(*net.TCPAddr).Port)
	sockDir := t.TempDir()
	sandboxtest.Listen(t, "unix", filepath.Join(sockDir, "gw.sock"))
	forward := []Forward{{Port: 3129, Socket: filepath.Join(sockDir, "gw.sock")}}
	targets := []string{"0.0.0.0:" + port, "127.0.0.2:" + port, "127.0.0.1:" + port}
	if v6 {
		targets = append(targets, "[::]:"+port, "[::1]:"+port, "[::ffff:127.0.0.1]:"+port)
	}
	for _, network := range []Network{NetworkContained, NetworkOpen} {
		for i, target := range targets {
			msg := "loot-" + string(network) + "-" + strconv.Itoa(i)
			p := Policy{Network: network, ReadOnly: []string{filepath.Dir(probe)}}
			if network == NetworkContained {
				p.Forward = forward
			}
			out, err := run(t, s, p, "/", nil, probe+" tcp "+target+" "+msg)
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", network, target, err, out)
			}
			reach := network == NetworkOpen
			arrived := strings.Contains(strings.Join(all.Got(), "\n"), msg)
			if arrived != reach || strings.HasPrefix(out, "ok: pong") != reach {
				t.Errorf("%s network, %s: want reached=%v; the program said %q, the host's listener got %q", network, target, reach, out, all.Got())
			}
		}
	}
}
