//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/planexhq/planex/internal/agent"
)

// TestRedTeamEditReadsOnlyBoundedRegularFiles: edit_file, which works in
// planex's own memory, refuses a FIFO (which would block it) and a file
// larger than its bound (here a sparse 64 MiB one) instead of reading it;
// read_file refuses the FIFO too.
func TestRedTeamEditReadsOnlyBoundedRegularFiles(t *testing.T) {
	repo, _ := gitRepo(t)
	s := newSet(t, agent.PhaseExecute, repo, "src/**")
	if err := syscall.Mkfifo(filepath.Join(repo, "src", "pipe.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(repo, "src", "big.go")
	if err := os.WriteFile(big, []byte("package big\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 64<<20); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"src/pipe.go": "not a regular file", "src/big.go": "more than the 16 MiB edit_file works on"} {
		out := call(t, s, EditFile, map[string]any{"path": path, "old_text": "package", "new_text": "x"})
		if !out.IsError || !strings.Contains(out.Text, want) {
			t.Errorf("edit %s: %+v, want an error containing %q", path, out, want)
		}
	}
	// read_file refuses the FIFO instead of waiting for a writer.
	if out := call(t, s, ReadFile, map[string]any{"path": "src/pipe.go"}); !out.IsError || !strings.Contains(out.Text, "not a regular file") {
		t.Errorf("read_file of a FIFO: %+v", out)
	}
}
