// Package mcptest builds the small stdio MCP server in
// internal/agent/mcp/testdata for tests of every package that uses MCP.
package mcptest

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// BuildServer compiles the ticket server (one tool, lookup_ticket, and a
// diagnostic tool, env) into a temporary directory and returns its path.
func BuildServer(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "testdata", "ticketserver")
	bin := filepath.Join(t.TempDir(), "ticketserver")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v\n%s", err, out)
	}
	return bin
}

// Config is an MCP configuration naming the built server "tickets", run
// with args; its TICKET_PREFIX comes from ${PLANEX_TEST_TICKET_PREFIX}
// (default "tracker").
func Config(bin string, args ...string) string {
	if args == nil {
		args = []string{}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"tickets": map[string]any{
		"command": bin, "args": args, "env": map[string]string{"TICKET_PREFIX": "${PLANEX_TEST_TICKET_PREFIX:-tracker}"},
	}}})
	return string(b)
}
