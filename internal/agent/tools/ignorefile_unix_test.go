//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
)

// TestRedTeamToolsReadNoPlantedIgnoreFile: the file tools of the built-in
// agents run in planex itself, outside the sandbox, and read the
// worktree's .gitignore files to skip what they ignore. An agent's
// contained command (run_command) leaves a FIFO named .gitignore in one
// folder and a link named .gitignore to /dev/urandom in another, then the
// model asks for list_files and search_files: planex waited on the FIFO for
// a writer for ever, and read the endless device line by line, keeping
// every line as a pattern. Git itself follows no link named .gitignore
// inside a work tree; the tools must return, and still apply the
// ordinary .gitignore files.
func TestRedTeamToolsReadNoPlantedIgnoreFile(t *testing.T) {
	t.Parallel()
	repo, _ := gitRepo(t)
	if err := syscall.Mkfifo(filepath.Join(repo, "src", ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/urandom", filepath.Join(repo, "docs", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	for _, phase := range []agent.Phase{agent.PhaseExecute, agent.PhaseExplore} {
		s := newSet(t, phase, repo, "src/**")
		for _, c := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{ListFiles, map[string]any{"path": "."}, "src/main.go"},
			{Search, map[string]any{"pattern": "guide"}, "docs/guide.md"},
			{ReadFile, map[string]any{"path": "docs/guide.md"}, "guide"},
		} {
			done := make(chan Output, 1)
			go func() { done <- call(t, s, c.tool, c.args) }()
			select {
			case out := <-done:
				if out.IsError || !strings.Contains(out.Text, c.want) {
					t.Errorf("%s %s: %+v, want %q in it", phase, c.tool, out, c.want)
				}
				if c.tool == ListFiles && (strings.Contains(out.Text, "debug.log") || strings.Contains(out.Text, "skip.go")) {
					t.Errorf("%s list_files shows what the ordinary .gitignore files ignore: %s", phase, out.Text)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s %s did not return: planex waits on the planted .gitignore", phase, c.tool)
			}
		}
	}
}
