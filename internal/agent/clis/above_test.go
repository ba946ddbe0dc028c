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

// nearestGeminiEnv is the .gemini/.env Gemini CLI reads for a working
// directory (a trusted folder): the nearest one of the folders from dir
// up to /.
func nearestGeminiEnv(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".gemini", ".env")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// TestAboveConfigRace: another user waits until planex has looked above
// a step's folder and only then puts a .gemini/.env in a folder every
// user may write (as /tmp, above every task worktree). Gemini CLI,
// started after the check, must still read no file of theirs.
func TestAboveConfigRace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// step is below top; shared is the folder others may write.
		step, shared string
		own          string // a .gemini/.env of the user's above the step, "" for none
		wantRead     string // the file Gemini reads, below top; "" when the step is refused
	}{
		{"a plant in a shared folder after the check", "shared/planex-x/s.T1", "shared", "", "shared/planex-x/.gemini/.env"},
		{"a plant in the shared folder holding the working directory", "shared/s.T1", "shared", "", ""},
		{"the user's own file nearer than the shared folder", "shared/own/planex-x/s.T1", "shared", "shared/own/.gemini/.env", "shared/own/.gemini/.env"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			top := t.TempDir()
			step := filepath.Join(top, c.step)
			if err := os.MkdirAll(step, 0o755); err != nil {
				t.Fatal(err)
			}
			shared := filepath.Join(top, c.shared)
			if err := os.Chmod(shared, 0o1777); err != nil {
				t.Fatal(err)
			}
			if c.own != "" {
				p := filepath.Join(top, c.own)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("OWN=1\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			rel := []string{".gemini/.env"}
			found := abovePaths(step, rel)
			if err := ownedHere(found, os.Getuid()); err != nil {
				t.Fatalf("nothing foreign is there yet: %v", err)
			}
			err := shutAbove(step, rel, os.Getuid())
			if c.wantRead == "" {
				if !errors.Is(err, ErrForeignConfig) {
					t.Fatalf("the step in a shared folder was not refused: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Now the other user plants theirs.
			planted := filepath.Join(shared, ".gemini", ".env")
			if err := os.MkdirAll(filepath.Dir(planted), 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(planted, []byte("GEMINI_SYSTEM_MD=/tmp/evil.md\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			got := nearestGeminiEnv(step)
			if want := filepath.Join(top, c.wantRead); got != want {
				t.Fatalf("Gemini CLI reads %s, want %s", got, want)
			}
			if c.own != "" {
				return
			}
			fi, err := os.Stat(got)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
				t.Errorf("the file planex placed is %d bytes, mode %v: want empty, 0600", fi.Size(), fi.Mode().Perm())
			}
		})
	}
}
