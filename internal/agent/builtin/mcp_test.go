//go:build unix

package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/mcp"
	"github.com/planexhq/planex/internal/agent/mcp/mcptest"
)

func running(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	_, rest, _ := strings.Cut(string(stat), ") ")
	return err == nil && !strings.HasPrefix(rest, "Z")
}

// TestMCPTools has a scripted model call the test server's tool in an
// execute step and write what it returned: the tool is offered under
// its mcp__ name with the server's schema, its result reaches the
// model and the file, the call is recorded, and the server is gone
// once the step ended.
func TestMCPTools(t *testing.T) {
	bin := mcptest.BuildServer(t)
	dir := t.TempDir()
	pidfile := filepath.Join(t.TempDir(), "pids")
	cfg, err := mcp.Parse([]byte(mcptest.Config(bin, "-pidfile", pidfile)), "test", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	var reqs []Request
	var serverPid, childPid int
	p := ProviderFunc(func(_ context.Context, req Request) (Response, error) {
		reqs = append(reqs, req)
		call := func(name string, in any) (Response, error) {
			b, _ := json.Marshal(in)
			return Response{Stop: StopToolUse, ToolCalls: []ToolCall{{ID: fmt.Sprint("c", len(reqs)), Name: name, Input: b}}}, nil
		}
		switch len(reqs) {
		case 1:
			b, _ := os.ReadFile(pidfile)
			fmt.Sscan(string(b), &serverPid, &childPid)
			return call("mcp__tickets__lookup_ticket", map[string]string{"key": "PX-7"})
		case 2:
			got := req.Messages[len(req.Messages)-1].ToolResults[0].Content
			return call("write_file", map[string]string{"path": "a/ticket.txt", "content": got + "\n"})
		default:
			return call("report_result", map[string]any{"id": "T1", "status": "completed", "findings": "wrote the ticket",
				"files_modified": []string{"a/ticket.txt"}, "tests_passed": true, "acceptance_met": "yes", "error": ""})
		}
	})
	a := New(p, Options{Name: "fake", MCP: cfg, Price: &Price{InPerMTok: 1, OutPerMTok: 1}})
	res, err := a.Run(context.Background(), agent.Step{Phase: agent.PhaseExecute, ID: "T1", Prompt: "do T1", Dir: dir, Scope: "a/**", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var offered bool
	for _, d := range reqs[0].Tools {
		if d.Name == "mcp__tickets__lookup_ticket" {
			offered = true
			var s struct {
				Type       string         `json:"type"`
				Properties map[string]any `json:"properties"`
				Required   []string       `json:"required"`
			}
			if err := json.Unmarshal(d.InputSchema, &s); err != nil || s.Type != "object" || s.Properties["key"] == nil || fmt.Sprint(s.Required) != "[key]" {
				t.Errorf("schema %s", d.InputSchema)
			}
			if !strings.Contains(d.Description, "Look a ticket up") || !strings.Contains(d.Description, "MCP server tickets") {
				t.Errorf("description %q", d.Description)
			}
		}
	}
	if !offered {
		t.Fatalf("MCP tool not offered: %+v", reqs[0].Tools)
	}
	if !strings.Contains(reqs[0].System, "mcp__SERVER__TOOL") {
		t.Errorf("the system prompt does not say MCP results are data")
	}
	b, err := os.ReadFile(filepath.Join(dir, "a", "ticket.txt"))
	if err != nil || string(b) != "PX-7: Widgets must be blue (tracker)\n" {
		t.Errorf("a/ticket.txt = %q, %v", b, err)
	}
	if fmt.Sprint(res.MCPCalls) != "[mcp__tickets__lookup_ticket]" {
		t.Errorf("MCP calls %v", res.MCPCalls)
	}
	if serverPid == 0 || childPid == 0 {
		t.Fatal("the server did not run during the step")
	}
	if running(serverPid) || running(childPid) {
		t.Errorf("after the step: server running %v, its child running %v", running(serverPid), running(childPid))
	}
}

// TestMCPServerMissing fails the step, naming the server, before any
// model call.
func TestMCPServerMissing(t *testing.T) {
	cfg, err := mcp.Parse([]byte(`{"mcpServers":{"tracker":{"command":"/nonexistent/tracker-mcp"}}}`), "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &scripted{}
	a := New(p, Options{Name: "fake", MCP: cfg})
	_, err = a.Run(context.Background(), agent.Step{Phase: agent.PhasePlan, Prompt: "plan", Dir: t.TempDir(), Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), `fake agent: MCP server "tracker"`) || !strings.Contains(err.Error(), "/nonexistent/tracker-mcp") {
		t.Fatalf("err %v", err)
	}
	if len(p.reqs) != 0 {
		t.Errorf("%d model calls", len(p.reqs))
	}
}

// TestMCPServerHangs fails the step within the start limit.
func TestMCPServerHangs(t *testing.T) {
	bin := mcptest.BuildServer(t)
	cfg, err := mcp.Parse([]byte(mcptest.Config(bin, "-hang")), "test", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	a := New(&scripted{}, Options{Name: "fake", MCP: cfg, MCPStartTimeout: 300 * time.Millisecond})
	_, err = a.Run(context.Background(), agent.Step{Phase: agent.PhasePlan, Prompt: "plan", Dir: t.TempDir(), Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), `MCP server "tickets"`) || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Fatalf("err %v", err)
	}
}
