//go:build unix

package gitrepo

import (
	"bytes"
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

// TestRedTeamSaveReadsNoLinkedFolderSwappedIn: as
// TestRedTeamSaveReadsNoLinkSwappedIn, one folder up: the session folder
// holds sub/credentials, a file of its own, when the save lists it; then
// sub is replaced by a link to a runner folder holding a file of that name
// (the runner's credentials), or a link naming that folder by a path
// through the session folder's parent. The save opened each listed file
// refusing a link only as its last part, so it read the runner's file
// through the linked folder into the state commit, which is pushed where
// whoever can read the repository reads it. Each file is now opened
// beneath the session folder with no link leading out of it.
func TestRedTeamSaveReadsNoLinkedFolderSwappedIn(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"absolute", "relative"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			dir, outside := filepath.Join(parent, "session"), filepath.Join(parent, "runner")
			for _, d := range []string{filepath.Join(dir, "sub"), outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(outside, "credentials"), []byte("token-of-the-runner"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "sub", "credentials"), []byte("{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			files, err := stateFiles(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
				t.Fatal(err)
			}
			target := outside
			if how == "relative" {
				target = filepath.Join("..", "runner")
			}
			if err := os.Symlink(target, filepath.Join(dir, "sub")); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err = writeStateStream(&out, dir, "refs/planex/state/1", Saved{}, files, "planex", "p@x", "state", time.Unix(0, 0))
			if err == nil {
				t.Error("the stream was written through a folder swapped for a link")
			}
			if bytes.Contains(out.Bytes(), []byte("token-of-the-runner")) {
				t.Error("the runner file behind the linked folder went into the stream")
			}
		})
	}
}

// TestRedTeamRestoreThroughAFolderSwappedIn: the restore makes (or finds)
// each folder of a state's path and refuses a link there
// (TestRedTeamRestoreThroughALinkedFolder); a folder of the session
// folder swapped for a link to a runner folder after that check and
// before the file is written (absolute, or ../runner) had the file
// written through it, outside the session folder. Each write is now made
// beneath the session folder.
func TestRedTeamRestoreThroughAFolderSwappedIn(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"absolute", "relative"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			dir, outside := filepath.Join(parent, "session"), filepath.Join(parent, "runner")
			for _, d := range []string{dir, outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			if err := folderInside(root, "sub/record.json"); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "sub")); err != nil {
				t.Fatal(err)
			}
			target := outside
			if how == "relative" {
				target = filepath.Join("..", "runner")
			}
			if err := os.Symlink(target, filepath.Join(dir, "sub")); err != nil {
				t.Fatal(err)
			}
			err = writeRestored(root, "sub/record.json", strings.NewReader("forged\n"), 7, 0o644)
			if err == nil {
				t.Error("the file was written through a folder swapped for a link")
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("the restore wrote %s into the runner folder", ents[0].Name())
			}
		})
	}
}
