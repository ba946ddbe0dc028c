package session

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testStore is a store of a work tree and git directory of their own.
func testStore(t *testing.T) Store {
	t.Helper()
	wt := t.TempDir()
	gitDir := filepath.Join(wt, ".git")
	if err := os.Mkdir(gitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return StoreFor(wt, gitDir)
}

func editMeta(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestStoreKeepsSessionsInTheGitDirectory(t *testing.T) {
	t.Parallel()
	st := testStore(t)
	s, err := Create(st, Meta{ID: "a", Created: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(s.Path) != st.Dir || !strings.Contains(st.Dir, filepath.Join(".git", "planex", "sessions")) {
		t.Fatalf("session at %s, store %s", s.Path, st.Dir)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(st.Legacy), ".workflow")); !os.IsNotExist(err) {
		t.Fatalf("the work tree got a .workflow folder: %v", err)
	}
	for path, want := range map[string]os.FileMode{st.private: 0o700, st.Dir: 0o700, s.Path: 0o700, st.keyPath: 0o600, s.File(MetaFile): 0o600} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", path, fi.Mode(), err, want)
		}
	}
	// A later save keeps it trusted.
	s.Meta.Summary = "changed by planex"
	if err := s.SaveMeta(); err != nil {
		t.Fatal(err)
	}
	if got, err := Open(st, "a"); err != nil || got.Meta.Summary != "changed by planex" {
		t.Fatalf("Open after save = %v, %v", got, err)
	}
}

// TestOpenRefusesSessionsNotMadeHere is the class of attacks on resuming:
// a session a repository carries, one copied from another clone, one
// edited by hand or by an agent, one reached through a symlink.
func TestOpenRefusesSessionsNotMadeHere(t *testing.T) {
	t.Parallel()
	approved := Meta{ID: "s", Requirement: "x", Created: time.Now().Add(365 * 24 * time.Hour),
		Approved: map[Gate]bool{GateAngles: true, GateTasks: true}, PlanHash: "abc", AutoApprove: true}
	cases := []struct {
		name    string
		arrange func(t *testing.T, st Store) // leaves a session "s" to open
		reason  string
	}{
		{"committed to the work tree's old folder", func(t *testing.T, st Store) {
			dir := filepath.Join(st.Legacy, "s")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(approved)
			os.WriteFile(filepath.Join(dir, MetaFile), b, 0o644)
		}, "lies in the work tree"},
		{"session.json copied from another clone", func(t *testing.T, st Store) {
			other := testStore(t)
			o, err := Create(other, approved)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Create(st, Meta{ID: "s"}); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(o.File(MetaFile))
			os.WriteFile(filepath.Join(st.Dir, "s", MetaFile), b, 0o600)
		}, "seal does not match"},
		{"approval added by an edit", func(t *testing.T, st Store) {
			s, err := Create(st, Meta{ID: "s"})
			if err != nil {
				t.Fatal(err)
			}
			editMeta(t, s.File(MetaFile), func(m map[string]any) {
				m["approved"] = map[string]bool{"tasks": true}
				m["auto_approve"] = true
			})
		}, "seal does not match"},
		{"seal removed", func(t *testing.T, st Store) {
			s, _ := Create(st, Meta{ID: "s"})
			editMeta(t, s.File(MetaFile), func(m map[string]any) { delete(m, "seal") })
		}, "seal does not match"},
		{"sealed under another folder name", func(t *testing.T, st Store) {
			o, _ := Create(st, Meta{ID: "other"})
			os.Mkdir(filepath.Join(st.Dir, "s"), 0o700)
			b, _ := os.ReadFile(o.File(MetaFile))
			os.WriteFile(filepath.Join(st.Dir, "s", MetaFile), b, 0o600)
		}, "seal does not match"},
		{"session folder is a symlink", func(t *testing.T, st Store) {
			o, _ := Create(st, Meta{ID: "other"})
			os.Symlink(o.Path, filepath.Join(st.Dir, "s"))
		}, "is a symlink"},
		{"sessions folder is a symlink", func(t *testing.T, st Store) {
			elsewhere := t.TempDir()
			os.MkdirAll(st.private, 0o700)
			os.Symlink(elsewhere, st.Dir)
			os.Mkdir(filepath.Join(elsewhere, "s"), 0o700)
			os.WriteFile(filepath.Join(elsewhere, "s", MetaFile), []byte("{}"), 0o600)
		}, "is a symlink"},
		{"session.json is a symlink", func(t *testing.T, st Store) {
			o, _ := Create(st, Meta{ID: "o"})
			os.Mkdir(filepath.Join(st.Dir, "s"), 0o700)
			os.Symlink(o.File(MetaFile), filepath.Join(st.Dir, "s", MetaFile))
		}, "it is a symlink"},
		{"no key on this machine", func(t *testing.T, st Store) {
			s, _ := Create(st, Meta{ID: "s"})
			os.Remove(st.keyPath)
			_ = s
		}, "no session key"},
		{"key readable by others", func(t *testing.T, st Store) {
			Create(st, Meta{ID: "s"})
			os.Chmod(st.keyPath, 0o644)
		}, "mode 0600"},
		{"key replaced by a symlink", func(t *testing.T, st Store) {
			Create(st, Meta{ID: "s"})
			other := testStore(t)
			Create(other, Meta{ID: "x"})
			os.Remove(st.keyPath)
			os.Symlink(other.keyPath, st.keyPath)
		}, "key is a symlink"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := testStore(t)
			c.arrange(t, st)
			for _, id := range []string{"s", ""} {
				s, err := Open(st, id)
				if id == "" && c.name != "committed to the work tree's old folder" {
					continue // the newest may be another session of the case
				}
				if err == nil {
					t.Fatalf("Open(%q) trusted %+v", id, s.Meta)
				}
				var ue *UntrustedError
				if !errors.Is(err, ErrUntrusted) || !errors.As(err, &ue) {
					t.Fatalf("Open(%q) = %v, want an UntrustedError", id, err)
				}
				if !matchesAny(err.Error(), c.reason) || !strings.Contains(err.Error(), ue.Path) || ue.Path == "" {
					t.Fatalf("Open(%q) = %v, want a reason %q and the path", id, err, c.reason)
				}
			}
		})
	}
}

func matchesAny(s, alternatives string) bool {
	for _, a := range strings.Split(alternatives, "|") {
		if strings.Contains(s, a) {
			return true
		}
	}
	return false
}

// copyMetaAs makes session id's folder in st and copies o's session.json
// into it as it stands, as a restore from another runner's state does.
func copyMetaAs(t *testing.T, st Store, id string, o *Session) {
	t.Helper()
	dir, err := st.Folder(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(o.File(MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, MetaFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAdoptReseals: the Action's restore makes a session from its state
// ref this runner's, and nothing else does.
func TestAdoptReseals(t *testing.T) {
	t.Parallel()
	other, st := testStore(t), testStore(t)
	o, err := Create(other, Meta{ID: "s", Requirement: "r"})
	if err != nil {
		t.Fatal(err)
	}
	copyMetaAs(t, st, "s", o)
	if _, err := Open(st, "s"); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("before Adopt: %v", err)
	}
	if err := Adopt(st, "s"); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(st, "s"); err != nil || s.Meta.Requirement != "r" {
		t.Fatalf("after Adopt: %v, %v", s, err)
	}
	if _, err := st.Folder("../x"); err == nil {
		t.Fatal("Folder accepted a path")
	}
}

func TestStatusNoteNamesLegacySessions(t *testing.T) {
	t.Parallel()
	st := testStore(t)
	if n := st.LegacyNote(); n != "" {
		t.Fatalf("note without legacy sessions: %q", n)
	}
	os.MkdirAll(filepath.Join(st.Legacy, "old-run"), 0o755)
	if n := st.LegacyNote(); !strings.Contains(n, st.Legacy) || !strings.Contains(n, "never resumed") {
		t.Fatalf("note = %q", n)
	}
}
