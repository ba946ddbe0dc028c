//go:build unix

package clis

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestAboveConfigOwners: the .gemini/.env files found above a step's
// folder, and whether a step without the sandbox may run below them: a
// file, its folder or a link's target of another uid's refuses the step;
// the user's own and root's do not. Giving files away needs root.
func TestAboveConfigOwners(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root, to give files to another uid")
	}
	const other = 4243
	mk := func(t *testing.T, p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("X=1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name    string
		plant   func(t *testing.T, top string)
		refused bool
	}{
		{"none", func(*testing.T, string) {}, false},
		{"own file", func(t *testing.T, top string) { mk(t, filepath.Join(top, ".gemini", ".env")) }, false},
		{"another user's file", func(t *testing.T, top string) {
			p := filepath.Join(top, ".gemini", ".env")
			mk(t, p)
			if err := os.Chown(p, other, other); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"another user's folder", func(t *testing.T, top string) {
			p := filepath.Join(top, ".gemini", ".env")
			mk(t, p)
			if err := os.Chown(filepath.Dir(p), other, other); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"link to another user's file", func(t *testing.T, top string) {
			target := filepath.Join(top, "elsewhere", "theirs.env")
			mk(t, target)
			if err := os.Chown(target, other, other); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(top, ".gemini"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(top, ".gemini", ".env")); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			top := t.TempDir()
			step := filepath.Join(top, "planex-x", "s.T1")
			if err := os.MkdirAll(step, 0o755); err != nil {
				t.Fatal(err)
			}
			// The step's own .gemini is the repository's (projectConfig), not above it.
			mk(t, filepath.Join(step, ".gemini", ".env"))
			c.plant(t, top)
			found := abovePaths(step, []string{".gemini/.env"})
			for _, f := range found {
				if f[len(f)-1] == filepath.Join(step, ".gemini", ".env") {
					t.Errorf("the step's own .gemini/.env is counted as above it")
				}
			}
			if c.name != "none" && !slices.Contains(lastOf(found), filepath.Join(top, ".gemini", ".env")) {
				t.Errorf("the planted file is not found: %v", found)
			}
			err := ownedHere(found, os.Getuid())
			if got := errors.Is(err, ErrForeignConfig); got != c.refused {
				t.Errorf("refused = %v (%v), want %v", got, err, c.refused)
			}
		})
	}
}
