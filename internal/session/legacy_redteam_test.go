//go:build unix

package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamLegacyFolderReadBounded: a repository commits the old
// work-tree sessions folder (.workflow/.lite-plan) as it likes, and the
// user runs planex status (or --continue with no session of its own).
// A folder of many entries was read whole (a clone's million files, as
// many names held); it is counted a batch at a time, up to 1,000. A link
// there to a FIFO was refused before too (os.ReadDir opens a folder
// only), and still is: the count opens it without waiting for a writer.
func TestRedTeamLegacyFolderReadBounded(t *testing.T) {
	t.Parallel()
	t.Run("a link to a FIFO", func(t *testing.T) {
		t.Parallel()
		st := testStore(t)
		fifo := filepath.Join(t.TempDir(), "fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(st.Legacy), 0o755)
		if err := os.Symlink(fifo, st.Legacy); err != nil {
			t.Fatal(err)
		}
		done := make(chan string, 1)
		go func() { done <- st.LegacyNote() }()
		select {
		case n := <-done:
			if n != "" {
				t.Errorf("a FIFO counted as sessions: %q", n)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the note waited on the FIFO")
		}
		if _, err := Open(st, ""); err == nil || !strings.Contains(err.Error(), "no planex session") {
			t.Errorf("Open with no session: %v", err)
		}
	})
	t.Run("many entries", func(t *testing.T) {
		t.Parallel()
		st := testStore(t)
		if err := os.MkdirAll(st.Legacy, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 1500 {
			if err := os.WriteFile(filepath.Join(st.Legacy, fmt.Sprint(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if n := st.LegacyNote(); !strings.Contains(n, "(1000 or more)") {
			t.Errorf("note = %q, want the count stopped at 1000", n)
		}
	})
}
