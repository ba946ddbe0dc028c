//go:build unix

package clis

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
			err := shutAbove(step, rel, os.Getuid(), os.Getgid())
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

// TestAboveSharedFolder: which folders other users may add entries to,
// for user 1000 of primary group 1000. A folder writable by its group
// counts as shared unless it is the user's own with the user's own
// (user-private) group.
func TestAboveSharedFolder(t *testing.T) {
	t.Parallel()
	const uid, gid = 1000, 1000
	for _, c := range []struct {
		name         string
		perm         fs.FileMode
		owner, group int
		shared       bool
	}{
		{"own folder", 0o755, uid, gid, false},
		{"own folder, writable by the user's private group", 0o775, uid, gid, false},
		{"own folder, writable by the user's private group only", 0o770, uid, gid, false},
		{"own folder, writable by another group", 0o775, uid, 2000, true},
		{"root's folder, writable by the user's group", 0o775, 0, gid, true},
		{"root's folder, writable by another group", 0o775, 0, 2000, true},
		{"another user's folder with the user's group", 0o775, 4243, gid, true},
		{"another user's folder, not writable by its group", 0o755, 4243, gid, true},
		{"own folder, writable by all", 0o777, uid, gid, true},
		{"root's folder", 0o755, 0, 0, false},
		{"/tmp", 0o777 | fs.ModeSticky, 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := sharedFolder(c.perm.Perm(), c.owner, c.group, uid, gid); got != c.shared {
				t.Errorf("sharedFolder(%v, owner %d, group %d) = %v, want %v", c.perm, c.owner, c.group, got, c.shared)
			}
		})
	}
}

// TestAboveGroupWritableRace: a member of a folder's group (not the
// user) waits until planex has shut the folders above a step and then
// puts a .gemini/.env in a folder its group may write. Gemini CLI must
// still read planex's empty file; a folder whose group is the user's
// own private one is not shared and gets no file below it. Giving a
// folder to another group needs root.
func TestAboveGroupWritableRace(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root, to give a folder to another uid and gid")
	}
	const other = 4243
	for _, c := range []struct {
		name         string
		owner, group int
		shared       bool
	}{
		{"another user's group-writable folder with our group", other, os.Getgid(), true},
		{"our group-writable folder with another group", os.Getuid(), other, true},
		{"our group-writable folder with our private group", os.Getuid(), os.Getgid(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			top := t.TempDir()
			group := filepath.Join(top, "group")
			step := filepath.Join(group, "planex-x", "s.T1")
			if err := os.MkdirAll(step, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(group, c.owner, c.group); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(group, 0o775); err != nil {
				t.Fatal(err)
			}
			rel := []string{".gemini/.env"}
			if err := shutAbove(step, rel, os.Getuid(), os.Getgid()); err != nil {
				t.Fatal(err)
			}
			placed := filepath.Join(group, "planex-x", ".gemini", ".env")
			if !c.shared {
				if _, err := os.Lstat(placed); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("a folder only the user's private group may write was treated as shared: %s (%v)", placed, err)
				}
				return
			}
			// Now the group member plants theirs.
			planted := filepath.Join(group, ".gemini", ".env")
			if err := os.MkdirAll(filepath.Dir(planted), 0o775); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(planted, []byte("GEMINI_SYSTEM_MD=/tmp/evil.md\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := nearestGeminiEnv(step); got != placed {
				t.Fatalf("Gemini CLI reads %s, want planex's %s", got, placed)
			}
		})
	}
}

// TestAbovePlaceEmptyExisting: another user got into the folder where
// planex puts its empty .gemini/.env first (between planex's look and
// its placing, or through a group's write) and left a folder, a file or
// a link there. planex keeps only a folder and an empty file of the
// user's own that nobody else may write; anything else refuses the step
// with an error naming the path and its owner, and nothing is written
// where a link leads. Rows with another uid's files need root.
func TestAbovePlaceEmptyExisting(t *testing.T) {
	t.Parallel()
	const other = 4243
	type paths struct{ dir, gemini, env, elsewhere string }
	write := func(t *testing.T, p, text string, perm fs.FileMode) {
		t.Helper()
		if err := os.WriteFile(p, []byte(text), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	mkdir := func(t *testing.T, p string, perm fs.FileMode) {
		t.Helper()
		if err := os.Mkdir(p, perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
	}
	chown := func(t *testing.T, p string) {
		t.Helper()
		if err := os.Lchown(p, other, other); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name      string
		needsRoot bool
		plant     func(t *testing.T, p paths)
		refused   string // the path the error must name, from p; "" when kept
		owner     int    // the owner the error must name, when refused
	}{
		{"nothing there", false, func(*testing.T, paths) {}, "", 0},
		{"the user's own empty file", false, func(t *testing.T, p paths) {
			mkdir(t, p.gemini, 0o700)
			write(t, p.env, "", 0o600)
		}, "", 0},
		{"another user's .gemini folder", true, func(t *testing.T, p paths) {
			mkdir(t, p.gemini, 0o755)
			chown(t, p.gemini)
		}, "gemini", other},
		{"another user's empty .env", true, func(t *testing.T, p paths) {
			mkdir(t, p.gemini, 0o700)
			write(t, p.env, "", 0o600)
			chown(t, p.env)
		}, "env", other},
		{"a link at .gemini to a folder elsewhere", false, func(t *testing.T, p paths) {
			if err := os.Symlink(p.elsewhere, p.gemini); err != nil {
				t.Fatal(err)
			}
		}, "gemini", os.Getuid()},
		{"a link at .env to a file elsewhere", false, func(t *testing.T, p paths) {
			mkdir(t, p.gemini, 0o700)
			if err := os.Symlink(filepath.Join(p.elsewhere, "theirs.env"), p.env); err != nil {
				t.Fatal(err)
			}
		}, "env", os.Getuid()},
		{"the user's own non-empty .env", false, func(t *testing.T, p paths) {
			mkdir(t, p.gemini, 0o700)
			write(t, p.env, "GEMINI_SYSTEM_MD=/tmp/evil.md\n", 0o600)
		}, "env", os.Getuid()},
		{"the user's own empty .env writable by all", false, func(t *testing.T, p paths) {
			mkdir(t, p.gemini, 0o700)
			write(t, p.env, "", 0o666)
		}, "env", os.Getuid()},
		{"the user's own .gemini writable by all", false, func(t *testing.T, p paths) {
			mkdir(t, p.gemini, 0o777)
		}, "gemini", os.Getuid()},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.needsRoot && os.Getuid() != 0 {
				t.Skip("needs root, to give a file to another uid")
			}
			top := t.TempDir()
			p := paths{dir: filepath.Join(top, "planex-x"), elsewhere: filepath.Join(top, "elsewhere")}
			p.gemini = filepath.Join(p.dir, ".gemini")
			p.env = filepath.Join(p.gemini, ".env")
			mkdir(t, p.dir, 0o755)
			mkdir(t, p.elsewhere, 0o755)
			write(t, filepath.Join(p.elsewhere, "theirs.env"), "X=1\n", 0o644)
			c.plant(t, p)
			err := placeEmpty(p.dir, []string{".gemini/.env"}, os.Getuid(), os.Getgid())
			if c.refused != "" {
				want := map[string]string{"gemini": p.gemini, "env": p.env}[c.refused]
				if !errors.Is(err, ErrForeignConfig) {
					t.Fatalf("what another user could have left at %s was kept: %v", want, err)
				}
				if msg := err.Error(); !strings.Contains(msg, want) || !strings.Contains(msg, "uid "+strconv.Itoa(c.owner)) {
					t.Errorf("the error does not name %s and uid %d: %v", want, c.owner, err)
				}
				entries, err := os.ReadDir(p.elsewhere)
				if err != nil {
					t.Fatal(err)
				}
				if len(entries) != 1 {
					t.Errorf("something was created where a link leads: %v", entries)
				}
				if b, err := os.ReadFile(filepath.Join(p.elsewhere, "theirs.env")); err != nil || string(b) != "X=1\n" {
					t.Errorf("the file a link leads to changed: %q, %v", b, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for q, perm := range map[string]fs.FileMode{p.gemini: fs.ModeDir | 0o700, p.env: 0o600} {
				fi, err := os.Lstat(q)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode() != perm || !fi.IsDir() && fi.Size() != 0 {
					t.Errorf("%s is %d bytes, mode %v: want mode %v, empty", q, fi.Size(), fi.Mode(), perm)
				}
			}
		})
	}
}
