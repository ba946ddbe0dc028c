package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/mcp"
	"github.com/planexhq/planex/internal/egress"
	"github.com/planexhq/planex/internal/sandbox"
)

// networkError is a failure of the network part of containment, told
// apart so the Action names the input it comes from.
type networkError struct{ error }

func (e *networkError) Unwrap() error { return e.error }

// networkContainment decides the network part of c (whose sandbox is
// already chosen): contained behind planex's proxy with the user's
// allowed hosts, or the host's network, with the warnings and failures
// --sandbox has for the same situations: locally a warning, in the Action
// (strict) a failure naming the input that accepts the risk.
// sandboxWarned says the user was already told agents run uncontained.
func (a *agentFlags) networkContainment(ctx context.Context, c *agent.Containment, mode sandbox.Mode, strict, sandboxWarned bool, warn io.Writer) error {
	network, err := sandbox.ParseNetwork(a.network)
	if err != nil {
		return &networkError{&exitError{code: exitUsage, msg: "planex: --" + err.Error()}}
	}
	rules, err := egress.ParseRules(a.allowHosts...)
	if err != nil {
		return &networkError{&exitError{code: exitUsage, msg: "planex: --allow-host: " + err.Error()}}
	}
	c.Network = network
	if network.Open() {
		fmt.Fprintln(warn, "planex: warning: --network open: agents and the commands they run use this machine's network and may connect anywhere; see docs/security.md")
		scoped := a.scopesAbstract
		if scoped == nil {
			scoped = sandbox.ScopesAbstractSockets
		}
		if c.Sandbox != nil && !scoped() {
			fmt.Fprintln(warn, "planex: warning: this kernel has no Landlock scopes (Linux 6.12 and later): with the network open, contained programs also reach this machine's abstract Unix sockets (an X server, a session bus) and can signal the sandbox's first process; see docs/security.md")
		}
		return nil
	}
	if c.Sandbox == nil {
		if strict {
			return &networkError{errors.New("the network cannot be contained without the sandbox; set the input `network: open` to run agents with the runner's network")}
		}
		if !sandboxWarned {
			fmt.Fprintln(warn, "planex: warning: without the sandbox agents use this machine's network; pass --network open to run so without this warning")
		}
		c.Network = sandbox.NetworkOpen
		return nil
	}
	probe := a.probeNetwork
	if probe == nil {
		probe = func(ctx context.Context, s *sandbox.Sandbox) error { return s.ProbeNetwork(ctx) }
	}
	if err := probe(ctx, c.Sandbox); err != nil {
		switch {
		case mode == sandbox.ModeOn:
			return fmt.Errorf("--sandbox on: %w", err)
		case strict:
			return &networkError{fmt.Errorf("%w; set the input `network: open` to run agents with the runner's network (see docs/security.md)", err)}
		}
		fmt.Fprintf(warn, "planex: warning: %v; agents use this machine's network. Pass --network open to run so without this warning; see docs/security.md\n", err)
		c.Network = sandbox.NetworkOpen
		return nil
	}
	// Every refusal is also logged as it happens, whichever step made it.
	c.Egress = &agent.Egress{Rules: rules, Log: &egress.Log{}, Logger: logger(warn, false)}
	return nil
}

// endpointRules are the destinations a named CLI reaches from inside the
// sandbox through the proxy: the MCP HTTP servers it is given. Its model
// it reaches through planex's gateway (clis), which calls the endpoint
// from outside, so the model's host needs no rule; a built-in agent calls
// its model from planex, and a command agent names its hosts itself.
func endpointRules(name string, servers mcp.Config) ([]egress.Rule, error) {
	if name != "claude" && name != "codex" && name != "gemini" {
		return nil, nil
	}
	return mcpHTTPRules(servers)
}

// mcpHTTPRules are the destinations of servers' HTTP servers, a host and
// port each.
func mcpHTTPRules(servers mcp.Config) ([]egress.Rule, error) {
	var out []egress.Rule
	for _, s := range servers.Servers {
		if s.Type != mcp.TypeHTTP {
			continue
		}
		u, err := url.Parse(s.URL)
		if err != nil || u.Hostname() == "" {
			return nil, fmt.Errorf("MCP server %s: %q is not a URL with a host", strconv.Quote(s.Name), s.URL)
		}
		port := u.Port()
		if port == "" {
			port = map[bool]string{true: "80", false: "443"}[u.Scheme == "http"]
		}
		r, err := egress.ParseRule(net.JoinHostPort(u.Hostname(), port))
		if err != nil {
			return nil, fmt.Errorf("MCP server %s: %w", strconv.Quote(s.Name), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// notAllowed finds the first of wanted (single hosts with a port, as
// endpointRules makes them) that rules do not already let through.
func notAllowed(rules, wanted []egress.Rule) (egress.Rule, bool) {
	for _, w := range wanted {
		d := egress.Dest{Name: w.Host, Addr: w.Addr}
		if !egress.Allowed(rules, d, w.Port).OK {
			return w, false
		}
	}
	return egress.Rule{}, true
}
