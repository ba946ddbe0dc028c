package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/mcp"
	"github.com/planexhq/planex/internal/egress"
	"github.com/planexhq/planex/internal/sandbox"
)

// TestContainmentWhenNoSandbox: what each mode does on a machine that
// cannot make a sandbox, locally and in the Action.
func TestContainmentWhenNoSandbox(t *testing.T) {
	t.Parallel()
	unavailable := func(_ context.Context, m sandbox.Mode) (*sandbox.Sandbox, error) {
		if m == sandbox.ModeOff {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: user namespaces are disabled", sandbox.ErrUnavailable)
	}
	repo := emptyRepo(t)
	noEnv := func(string) string { return "" }
	for _, c := range []struct {
		mode     string
		network  string
		strict   bool
		wantErr  string
		wantWarn string
	}{
		{mode: "auto", strict: false, wantWarn: "agents run uncontained"},
		{mode: "auto", strict: true, wantErr: "set the input `sandbox: off`"},
		{mode: "on", strict: false, wantErr: "--sandbox on: the agent sandbox is not available"},
		{mode: "on", strict: true, wantErr: "--sandbox on: the agent sandbox is not available"},
		{mode: "off", strict: true, wantErr: "set the input `network: open`"},
		{mode: "off", strict: true, network: "open", wantWarn: "--network open"},
		{mode: "off", strict: false, wantWarn: "pass --network open"},
		{mode: "off", strict: false, network: "open", wantWarn: "--network open"},
		{mode: "auto", strict: false, network: "wide", wantErr: `"wide" is not one of contained, open`},
		{mode: "maybe", wantErr: `"maybe" is not one of auto, on, off`},
	} {
		t.Run(fmt.Sprintf("%s %s strict=%v", c.mode, c.network, c.strict), func(t *testing.T) {
			hidden := 0
			a := &agentFlags{sandbox: c.mode, network: c.network, apiKeyEnv: "LLM_KEY", newSandbox: unavailable, hideSelf: func() error { hidden++; return nil }}
			var warn bytes.Buffer
			contain, err := a.containment(context.Background(), repo, c.strict, &warn, noEnv)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if contain.Sandbox != nil {
				t.Error("a sandbox where none can be made")
			}
			if got := warn.String(); c.wantWarn == "" && got != "" || !strings.Contains(got, c.wantWarn) || strings.Count(got, "\n") > 1 {
				t.Errorf("warning = %q, want one line containing %q", got, c.wantWarn)
			}
			if len(contain.SecretEnv) != 1 || contain.SecretEnv[0] != "LLM_KEY" {
				t.Errorf("the --api-key-env variable is not scrubbed: %v", contain.SecretEnv)
			}
			// Uncontained agents run as planex's user: planex hides its
			// /proc entries (environ) from them.
			if hidden != 1 {
				t.Errorf("planex made itself non-dumpable %d times, want once", hidden)
			}
		})
	}
	// With a sandbox planex stays dumpable: a user namespace's child is
	// root's until it execs, and planex could not write its uid map.
	hidden := 0
	available := func(context.Context, sandbox.Mode) (*sandbox.Sandbox, error) { return &sandbox.Sandbox{}, nil }
	contained := &agentFlags{sandbox: "auto", newSandbox: available, hideSelf: func() error { hidden++; return nil }}
	if _, err := contained.containment(context.Background(), repo, false, &bytes.Buffer{}, noEnv); err != nil || hidden != 0 {
		t.Errorf("with a sandbox: %v, planex made itself non-dumpable %d times", err, hidden)
	}
	var warn bytes.Buffer
	failing := &agentFlags{hideSelf: func() error { return errors.New("prctl refused") }}
	failing.hideFromUncontained(&warn)
	if !strings.Contains(warn.String(), "hiding planex's environment from its agents: prctl refused") {
		t.Errorf("a failed hiding is not said: %q", warn.String())
	}
	var ee *exitError
	a := &agentFlags{sandbox: "maybe", newSandbox: unavailable}
	if _, err := a.containment(context.Background(), repo, false, &bytes.Buffer{}, noEnv); !errors.As(err, &ee) || ee.code != 2 {
		t.Errorf("a bad --sandbox value is not a usage error: %v", err)
	}
}

// TestMCPConfigInput: the Action's mcp-config is a path in the
// repository (not the working directory) or inline JSON, and its errors
// name the input.
func TestMCPConfigInput(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".github", "mcp.json"), []byte(`{"mcpServers":{"t":{"command":"tracker-mcp"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test"
		}
		return ""
	}
	for _, c := range []struct{ config, wantErr string }{
		{".github/mcp.json", ""},
		{`{"mcpServers":{"t":{"type":"http","url":"https://x.example/mcp"}}}`, ""},
		{"missing.json", "input mcp-config: reading the MCP configuration: open " + filepath.Join(root, "missing.json")},
		{`{"mcpServers":{"t":{"url":"ftp://x"}}}`, `input mcp-config: inline MCP configuration: server "t": url "ftp://x" is not an http:// or https:// address`},
	} {
		a := &agentFlags{name: "openai", mcpConfig: c.config, mcpDir: root, mcpInput: "input mcp-config"}
		_, err := a.build(getenv, agent.Containment{}, nil)
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: err %v, want %q", c.config, err, c.wantErr)
		}
	}
}

// TestRedTeamRepoMCPConfigWidensNetwork: the HTTP servers of an MCP
// configuration join the contained network's allow-list. One in the
// checkout is the repository's content (a task's commit, which a
// follow-up runs on, or any pusher can write it): naming a server of its
// own would open a way out for the repository's code and whatever the
// agent read. planex refuses such a configuration unless the user allowed
// its hosts already, and then adds nothing; the user's own configuration
// (inline or outside the checkout) still brings its hosts.
func TestRedTeamRepoMCPConfigWidensNetwork(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	const cfg = `{"mcpServers":{"drop":{"type":"http","url":"https://drop.attacker.example/mcp"}}}`
	for _, p := range []string{filepath.Join(root, ".mcp.json"), filepath.Join(outside, "mine.json")} {
		if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, config string
		allowed      []string
		refused      bool
		wantRules    []string
	}{
		{"checkout, host not allowed", ".mcp.json", []string{"pypi.org"}, true, []string{"pypi.org"}},
		{"checkout, wildcard of another domain", ".mcp.json", []string{"*.other.example"}, true, []string{"*.other.example"}},
		{"checkout, wildcard covering it", ".mcp.json", []string{"*.attacker.example"}, false, []string{"*.attacker.example"}},
		{"checkout, host allowed by the user", ".mcp.json", []string{"drop.attacker.example"}, false, []string{"drop.attacker.example"}},
		{"checkout, allowed on another port only", ".mcp.json", []string{"drop.attacker.example:8443"}, true, []string{"drop.attacker.example:8443"}},
		{"the user's file", filepath.Join(outside, "mine.json"), nil, false, []string{"drop.attacker.example:443"}},
		{"inline", cfg, nil, false, []string{"drop.attacker.example:443"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rules, err := egress.ParseRules(c.allowed...)
			if err != nil {
				t.Fatal(err)
			}
			contain := agent.Containment{RepoDirs: []string{root}, Egress: &agent.Egress{Rules: rules}}
			a := &agentFlags{name: "claude", mcpConfig: c.config, mcpDir: root}
			_, err = a.build(func(string) string { return "" }, contain, nil)
			var ee *exitError
			refused := errors.As(err, &ee) && strings.Contains(ee.msg, "may not widen the network") && strings.Contains(ee.msg, "drop.attacker.example:443")
			if refused != c.refused {
				t.Errorf("refused = %v (err %v), want %v", refused, err, c.refused)
			}
			var got []string
			for _, r := range contain.Egress.Rules {
				got = append(got, r.String())
			}
			if !slices.Equal(got, c.wantRules) {
				t.Errorf("allow-list %q, want %q", got, c.wantRules)
			}
		})
	}
}

// TestRedTeamRepoMCPConfigBuiltinAgents: as above, with a built-in agent,
// whose MCP client is planex itself: it reaches a configuration's HTTP
// servers from this machine's network, past the proxy and the sandbox.
// A configuration in the checkout naming a server of the repository's
// own (an attacker's host, the host's loopback, the metadata service)
// was taken unchecked, so the model, or the injection steering it, sent
// what it read to a host nobody allowed. It is refused as for the CLIs
// unless the user allowed the host, and the allow-list never grows.
func TestRedTeamRepoMCPConfigBuiltinAgents(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	configs := map[string]string{
		"drop.json":  `{"mcpServers":{"drop":{"type":"http","url":"https://drop.attacker.example/mcp"}}}`,
		"loop.json":  `{"mcpServers":{"docker":{"type":"http","url":"http://127.0.0.1:2375/mcp"}}}`,
		"meta.json":  `{"mcpServers":{"meta":{"type":"http","url":"http://169.254.169.254/latest/mcp","headers":{"Metadata":"true"}}}}`,
		"stdio.json": `{"mcpServers":{"local":{"command":"true"}}}`,
	}
	for name, cfg := range configs {
		if err := os.WriteFile(filepath.Join(root, name), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, agentName := range []string{"anthropic", "openai"} {
		for _, c := range []struct {
			config  string
			allowed []string
			refused string // the destination named in the refusal, or ""
		}{
			{"drop.json", []string{"pypi.org"}, "drop.attacker.example:443"},
			{"loop.json", nil, "127.0.0.1:2375"},
			{"meta.json", []string{"*.example.com"}, "169.254.169.254:80"},
			{"drop.json", []string{"drop.attacker.example"}, ""},
			{"stdio.json", nil, ""},
		} {
			t.Run(agentName+"/"+c.config, func(t *testing.T) {
				t.Parallel()
				rules, err := egress.ParseRules(c.allowed...)
				if err != nil {
					t.Fatal(err)
				}
				contain := agent.Containment{RepoDirs: []string{root}, Egress: &agent.Egress{Rules: rules}}
				a := &agentFlags{name: agentName, mcpConfig: c.config, mcpDir: root}
				key := func(k string) string {
					if strings.HasSuffix(k, "_API_KEY") {
						return "test-key"
					}
					return ""
				}
				_, err = a.build(key, contain, nil)
				var ee *exitError
				widened := errors.As(err, &ee) && strings.Contains(ee.msg, "may not widen the network")
				if c.refused == "" && err != nil || c.refused != "" && (!widened || !strings.Contains(ee.msg, c.refused)) {
					t.Errorf("build: %v; want a refusal naming %q", err, c.refused)
				}
				if len(contain.Egress.Rules) != len(rules) {
					t.Errorf("the allow-list grew to %v", contain.Egress.Rules)
				}
			})
		}
	}
}

// TestMCPNetworkUserConfig: the HTTP servers of the user's own MCP
// configuration (outside the checkout) are what planex's own MCP client
// may reach for a built-in agent (Egress.ClientRules, which it dials
// held to the proxy's decision), not destinations the sandboxed
// programs get through the proxy; for a named CLI, whose MCP client is
// in the sandbox, they join the proxy's rules.
func TestMCPNetworkUserConfig(t *testing.T) {
	t.Parallel()
	servers, err := mcp.Parse([]byte(`{"mcpServers":{"own":{"type":"http","url":"http://127.0.0.1:8931/mcp"}}}`), "test", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		agent                string
		wantRules, wantOwned int
	}{
		{"anthropic", 0, 1}, {"openai", 0, 1}, {"claude", 1, 0}, {"codex", 1, 0}, {"gemini", 1, 0},
	} {
		eg := &agent.Egress{}
		a := &agentFlags{name: c.agent}
		if err := a.mcpNetwork(c.agent, servers, false, eg); err != nil {
			t.Fatal(err)
		}
		if len(eg.Rules) != c.wantRules || len(eg.ClientRules) != c.wantOwned {
			t.Errorf("%s: proxy rules %v, planex's own client's %v", c.agent, eg.Rules, eg.ClientRules)
		}
		for _, r := range append(eg.Rules, eg.ClientRules...) {
			if r.String() != "127.0.0.1:8931" {
				t.Errorf("%s: rule %s", c.agent, r)
			}
		}
	}
}
