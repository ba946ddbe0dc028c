//go:build unix

package session

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamKeyFileNotARegularFile: the session key replaced by a FIFO
// (whose open would wait for a writer forever) or a huge file: opening
// and creating sessions refuse it at once, with ErrUntrusted.
func TestRedTeamKeyFileNotARegularFile(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T, path string){
		"a FIFO": func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
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
