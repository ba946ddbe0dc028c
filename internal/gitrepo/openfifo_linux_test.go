//go:build linux

package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamOpenRepoWithFIFOState: whoever could write the checkout's
// git directory before planex started (an earlier agent without the
// sandbox on a self-hosted runner that keeps its workspace) makes its
// config a FIFO, or, the checkout's .git being a file naming its git
// directory, that directory's commondir a FIFO or a link to /dev/zero.
// The first git planex runs there, to find the repository, names no git
// directory, so the checks of later calls did not cover it: Open waited
// (or read /dev/zero) until its context ended. Open refuses them now.
func TestRedTeamOpenRepoWithFIFOState(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want error
	}{
		{"config", ErrConfigNotAFile},
		{"commondir FIFO", ErrGitDirFileNotRegular},
		{"commondir /dev/zero", ErrGitDirFileNotRegular},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			gitDir := filepath.Join(r.Root, ".git")
			switch tc.name {
			case "config":
				p := filepath.Join(gitDir, tc.name)
				os.Remove(p)
				if err := syscall.Mkfifo(p, 0o600); err != nil {
					t.Fatal(err)
				}
			default:
				// The checkout's .git is a file naming its git directory.
				moved := filepath.Join(t.TempDir(), "gitdir")
				if err := os.Rename(gitDir, moved); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(gitDir, []byte("gitdir: "+moved+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				common := filepath.Join(moved, "commondir")
				if tc.name == "commondir FIFO" {
					if err := syscall.Mkfifo(common, 0o600); err != nil {
						t.Fatal(err)
					}
				} else if err := os.Symlink("/dev/zero", common); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := Open(ctx, r.Root)
			if ctx.Err() != nil {
				t.Fatalf("Open waited on the git directory: %v", err)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("Open = %v, want %v", err, tc.want)
			}
		})
	}
}
