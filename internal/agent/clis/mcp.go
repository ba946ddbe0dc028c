package clis

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/agent/mcp"
)

// Each CLI is its own MCP client: planex writes the user's servers, their
// ${VAR}s already expanded, into the configuration it owns for the step,
// in the CLI's own format. The CLI starts the servers inside planex's
// sandbox, as its own children.

// claudeMCPFile is the --mcp-config file planex writes for Claude Code.
func claudeMCPFile(s setup) string { return filepath.Join(s.home, "claude-mcp.json") }

// claudeMCP is Claude Code's .mcp.json for the step.
func claudeMCP(c mcp.Config) ([]byte, error) {
	servers := map[string]any{}
	for _, s := range c.Servers {
		switch s.Type {
		case mcp.TypeHTTP:
			servers[s.Name] = map[string]any{"type": "http", "url": s.URL, "headers": orEmpty(s.Headers)}
		default:
			servers[s.Name] = map[string]any{"type": "stdio", "command": s.Command, "args": orNone(s.Args), "env": orEmpty(s.Env)}
		}
	}
	return json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
}

// claudeMCPAllowed are the --allowedTools entries that let Claude Code
// call every tool of the configured servers without asking.
func claudeMCPAllowed(c mcp.Config) string {
	var names []string
	for _, s := range c.Servers {
		names = append(names, "mcp__"+s.Name)
	}
	return strings.Join(names, ",")
}

// codexMCP is the [mcp_servers.NAME] tables of Codex's config.toml.
func codexMCP(c mcp.Config) string {
	var b strings.Builder
	for _, s := range c.Servers {
		fmt.Fprintf(&b, "\n[mcp_servers.%s]\n", tomlString(s.Name))
		// No one can answer an approval prompt in `codex exec`: the
		// user's servers are approved by configuring them.
		b.WriteString("default_tools_approval_mode = \"approve\"\n")
		switch s.Type {
		case mcp.TypeHTTP:
			fmt.Fprintf(&b, "url = %s\n", tomlString(s.URL))
			if len(s.Headers) > 0 {
				fmt.Fprintf(&b, "http_headers = %s\n", tomlTable(s.Headers))
			}
		default:
			fmt.Fprintf(&b, "command = %s\n", tomlString(s.Command))
			args := make([]string, 0, len(s.Args))
			for _, a := range s.Args {
				args = append(args, tomlString(a))
			}
			fmt.Fprintf(&b, "args = [%s]\n", strings.Join(args, ", "))
			if len(s.Env) > 0 {
				fmt.Fprintf(&b, "env = %s\n", tomlTable(s.Env))
			}
		}
	}
	return b.String()
}

// tomlTable writes a map as an inline TOML table, keys sorted.
func tomlTable(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, tomlString(k)+" = "+tomlString(m[k]))
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// geminiMCP is the mcpServers object of Gemini CLI's settings.json. The
// servers are trusted (no confirmation per call): nothing could answer
// one in a headless run.
func geminiMCP(c mcp.Config) map[string]any {
	servers := map[string]any{}
	for _, s := range c.Servers {
		switch s.Type {
		case mcp.TypeHTTP:
			servers[s.Name] = map[string]any{"httpUrl": s.URL, "headers": orEmpty(s.Headers), "trust": true}
		default:
			servers[s.Name] = map[string]any{"command": s.Command, "args": orNone(s.Args), "env": orEmpty(s.Env), "trust": true}
		}
	}
	return servers
}

// geminiMCPPolicy lets the configured servers' tools run in every mode,
// plan mode (read-only steps) included.
func geminiMCPPolicy(c mcp.Config) string {
	var b strings.Builder
	for _, s := range c.Servers {
		fmt.Fprintf(&b, "\n[[rule]]\ntoolName = \"*\"\nmcpName = %s\ndecision = \"allow\"\npriority = 200\n", tomlString(s.Name))
	}
	return b.String()
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
