package safefile

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWriteTable: Write sets the mode asked for whatever was there, puts
// a regular file in place of a link (never writing through it), and when
// it cannot replace the target says which file and leaves nothing behind.
func TestWriteTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, dir, p string)
		perm  os.FileMode
		want  string // error holding this, or "" for success
	}{
		{name: "new file", perm: 0o600},
		{name: "narrows an existing file's mode", perm: 0o600, setup: func(t *testing.T, _, p string) {
			must(t, os.WriteFile(p, []byte("old"), 0o666))
			must(t, os.Chmod(p, 0o666))
		}},
		{name: "widens it too", perm: 0o644, setup: func(t *testing.T, _, p string) { must(t, os.WriteFile(p, []byte("old"), 0o600)) }},
		{name: "a link is replaced, not followed", perm: 0o644, setup: func(t *testing.T, dir, p string) {
			victim := filepath.Join(dir, "victim")
			must(t, os.WriteFile(victim, []byte("keep me"), 0o644))
			must(t, os.Symlink(victim, p))
		}},
		{name: "a folder in the way", perm: 0o644, want: "replacing ", setup: func(t *testing.T, _, p string) {
			must(t, os.Mkdir(p, 0o755))
			must(t, os.WriteFile(filepath.Join(p, "inside"), []byte("x"), 0o644))
		}},
		{name: "folder missing", perm: 0o644, want: "writing ", setup: func(t *testing.T, dir, p string) { must(t, os.Remove(dir)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "d")
			must(t, os.Mkdir(dir, 0o755))
			p := filepath.Join(dir, "state.json")
			if tc.setup != nil {
				tc.setup(t, dir, p)
			}
			err := Write(p, []byte(`{"ok":true}`), tc.perm)
			if tc.want != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.want+p+": ") {
					t.Fatalf("Write = %v, want an error starting %q", err, tc.want+p)
				}
				if tmp, _ := filepath.Glob(filepath.Join(dir, ".state.json.tmp-*")); len(tmp) > 0 {
					t.Errorf("a failed Write left %v", tmp)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(p)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != tc.perm {
				t.Fatalf("after Write: %v, %v; want a regular file of mode %v", fi.Mode(), err, tc.perm)
			}
			if b, _ := os.ReadFile(p); string(b) != `{"ok":true}` {
				t.Errorf("content %q", b)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "victim")); err == nil && string(b) != "keep me" {
				t.Errorf("Write wrote through a link: the target now holds %q", b)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if e.Name() != "state.json" && e.Name() != "victim" {
					t.Errorf("left behind %s", e.Name())
				}
			}
		})
	}
}

// TestWriteReadersSeeWholeFiles: however writers and readers interleave,
// a reader sees one writer's whole file, never a mix or a part.
func TestWriteReadersSeeWholeFiles(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "tasks.csv")
	contents := [][]byte{bytes.Repeat([]byte("a"), 256<<10), bytes.Repeat([]byte("b"), 64<<10), []byte("c")}
	must(t, Write(p, contents[0], 0o644))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range contents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := Write(p, c, 0o644); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	reads := 0
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		whole := false
		for _, c := range contents {
			whole = whole || bytes.Equal(b, c)
		}
		if !whole {
			t.Fatalf("a reader saw %d bytes that no writer wrote whole", len(b))
		}
		reads++
	}
	close(stop)
	wg.Wait()
	if reads == 0 {
		t.Fatal("no read happened")
	}
}

// TestTryLock: a second holder (another open of the file, as another
// process would have) is refused without waiting until the first
// unlocks or closes; a file that is not open is an error, not a refusal.
func TestTryLock(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|NoFollow, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := open(), open()
	defer b.Close()
	steps := []struct {
		name string
		f    *os.File
		want bool
		then func()
	}{
		{"first holder", a, true, nil},
		{"second while held", b, false, func() { must(t, Unlock(a)) }},
		{"second after unlock", b, true, nil},
		{"first while the second holds", a, false, func() { b.Close() }},
		{"first after the second closed", a, true, nil},
	}
	for _, s := range steps {
		start := time.Now()
		got, err := TryLock(s.f)
		if err != nil || got != s.want {
			t.Fatalf("%s: TryLock = %v, %v; want %v", s.name, got, err, s.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: TryLock waited %v", s.name, d)
		}
		if s.then != nil {
			s.then()
		}
	}
	a.Close()
	if ok, err := TryLock(a); ok || err == nil {
		t.Errorf("TryLock on a closed file = %v, %v; want an error", ok, err)
	}
	if err := Unlock(a); err == nil {
		t.Error("Unlock on a closed file reported success")
	}
	if runtime.GOOS != "windows" {
		link := p + ".link"
		must(t, os.Symlink(p, link))
		if _, err := os.OpenFile(link, os.O_RDWR|NoFollow, 0); err == nil {
			t.Error("NoFollow opened a symbolic link")
		}
	}
}

type fakeInfo struct{ fs.FileInfo }

func (fakeInfo) Sys() any { return nil }

// TestOwner: a real file's owner is this process's uid; a FileInfo that
// carries no system data has none.
func TestOwner(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("files have no uid on Windows")
	}
	fi, err := os.Stat(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if uid, ok := Owner(fi); !ok || uid != os.Getuid() {
		t.Errorf("Owner = %d, %v; want %d", uid, ok, os.Getuid())
	}
	if _, ok := Owner(fakeInfo{fi}); ok {
		t.Error("Owner of a synthetic FileInfo reported a uid")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
