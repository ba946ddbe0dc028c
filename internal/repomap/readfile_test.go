//go:build unix

package repomap

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestReadRegular checks what a single O_NOFOLLOW open and fstat let
// through: regular files only, and a FIFO (which an agent can create in a
// work tree) is skipped without blocking the open.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	repomaptest.WriteFiles(t, dir, map[string]string{"ok.py": "x = 1\n", "big.txt": "0123456789", "sub/keep": ""})
	ok := filepath.Join(dir, "ok.py")
	if err := os.Symlink(ok, filepath.Join(dir, "link.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 2) // smaller than ok.py: reading must grow it
	for _, tc := range []struct {
		name, skip, data string
	}{
		{"ok.py", "", "x = 1\n"},
		{"big.txt", "too large", ""},
		{"link.py", "symlink", ""},
		{"linkdir/keep", "symlink", ""},
		{"../" + filepath.Base(dir) + "/ok.py", "outside the repository", ""},
		{"fifo", "not a regular file", ""},
		{"sub", "not a regular file", ""},
		{"gone.py", "unreadable", ""},
	} {
		data, size, skip, err := ReadRegular(buf, dir, tc.name, 9)
		if skip != tc.skip {
			t.Errorf("%s: skip %q (err %v), want %q", filepath.Base(tc.name), skip, err, tc.skip)
		}
		if tc.skip == "" && (string(data) != tc.data || size != int64(len(tc.data)) || err != nil) {
			t.Errorf("%s: read %q, size %d, err %v; want %q", filepath.Base(tc.name), data, size, err, tc.data)
		}
		if tc.skip == "unreadable" && err == nil {
			t.Errorf("%s: unreadable without an error", filepath.Base(tc.name))
		}
	}
}

// TestReadRegularStopsAtTheBound checks that a file whose fstat size says
// nothing of its content (a procfs file reports 0 bytes) is still read no
// further than the bound: the bound is checked on what was read, not only
// on what fstat said.
func TestReadRegularStopsAtTheBound(t *testing.T) {
	const root, rel = "/proc/self", "status"
	name := root + "/" + rel
	st, err := os.Stat(name)
	if err != nil || st.Size() != 0 || !st.Mode().IsRegular() {
		t.Skipf("needs a regular file of size 0 with content (Linux procfs): %v", err)
	}
	data, _, skip, err := ReadRegular(nil, root, rel, 64<<10)
	if skip != "" || err != nil || len(data) <= 16 {
		t.Fatalf("%s under a large bound: %d bytes, skip %q, err %v; want its content", name, len(data), skip, err)
	}
	data, _, skip, err = ReadRegular(nil, root, rel, 16)
	if skip != "too large" || err != nil || len(data) != 0 {
		t.Errorf("%s under a bound of 16 bytes: %d bytes, skip %q, err %v; want none, too large", name, len(data), skip, err)
	}
}

// TestOpenPartByPart checks the walk used where openat2 is missing: a
// link in any part, and a `..`, are refused; a plain path opens.
func TestOpenPartByPart(t *testing.T) {
	dir := t.TempDir()
	repomaptest.WriteFiles(t, dir, map[string]string{"a/b/c.txt": "x"})
	if err := os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	root, err := openRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(root)
	for rel, want := range map[string]error{"a/b/c.txt": nil, "l/b/c.txt": syscall.ELOOP, "a/../a/b/c.txt": errOutside, "l": syscall.ELOOP} {
		fd, err := openPartByPart(root, rel, syscall.O_RDONLY)
		if fd >= 0 {
			syscall.Close(fd)
		}
		if !errors.Is(err, want) && !(want == nil && err == nil) {
			t.Errorf("%s: %v, want %v", rel, err, want)
		}
	}
}

// TestDirReaderReadsAsReadRegular reads a tree's files in path order
// through one dirReader, its folder descriptor kept across files and
// changed between folders, and checks every answer is ReadRegular's: no
// link followed, the file's or a folder's on the way (a link to a folder
// inside the tree and one to a folder outside it), a `..` and a missing
// folder refused, a folder and a file over the bound skipped.
func TestDirReaderReadsAsReadRegular(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	repomaptest.WriteFiles(t, dir, map[string]string{
		"a.py": "top\n", "big.txt": "0123456789abcdefghij", "pkg/b.go": "package pkg\n", "pkg/c.go": "package c\n",
		"pkg/deep/d.go": "package deep\n", "z/e.py": "e = 1\n",
	})
	repomaptest.WriteFiles(t, outside, map[string]string{"secret.txt": "outside\n"})
	for link, to := range map[string]string{"pkg/link.py": filepath.Join(dir, "a.py"), "dirlink": filepath.Join(dir, "pkg"), "out": outside} {
		if err := os.Symlink(to, filepath.Join(dir, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	rd := newDirReader(dir)
	defer rd.close()
	var buf []byte
	for _, tc := range []struct{ rel, skip, data string }{
		{"a.py", "", "top\n"},
		{"big.txt", "too large", ""},
		{"dirlink", "symlink", ""},
		{"dirlink/b.go", "symlink", ""},
		{"gone/x.py", "unreadable", ""},
		{"out/secret.txt", "symlink", ""},
		{"pkg/b.go", "", "package pkg\n"},
		{"pkg/../out/secret.txt", "symlink", ""},
		{"pkg/../../" + filepath.Base(outside) + "/secret.txt", "outside the repository", ""},
		{"pkg/c.go", "", "package c\n"},
		{"pkg/deep", "not a regular file", ""},
		{"pkg/deep/d.go", "", "package deep\n"},
		{"pkg/gone.go", "unreadable", ""},
		{"pkg/link.py", "symlink", ""},
		{"z/e.py", "", "e = 1\n"},
		{"a.py", "", "top\n"}, // back to the root folder
		// Odd spellings get ReadRegular's answers too.
		{"pkg/./c.go", "", "package c\n"},
		{"pkg//c.go", "", "package c\n"},
		{"pkg/c.go/", "unreadable", ""},
		{"pkg/c\x00.go", "unreadable", ""},
		{"pkg\x00/c.go", "unreadable", ""},
		{"out//secret.txt", "symlink", ""},
		{"out/./secret.txt", "symlink", ""},
		{"//a.py", "outside the repository", ""},
		{outside + "/secret.txt", "outside the repository", ""},
	} {
		data, size, skip, err := rd.read(buf, tc.rel, 16)
		want, wantSize, wantSkip, _ := ReadRegular(nil, dir, tc.rel, 16)
		if skip != tc.skip || skip != wantSkip {
			t.Errorf("%s: skip %q (err %v), want %q (ReadRegular: %q)", tc.rel, skip, err, tc.skip, wantSkip)
			continue
		}
		if skip == "" && (string(data) != tc.data || string(want) != tc.data || size != wantSize) {
			t.Errorf("%s: read %q (%d bytes), want %q (ReadRegular: %q, %d)", tc.rel, data, size, tc.data, want, wantSize)
		}
		if skip == "" {
			buf = data
		}
	}
	// A root given as a link to the tree is opened as ReadRegular opens
	// it (followed: the root is planex's own path, not the agent's).
	rootLink := filepath.Join(t.TempDir(), "root")
	if err := os.Symlink(dir, rootLink); err != nil {
		t.Fatal(err)
	}
	viaLink := newDirReader(rootLink)
	defer viaLink.close()
	for _, rel := range []string{"pkg/b.go", "out/secret.txt", "pkg/link.py"} {
		data, _, skip, _ := viaLink.read(nil, rel, 16)
		want, _, wantSkip, _ := ReadRegular(nil, rootLink, rel, 16)
		if string(data) != string(want) || skip != wantSkip {
			t.Errorf("root a link, %s: %q (%q); ReadRegular: %q (%q)", rel, data, skip, want, wantSkip)
		}
	}
}

// TestRedTeamDirReaderKeptFolderSwappedOrMovedOut: between two files of
// one folder, the agent swaps the folder for a link to a folder outside
// holding files of the same names, or renames the folder out of the tree
// and puts a link to an outside file in it. The kept descriptor still
// names the folder as it was opened, so the second file is read from it
// (the agent's own file, in the tree when opened), never through the
// link; a name in the moved folder that is a link is refused as ever;
// a reader that opens the folder afresh meets the link and refuses it.
func TestRedTeamDirReaderKeptFolderSwappedOrMovedOut(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	repomaptest.WriteFiles(t, dir, map[string]string{"pkg/a.py": "inside a\n", "pkg/b.py": "inside b\n"})
	repomaptest.WriteFiles(t, outside, map[string]string{"a.py": "secret a\n", "b.py": "secret b\n", "c.py": "secret c\n"})
	read := func(rd *dirReader, rel string) (string, string) {
		data, _, skip, _ := rd.read(nil, rel, 1<<10)
		return string(data), skip
	}
	rd := newDirReader(dir)
	defer rd.close()
	if got, skip := read(rd, "pkg/a.py"); got != "inside a\n" {
		t.Fatalf("pkg/a.py: %q (%s)", got, skip)
	}
	// Swap: pkg becomes a link to outside.
	if err := os.Rename(filepath.Join(dir, "pkg"), filepath.Join(dir, "pkg.real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "pkg")); err != nil {
		t.Fatal(err)
	}
	if got, skip := read(rd, "pkg/b.py"); got != "inside b\n" {
		t.Errorf("pkg/b.py after the swap, kept folder: %q (%s); want the kept folder's own file", got, skip)
	}
	fresh := newDirReader(dir)
	defer fresh.close()
	if got, skip := read(fresh, "pkg/b.py"); got != "" || skip != "symlink" {
		t.Errorf("pkg/b.py after the swap, a fresh reader: %q (%s); want it refused as a symlink", got, skip)
	}
	// Moved out: the kept folder leaves the tree and gets a link to an
	// outside file under a name the listing has.
	rd2 := newDirReader(dir)
	defer rd2.close()
	if got, skip := read(rd2, "pkg.real/a.py"); got != "inside a\n" {
		t.Fatalf("pkg.real/a.py: %q (%s)", got, skip)
	}
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(filepath.Join(dir, "pkg.real"), moved); err != nil {
		t.Skipf("cannot move the folder out of the tree here (%v): the case needs one file system", err)
	}
	if err := os.Symlink(filepath.Join(outside, "c.py"), filepath.Join(moved, "c.py")); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"pkg.real/c.py": "", "pkg.real/b.py": "inside b\n"} {
		if got, skip := read(rd2, rel); got != want || strings.HasPrefix(got, "secret") {
			t.Errorf("%s after the folder moved out: %q (%s); want %q", rel, got, skip, want)
		}
	}
}
