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

// TestRedTeamEditReadsWhatItChecked: a process of the agent's that
// outlives its command (possible only without the sandbox, where every
// process of a step ends with it) swaps src/a.go between a small file and
// a sparse 64 MiB one while the model calls edit_file on it. edit_file
// checked the size by name, then read the file by name again, whole:
// caught between the two it read 64 MiB, past its 16 MiB bound. It now
// reads, at most one byte past the bound, the file it opened and checked.
func TestRedTeamEditReadsWhatItChecked(t *testing.T) {
	t.Parallel()
	repo, _ := gitRepo(t)
	s := newSet(t, agent.PhaseExecute, repo, "src/**")
	dir := filepath.Join(repo, "src")
	small, big := filepath.Join(t.TempDir(), "small"), filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(small, []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 64<<20); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tmp := filepath.Join(dir, ".swap")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			from := small
			if i%2 == 1 {
				from = big
			}
			// Linked in (t.TempDir is on the repository's file system),
			// then renamed over the file: it is one or the other.
			if os.Link(from, tmp) == nil {
				_ = os.Rename(tmp, filepath.Join(dir, "a.go"))
			}
		}
	}()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		out := call(t, s, EditFile, map[string]any{"path": "src/a.go", "old_text": "package a", "new_text": "package b"})
		if strings.Contains(out.Text, "would be 67108864 bytes") {
			t.Errorf("edit_file read past its bound: %.200s", out.Text)
			break
		}
	}
	close(stop)
	<-done
}
