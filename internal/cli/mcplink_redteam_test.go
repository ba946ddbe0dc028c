//go:build unix

package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
)

// TestRedTeamMCPConfigLinkOut: the Action's mcp-config input names a file
// in the checkout, and the repository decides what that name is. A link
// it commits there to a file of the runner (another tool's server list,
// with the runner's token in a header) made those servers, token and
// all, the agent's. The link is refused, naming where it leads; a link
// that stays in the checkout and a file the user names outside it are
// read as before.
func TestRedTeamMCPConfigLinkOut(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	runner := filepath.Join(t.TempDir(), "mcp.json")
	const servers = `{"mcpServers":{"corp":{"type":"http","url":"https://corp.example/mcp","headers":{"Authorization":"Bearer RUNNER-TOKEN"}}}}`
	for _, p := range []string{runner, filepath.Join(root, "servers.json")} {
		if err := os.WriteFile(p, []byte(servers), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Join(root, ".github"), runner)
	if err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"out-rel.json": rel, "out-abs.json": runner, "in.json": "../servers.json"} {
		if err := os.Symlink(target, filepath.Join(root, ".github", name)); err != nil {
			t.Fatal(err)
		}
	}
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test"
		}
		return ""
	}
	for _, c := range []struct {
		config string
		refuse bool
	}{
		{".github/out-rel.json", true},
		{".github/out-abs.json", true},
		{".github/in.json", false},
		{runner, false}, // named by the user, outside the checkout
	} {
		a := &agentFlags{name: "openai", mcpConfig: c.config, mcpDir: root, mcpInput: "input mcp-config"}
		ag, err := a.build(getenv, agent.Containment{RepoDirs: []string{root}}, nil)
		var ee *exitError
		switch {
		case c.refuse && (!errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), c.config) || !strings.Contains(err.Error(), runner)):
			t.Errorf("%s: err %v, want exit %d naming the link and %s", c.config, err, exitUsage, runner)
		case c.refuse && ag != nil:
			t.Errorf("%s: an agent was built with the runner's servers", c.config)
		case !c.refuse && err != nil:
			t.Errorf("%s: %v, want it read", c.config, err)
		}
	}
}

// TestRedTeamLocateQueryFileBounded: `planex locate --query-file FILE`
// read the file whole, whatever it was: a FIFO a clone leaves there waited
// for a writer for ever, and a file of any size was read whole (stdin was
// bounded, a file not). Each is refused at once, naming the file.
func TestRedTeamLocateQueryFileBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "issue.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.md")
	f, err := os.Create(big)
	if err == nil {
		err = f.Truncate(20 << 20)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, big} {
		done := make(chan error, 1)
		go func() { _, err := readQuery(strings.NewReader(""), p, nil); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("%s: %v, want it refused, naming the file", filepath.Base(p), err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still reading after 10 s", filepath.Base(p))
		}
	}
}
