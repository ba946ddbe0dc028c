//go:build linux

package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBuiltinAgentOwnHTTPMCPServer: with the network contained, a
// built-in agent's MCP client dials HTTP servers held to the egress
// proxy's decision; a maintainer's own configuration (a file outside the
// checkout) naming their server on this machine by its address or by
// the name localhost still works: the model's call of its tool reaches
// it and what it returned reaches the task's commit.
func TestBuiltinAgentOwnHTTPMCPServer(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	for _, host := range []string{"127.0.0.1", "localhost"} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			server := sdk.NewServer(&sdk.Implementation{Name: "tickets", Version: "1"}, nil)
			sdk.AddTool(server, &sdk.Tool{Name: "lookup_ticket", Description: "Look a ticket up."},
				func(_ context.Context, _ *sdk.CallToolRequest, in struct {
					Key string `json:"key"`
				}) (*sdk.CallToolResult, any, error) {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Key + ": Widgets must be blue (over HTTP)"}}}, nil, nil
				})
			h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
			var hits atomic.Int32
			svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				h.ServeHTTP(w, r)
			}))
			defer svc.Close()
			f := newFixture(t)
			model := &scriptedModel{t: t, mcp: true}
			srv := httptest.NewServer(model)
			defer srv.Close()
			url := strings.Replace(svc.URL, "127.0.0.1", host, 1) + "/mcp"
			cfgFile := filepath.Join(t.TempDir(), "mcp.json")
			if err := os.WriteFile(cfgFile, []byte(`{"mcpServers":{"tickets":{"type":"http","url":"`+url+`"}}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := f.command("-y", "--sandbox", "on", "--agent", "openai", "--base-url", srv.URL+"/v1", "--model", "gpt-test",
				"--mcp-config", cfgFile, "--review", "skip", "add a greeting")
			cmd.Env = append(cmd.Env, "PLANEX_AGENT_CMD=", "OPENAI_API_KEY=sk-test-key")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("planex: %v\n%s", err, out)
			}
			branch := "planex/" + filepath.Base(f.sessionDir())
			if got := f.git("show", branch+":a/hello.txt"); got != "hello\nPX-7: Widgets must be blue (over HTTP)\n" {
				t.Errorf("a/hello.txt = %q\n%s", got, out)
			}
			if hits.Load() == 0 {
				t.Error("the MCP server saw no request")
			}
		})
	}
}
