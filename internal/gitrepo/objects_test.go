package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestFileAtAndBlob(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	if err := os.Symlink("README.md", filepath.Join(r.Root, "link")); err != nil {
		t.Fatal(err)
	}
	mustGit(t, r.Root, "add", "link")
	mustGit(t, r.Root, "commit", "-qm", "link")
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, mode, typ string
		size            int64
		content         string // of the blob, when it is one
	}{
		{"README.md", "100644", "blob", 6, "hello\n"},
		{"src/old.txt", "100644", "blob", 4, "old\n"},
		{"link", "120000", "blob", 9, "README.md"},
		{"src", "040000", "tree", -1, ""},
	} {
		f, ok, err := r.FileAt(ctx, head, tc.path)
		if err != nil || !ok {
			t.Fatalf("FileAt(%s) = %v, %v", tc.path, ok, err)
		}
		if f.Mode != tc.mode || f.Type != tc.typ || f.Size != tc.size || len(f.Object) != 40 {
			t.Errorf("FileAt(%s) = %+v, want mode %s type %s size %d", tc.path, f, tc.mode, tc.typ, tc.size)
		}
		if tc.typ != "blob" {
			continue
		}
		b, err := r.ReadBlob(ctx, f.Object)
		if err != nil || string(b) != tc.content {
			t.Errorf("ReadBlob(%s) = %q, %v; want %q", tc.path, b, err, tc.content)
		}
	}
	// Neither a missing path nor a prefix of a file's name is an entry.
	for _, p := range []string{"missing.txt", "READ", "src/old"} {
		if f, ok, err := r.FileAt(ctx, head, p); ok || err != nil {
			t.Errorf("FileAt(%s) = %+v, %v, %v; want nothing", p, f, ok, err)
		}
	}
	if _, _, err := r.FileAt(ctx, "0000000000000000000000000000000000000000", "README.md"); err == nil {
		t.Error("FileAt of a commit that does not exist: no error")
	}
	if _, err := r.ReadBlob(ctx, "0000000000000000000000000000000000000000"); err == nil {
		t.Error("Blob of an object that does not exist: no error")
	}
}
