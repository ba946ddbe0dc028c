//go:build unix

package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSaveOnRefusesWhatIsNotAFile: a state folder holding a link, or a
// FIFO nobody writes, is refused naming it (ErrStateNotFiles), at once:
// a FIFO read as a file would hang the save, and a link's target (any
// file of the runner) would be committed and pushed.
func TestSaveOnRefusesWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		make func(t *testing.T, p string)
	}{
		{"link to a runner file", func(t *testing.T, p string) {
			if err := os.Symlink("/etc/hostname", p); err != nil {
				t.Fatal(err)
			}
		}},
		{"FIFO", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("no FIFO here:", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r := newFormatRepo(t, SHA1)
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "record.json"), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(dir, "planted")
			c.make(t, bad)
			_, err := StateAt(r, "refs/planex/state/1").SaveOn(ctx, Saved{}, dir, "planex: state")
			if !errors.Is(err, ErrStateNotFiles) || !strings.Contains(err.Error(), bad) {
				t.Fatalf("SaveOn = %v, want ErrStateNotFiles naming %s", err, bad)
			}
			if ctx.Err() != nil {
				t.Fatal("the save waited on the planted file")
			}
			if got, _ := StateAt(r, "refs/planex/state/1").Read(ctx); got.Commit != "" {
				t.Errorf("a refused save set the ref to %s", got.Commit)
			}
		})
	}
}
