//go:build linux

package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRedTeamGitDirStateReachedBeyondTheWalk: as
// TestRedTeamGitDirStateIsAFIFO, for the places git reads that the walk
// of the git directory did not look at: a folder of refs/ that is a link
// to a folder holding a FIFO (git lists refs through it), a loose object
// made a FIFO (reading the commit opens it), and the object store an
// alternate names, whose pack index or own alternates file is a FIFO
// (every object read lists the alternates' packs). Each hung the git
// planex ran until its context ended; every call naming the git
// directory refuses it now (ErrGitDirFileNotRegular).
func TestRedTeamGitDirStateReachedBeyondTheWalk(t *testing.T) {
	t.Parallel()
	fifo := fifoAt
	write := writeAt
	// alternate makes an object store outside the repository and names
	// it in objects/info/alternates; it returns the store.
	alternate := func(t *testing.T, r *Repo) string {
		store := filepath.Join(t.TempDir(), "objects")
		if err := os.MkdirAll(filepath.Join(store, "pack"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(r.CommonDir, "objects", "info", "alternates"), store+"\n")
		return store
	}
	packIndex := func(t *testing.T, store string) {
		name := "pack-" + strings.Repeat("0", 40)
		fifo(t, filepath.Join(store, "pack", name+".idx"))
		write(t, filepath.Join(store, "pack", name+".pack"), "")
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, r *Repo, head string)
	}{
		{"refs folder linked to a folder with a FIFO", func(t *testing.T, r *Repo, _ string) {
			target := t.TempDir()
			fifo(t, filepath.Join(target, "other"))
			if err := os.Symlink(target, filepath.Join(r.CommonDir, "refs", "heads", "linked")); err != nil {
				t.Fatal(err)
			}
		}},
		{"loose object of the head commit", func(t *testing.T, r *Repo, head string) {
			p := filepath.Join(r.CommonDir, "objects", head[:2], head[2:])
			if _, err := os.Stat(p); err != nil {
				t.Skipf("the head commit is not a loose object here: %v", err)
			}
			fifo(t, p)
		}},
		{"alternate's pack index", func(t *testing.T, r *Repo, _ string) { packIndex(t, alternate(t, r)) }},
		{"alternate's own alternates", func(t *testing.T, r *Repo, _ string) {
			fifo(t, filepath.Join(alternate(t, r), "info", "alternates"))
		}},
		{"alternate of an alternate's pack index", func(t *testing.T, r *Repo, _ string) {
			store := alternate(t, r)
			second := filepath.Join(t.TempDir(), "objects")
			write(t, filepath.Join(store, "info", "alternates"), second+"\n")
			packIndex(t, second)
		}},
		{"alternate named relative to the objects folder", func(t *testing.T, r *Repo, _ string) {
			store := filepath.Join(r.CommonDir, "other-objects")
			write(t, filepath.Join(r.CommonDir, "objects", "info", "alternates"), "../other-objects\n")
			packIndex(t, store)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, head := settledRepo(t)
			tc.plant(t, r, head)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			// Reading the head commit: refs listed, its object read (an
			// object in no pack of the repository: the alternates'
			// packs are listed too).
			_, logErr := r.Git(ctx, "", "for-each-ref", "--format=%(objectname) %(subject)")
			_, readErr := r.Git(ctx, "", "cat-file", "-e", strings.Repeat("1", 40))
			if ctx.Err() != nil {
				t.Fatalf("git waited on the FIFO: %v, %v", logErr, readErr)
			}
			if !errors.Is(logErr, ErrGitDirFileNotRegular) || !errors.Is(readErr, ErrGitDirFileNotRegular) {
				t.Errorf("for-each-ref = %v, cat-file = %v, want ErrGitDirFileNotRegular", logErr, readErr)
			}
		})
	}
}

// TestRedTeamRefsLinkToAHugeTree: a link under refs/ to a big folder
// tree (/usr, a data disk, someone's home) has no FIFO to refuse, and
// the walk that looks for FIFOs followed it whole before every git
// planex ran (the cache of clean folders, 4,096 of them, forgets all
// when full): seconds a call, for ever. The walk stops at
// maxTreeFolders and the call is refused, saying what to remove; a
// repository with many loose refs (a few thousand folders) still works.
func TestRedTeamRefsLinkToAHugeTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mkdirs := func(t *testing.T, root string, n int) {
		for i := 0; i < n; i++ {
			if err := os.MkdirAll(filepath.Join(root, strconv.Itoa(i/100), strconv.Itoa(i%100)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("a link to a tree past the bound", func(t *testing.T) {
		t.Parallel()
		r, _ := settledRepo(t)
		// Inside the git directory: a link out is refused before
		// (TestRedTeamRefsLinkToAFolderOutside).
		huge := filepath.Join(r.CommonDir, "big")
		mkdirs(t, huge, maxTreeFolders+100)
		if err := os.Symlink(huge, filepath.Join(r.CommonDir, "refs", "heads", "data")); err != nil {
			t.Fatal(err)
		}
		_, err := r.Git(ctx, "", "for-each-ref")
		if !errors.Is(err, ErrGitDirTooLarge) || !strings.Contains(err.Error(), "refs") {
			t.Errorf("for-each-ref = %v, want ErrGitDirTooLarge naming refs", err)
		}
	})
	t.Run("many loose refs' folders", func(t *testing.T) {
		t.Parallel()
		r, _ := settledRepo(t)
		mkdirs(t, filepath.Join(r.CommonDir, "refs", "pull"), 3000)
		if _, err := r.Git(ctx, "", "for-each-ref"); err != nil {
			t.Errorf("for-each-ref with 3,000 empty ref folders: %v", err)
		}
	})
}
