//go:build unix

package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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

// TestRedTeamToolsWalkBounded: an agent's contained command fills a
// folder of its worktree with empty files (an inode each, no disk), then
// the model calls list_files and search_files, which walk the worktree in
// planex itself: every folder's whole listing was read into memory and
// sorted before the first file was looked at, 114 MiB for 300,000 files,
// growing with what the agent made. A walk reads at most MaxWalkEntries
// entries in all (here 2,000, of 20,000) and says where it stopped.
//
// Not parallel: it measures the process's allocations.
func TestRedTeamToolsWalkBounded(t *testing.T) {
	repo, _ := gitRepo(t)
	dir := filepath.Join(repo, "src", "many")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 20_000 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("file-with-a-longer-name-%08d.txt", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	s, err := New(Config{Phase: agent.PhaseExecute, Worker: "T1", Dir: repo, Scope: "src/**", MaxWalkEntries: 2000,
		DiscoveriesFile: filepath.Join(t.TempDir(), "discoveries.ndjson"), Env: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, c := range []struct {
		tool string
		args map[string]any
		max  uint64 // search opens each file it reads
	}{
		// 2,000 entries' names and paths (longer with the scratch folder
		// in /dev/shm); the whole folder's listing allocates over 16 MiB.
		{ListFiles, map[string]any{"path": "src"}, 3 << 20},
		{Search, map[string]any{"pattern": "never-there"}, 8 << 20},
	} {
		var out Output
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out = call(t, s, c.tool, c.args)
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > c.max {
			t.Errorf("%s allocated %d KiB; want at most %d KiB", c.tool, got>>10, c.max>>10)
		}
		if !strings.Contains(out.Text, "stopped after 2000 entries") {
			t.Errorf("%s does not say where its walk stopped: %.300s", c.tool, out.Text)
		}
	}
}

// TestRedTeamWriteFileWaitsOnNoFIFO: an agent's contained command leaves
// a FIFO where the model then asks write_file to write (src/pipe.go):
// planex, which writes the file itself, opened the FIFO for writing and
// waited for a reader for ever. A path that is not a regular file is
// refused, and a regular file is still written.
func TestRedTeamWriteFileWaitsOnNoFIFO(t *testing.T) {
	t.Parallel()
	repo, _ := gitRepo(t)
	if err := syscall.Mkfifo(filepath.Join(repo, "src", "pipe.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSet(t, agent.PhaseExecute, repo, "src/**")
	done := make(chan Output, 1)
	go func() {
		done <- call(t, s, WriteFile, map[string]any{"path": "src/pipe.go", "content": "package main\n"})
	}()
	select {
	case out := <-done:
		if !out.IsError || !strings.Contains(out.Text, "not a regular file") {
			t.Errorf("write_file to a FIFO: %+v; want it refused as not a regular file", out)
		}
	case <-time.After(20 * time.Second):
		// Open the FIFO for reading so that the blocked write ends.
		if f, err := os.OpenFile(filepath.Join(repo, "src", "pipe.go"), os.O_RDONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("write_file waited on the FIFO for a reader")
	}
	if out := call(t, s, WriteFile, map[string]any{"path": "src/new.go", "content": "package main\n"}); out.IsError {
		t.Errorf("write_file of a new file: %+v", out)
	}
}
