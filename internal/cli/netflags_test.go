package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/sandbox"
)

// TestNetworkWithoutNamespaces: on a machine where the sandbox works but
// network namespaces do not, `contained` behaves as --sandbox does:
// locally one warning and the host's network, with --sandbox on a
// failure, in the Action a failure naming `network: open`; `open` runs
// with one warning naming the choice. --allow-host values are checked.
func TestNetworkWithoutNamespaces(t *testing.T) {
	t.Parallel()
	box, err := sandbox.New(context.Background(), sandbox.ModeAuto)
	if err != nil {
		t.Skipf("no sandbox on this machine, so nothing whose network could be missing: %v", err)
	}
	noNet := func(context.Context, *sandbox.Sandbox) error {
		return fmt.Errorf("%w: operation not permitted", sandbox.ErrNoNetworkNamespace)
	}
	have := func(context.Context, sandbox.Mode) (*sandbox.Sandbox, error) { return box, nil }
	repo := emptyRepo(t)
	for _, c := range []struct {
		mode, network string
		hosts         []string
		strict        bool
		wantErr       string
		wantWarn      string
		wantOpen      bool
	}{
		{mode: "auto", wantWarn: "cannot contain the network", wantOpen: true},
		{mode: "on", wantErr: "--sandbox on: the agent sandbox cannot contain the network"},
		{mode: "auto", strict: true, wantErr: "set the input `network: open`"},
		{mode: "auto", strict: true, network: "open", wantWarn: "--network open", wantOpen: true},
		{mode: "auto", hosts: []string{"127.1:80"}, wantErr: "--allow-host"},
		{mode: "auto", hosts: []string{"*.com"}, wantErr: "--allow-host"},
	} {
		t.Run(fmt.Sprintf("%s %s %v strict=%v", c.mode, c.network, c.hosts, c.strict), func(t *testing.T) {
			a := &agentFlags{sandbox: c.mode, network: c.network, allowHosts: c.hosts, newSandbox: have, probeNetwork: noNet, scopesAbstract: func() bool { return true }}
			var warn bytes.Buffer
			contain, err := a.containment(context.Background(), repo, c.strict, &warn, func(string) string { return "" })
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, c.wantErr)
				}
				if ne := (*networkError)(nil); !errors.As(err, &ne) && c.mode != "on" {
					t.Errorf("the error is not told apart as the network's: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := warn.String(); !strings.Contains(got, c.wantWarn) || strings.Count(got, "\n") != 1 {
				t.Errorf("warning = %q, want one line containing %q", got, c.wantWarn)
			}
			if contain.Network.Open() != c.wantOpen || contain.Egress != nil {
				t.Errorf("network %v with egress %v, want open=%v and no proxy", contain.Network, contain.Egress, c.wantOpen)
			}
		})
	}
}

// TestOpenNetworkSaysKernelLacksScopes: on a kernel without Landlock's
// scopes (before Linux 6.12) a contained program with --network open
// reaches the host's abstract Unix sockets and can signal the sandbox's
// init; planex says so when it runs so, and says nothing more where the
// kernel has them.
func TestOpenNetworkSaysKernelLacksScopes(t *testing.T) {
	t.Parallel()
	box, err := sandbox.New(context.Background(), sandbox.ModeAuto)
	if err != nil {
		t.Skipf("no sandbox on this machine, so nothing to scope: %v", err)
	}
	have := func(context.Context, sandbox.Mode) (*sandbox.Sandbox, error) { return box, nil }
	repo := emptyRepo(t)
	for _, scoped := range []bool{false, true} {
		a := &agentFlags{sandbox: "auto", network: "open", newSandbox: have, scopesAbstract: func() bool { return scoped }}
		var warn bytes.Buffer
		if _, err := a.containment(context.Background(), repo, false, &warn, func(string) string { return "" }); err != nil {
			t.Fatal(err)
		}
		if said := strings.Contains(warn.String(), "abstract Unix sockets"); said == scoped {
			t.Errorf("kernel scopes %v: warning %q", scoped, warn.String())
		}
	}
}
