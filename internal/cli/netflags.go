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

// networkContainment decides the network part of c (whose sandbox is
// already chosen): contained behind planex's proxy with the user's
// allowed hosts, or the host's network, with the warnings and failures
// --sandbox has for the same situations: locally a warning, in the Action
// (strict) a failure naming the input that accepts the risk.
// sandboxWarned says the user was already told agents run uncontained.
func (a *agentFlags) networkContainment(ctx context.Context, c *agent.Containment, mode sandbox.Mode, strict, sandboxWarned bool, warn io.Writer) error {
	network, err := sandbox.ParseNetwork(a.network)
	if err != nil {
		return &exitError{code: exitUsage, msg: "planex: --" + err.Error()}
	}
	rules, err := egress.ParseRules(a.allowHosts...)
	if err != nil {
		return &exitError{code: exitUsage, msg: "planex: --allow-host: " + err.Error()}
	}
	c.Network = network
	if network.Open() {
		fmt.Fprintln(warn, "planex: warning: --network open: agents and the commands they run use this machine's network and may connect anywhere; see docs/security.md")
		return nil
	}
	if c.Sandbox == nil {
		if strict {
			return errors.New("the network cannot be contained without the sandbox; set the input `network: open` to run agents with the runner's network")
		}
		if !sandboxWarned {
			fmt.Fprintln(warn, "planex: warning: without the sandbox agents use this machine's network; pass --network open to run so without this warning")
		}
		c.Network = sandbox.NetworkOpen
		return nil
	}
	if err := c.Sandbox.ProbeNetwork(ctx); err != nil {
		switch {
		case mode == sandbox.ModeOn:
			return fmt.Errorf("--sandbox on: %w", err)
		case strict:
			return fmt.Errorf("%w; set the input `network: open` to run agents with the runner's network (see docs/security.md)", err)
		}
		fmt.Fprintf(warn, "planex: warning: %v; agents use this machine's network. Pass --network open to run so without this warning; see docs/security.md\n", err)
		c.Network = sandbox.NetworkOpen
		return nil
	}
	c.Egress = &agent.Egress{Rules: rules, Log: &egress.Log{}}
	return nil
}

// endpointRules are the destinations a named CLI reaches from inside the
// sandbox: its model endpoint (the base URL's host and port, or the
// provider's host) and the MCP HTTP servers it is given.
func endpointRules(name, baseURL string, servers mcp.Config) ([]egress.Rule, error) {
	var out []egress.Rule
	add := func(raw string) error {
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" {
			return fmt.Errorf("%q is not a URL with a host", raw)
		}
		port := u.Port()
		if port == "" {
			port = "443"
			if u.Scheme == "http" {
				port = "80"
			}
		}
		r, err := egress.ParseRule(net.JoinHostPort(u.Hostname(), port))
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	}
	host := map[string]string{"claude": "https://api.anthropic.com", "codex": "https://api.openai.com", "gemini": "https://generativelanguage.googleapis.com"}[name]
	if host == "" {
		return nil, nil // a built-in agent calls its model from planex; a command agent names its own hosts
	}
	if baseURL != "" {
		host = baseURL
	}
	if err := add(host); err != nil {
		return nil, fmt.Errorf("--base-url: %w", err)
	}
	for _, s := range servers.Servers {
		if s.Type == mcp.TypeHTTP {
			if err := add(s.URL); err != nil {
				return nil, fmt.Errorf("MCP server %s: %w", strconv.Quote(s.Name), err)
			}
		}
	}
	return out, nil
}
