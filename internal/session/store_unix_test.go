//go:build unix

package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamKeyFileNotARegularFile: the session key replaced by a FIFO
// (whose open would wait for a writer forever), a symlink to a key of
// someone's choosing or a huge file: opening
// and creating sessions refuse it at once, with ErrUntrusted.
func TestRedTeamKeyFileNotARegularFile(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T, path string){
		"a FIFO": func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"a symlink to a key": func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(other, []byte(strings.Repeat("ab", keyLen)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		},
		"a huge file": func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(8 << 30); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, arrange := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := testStore(t)
			if _, err := Create(st, Meta{ID: "s"}); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(st.keyPath); err != nil {
				t.Fatal(err)
			}
			arrange(t, st.keyPath)
			for op, call := range map[string]func() error{
				"open":   func() error { _, err := Open(st, "s"); return err },
				"create": func() error { _, err := Create(st, Meta{ID: "t"}); return err },
				"adopt":  func() error { return Adopt(st, "s") },
			} {
				done := make(chan error, 1)
				go func() { done <- call() }()
				select {
				case err := <-done:
					if !errors.Is(err, ErrUntrusted) {
						t.Errorf("%s with the key as %s: %v, want ErrUntrusted", op, name, err)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s with the key as %s still waits after 10s", op, name)
				}
			}
		})
	}
}

// TestRedTeamPrivateFolderSwappedForALink: <git dir>/planex replaced by a
// symlink to a folder holding a key and sessions of someone's choosing:
// neither creating, opening nor adopting a session goes through it.
func TestRedTeamPrivateFolderSwappedForALink(t *testing.T) {
	t.Parallel()
	st := testStore(t)
	if _, err := Create(st, Meta{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "planex")
	if err := os.Rename(st.private, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, st.private); err != nil {
		t.Fatal(err)
	}
	for op, call := range map[string]func() error{
		"open":   func() error { _, err := Open(st, "s"); return err },
		"create": func() error { _, err := Create(st, Meta{ID: "t"}); return err },
		"adopt":  func() error { return Adopt(st, "s") },
	} {
		if err := call(); !errors.Is(err, ErrUntrusted) {
			t.Errorf("%s through a linked private folder: %v, want ErrUntrusted", op, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, "sessions", "t")); err == nil {
		t.Error("a session was created in the linked folder")
	}
}
