//go:build unix

package session

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/safefile"
)

// TestRedTeamStateFilesReadBounded: the Action restores a session folder
// from a state ref that whoever can push may have written, and the CLI's
// folder is the agent's to write without the sandbox. Its tasks.csv,
// explore.csv and discovery board are read only when each is a regular
// file, not a link, of at most MaxStateFile bytes: a 3 GiB file (sparse,
// so the test is cheap), a link to /dev/zero, a link to a file elsewhere
// on the machine and a FIFO are each refused at once, and nothing is
// read past the cap.
func TestRedTeamStateFilesReadBounded(t *testing.T) {
	t.Parallel()
	// Elsewhere, a well-formed file of each kind: read through a link,
	// it would be taken as the session's.
	outside := t.TempDir()
	for name, b := range map[string][]byte{
		TasksFile:       plan.WriteTasks([]plan.Task{{ID: "T1", Title: "not this session's", Scope: "**"}}),
		ExploreFile:     plan.WriteExplore([]plan.ExploreRow{{ID: "E1", Angle: "elsewhere"}}),
		DiscoveriesFile: []byte(`{"ts":"2025-01-01T00:00:00Z","worker":"T1","type":"code_pattern","data":{"x":1}}` + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(outside, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	plants := map[string]func(p string) error{
		"a 3 GiB file": func(p string) error {
			f, err := os.Create(p)
			if err == nil {
				err = f.Truncate(3 << 30)
				f.Close()
			}
			return err
		},
		"a link to /dev/zero":        func(p string) error { return os.Symlink("/dev/zero", p) },
		"a link to a file elsewhere": func(p string) error { return os.Symlink(filepath.Join(outside, filepath.Base(p)), p) },
		"a FIFO without a writer":    func(p string) error { return syscall.Mkfifo(p, 0o644) },
	}
	reads := map[string]func(s *Session) error{
		TasksFile:   func(s *Session) error { _, err := s.ReadTasks(); return err },
		ExploreFile: func(s *Session) error { _, err := s.ReadExplore(); return err },
		DiscoveriesFile: func(s *Session) error {
			_, err := ReadDiscoveries(s.File(DiscoveriesFile), slog.New(slog.DiscardHandler))
			return err
		},
	}
	for what, plant := range plants {
		for file, read := range reads {
			t.Run(what+" as "+file, func(t *testing.T) {
				t.Parallel()
				s := &Session{Path: t.TempDir()}
				if err := plant(s.File(file)); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- read(s) }()
				select {
				case err := <-done:
					if err == nil {
						t.Fatalf("reading %s planted as %s succeeded", file, what)
					}
					if what == "a 3 GiB file" && !errors.Is(err, safefile.ErrTooLarge) {
						t.Errorf("reading a 3 GiB %s: %v; want safefile.ErrTooLarge", file, err)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("reading %s planted as %s did not return", file, what)
				}
			})
		}
	}
}

// TestRedTeamDiscoveryAppendFollowsNoLink: a step's discovery file is in
// a folder the agent writes, and the session's board is restored from a
// state ref. An agent that puts a link there to a file elsewhere (its
// own shell profile, say) and then records a discovery gets an error, and
// the file the link leads to is unchanged; a FIFO there is refused at
// once, without waiting for a reader.
func TestRedTeamDiscoveryAppendFollowsNoLink(t *testing.T) {
	t.Parallel()
	d := Discovery{TS: "2025-01-01T00:00:00Z", Worker: "T1", Type: "code_pattern", Data: []byte(`{"x":1}`)}
	outside := filepath.Join(t.TempDir(), "profile")
	const kept = "echo kept\n"
	if err := os.WriteFile(outside, []byte(kept), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, plant := range map[string]func(p string) error{
		"a link to a file elsewhere": func(p string) error { return os.Symlink(outside, p) },
		"a link to a missing file":   func(p string) error { return os.Symlink(outside+".new", p) },
		"a FIFO without a reader":    func(p string) error { return syscall.Mkfifo(p, 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			board := filepath.Join(t.TempDir(), DiscoveriesFile)
			if err := plant(board); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- AppendDiscovery(board, d) }()
			select {
			case err := <-done:
				if err == nil {
					t.Errorf("AppendDiscovery on %s succeeded, want it refused", name)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("AppendDiscovery on %s still waiting after 10 s", name)
			}
			if b, err := os.ReadFile(outside); err != nil || string(b) != kept {
				t.Errorf("the file outside holds %q (%v), want %q unchanged", b, err, kept)
			}
			if _, err := os.Lstat(outside + ".new"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a file was created through the link: %v", err)
			}
		})
	}
	// Merging a step's discoveries into a board that is a link: refused,
	// the file elsewhere unchanged.
	linked := filepath.Join(t.TempDir(), DiscoveriesFile)
	if err := os.Symlink(outside, linked); err != nil {
		t.Fatal(err)
	}
	step := filepath.Join(t.TempDir(), "step.ndjson")
	if err := os.WriteFile(step, []byte(`{"type":"code_pattern","data":{"x":2}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := MergeDiscoveries(linked, step, "T1", time.Now(), slog.New(slog.DiscardHandler)); err == nil {
		t.Errorf("MergeDiscoveries through a link merged %d, want it refused", n)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != kept {
		t.Errorf("the file outside holds %q (%v) after a merge, want %q unchanged", b, err, kept)
	}
	// A regular board is still appended to.
	board := filepath.Join(t.TempDir(), DiscoveriesFile)
	for range 2 {
		if err := AppendDiscovery(board, d); err != nil {
			t.Fatal(err)
		}
	}
	if ds, err := ReadDiscoveries(board, slog.New(slog.DiscardHandler)); err != nil || len(ds) != 1 {
		t.Errorf("ReadDiscoveries = %d lines, %v; want 1 (duplicates dropped)", len(ds), err)
	}
}

// TestRedTeamLockFileReadBounded: the Action restores a session folder
// from a state ref, whose tree may hold a .lock of any size; taking the
// session's lock read the previous holder's file whole. A 64 MiB lock
// file (sparse: cheap to make) is read no further than the few KiB a
// holder's record takes, and the lock is still taken. Not parallel: it
// measures the process's allocations.
func TestRedTeamLockFileReadBounded(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, LockFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"pid":4242,"host":"forged"}`); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	release, stale, err := Lock(dir)
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 1<<20 {
		t.Errorf("taking the lock allocated %d bytes for a 64 MiB lock file, want under 1 MiB", got)
	}
	if stale != nil {
		t.Errorf("a 64 MiB lock file was read as holder %+v", *stale)
	}
}
