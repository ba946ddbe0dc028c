//go:build unix

package session

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamMergeDiscoveriesReadsOnlyARegularFile: a step that replaces
// its discoveries file with a FIFO (which would block planex forever), a
// link to /dev/zero or a link to another file adds nothing and does not
// hang planex.
func TestRedTeamMergeDiscoveriesReadsOnlyARegularFile(t *testing.T) {
	t.Parallel()
	cases := map[string]func(p string) error{
		"a FIFO":               func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"a link to /dev/zero":  func(p string) error { return os.Symlink("/dev/zero", p) },
		"a link to a good one": func(p string) error { return os.Symlink(filepath.Join(filepath.Dir(p), "good.ndjson"), p) },
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			good := `{"ts":"2025-01-01T00:00:00Z","worker":"T1","type":"code_pattern","data":{"x":1}}` + "\n"
			if err := os.WriteFile(filepath.Join(dir, "good.ndjson"), []byte(good), 0o644); err != nil {
				t.Fatal(err)
			}
			from, board := filepath.Join(dir, "step.ndjson"), filepath.Join(dir, "board.ndjson")
			if err := plant(from); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			var n int
			var err error
			go func() {
				n, err = MergeDiscoveries(board, from, "T1", time.Now(), slog.New(slog.DiscardHandler))
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("MergeDiscoveries is still waiting")
			}
			if n != 0 || err == nil || !strings.Contains(err.Error(), "reading the step's discoveries") {
				t.Errorf("MergeDiscoveries = %d, %v; want nothing added and an error", n, err)
			}
		})
	}
}
