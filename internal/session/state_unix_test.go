//go:build unix

package session

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
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
