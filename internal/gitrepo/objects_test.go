package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestFilesAtAndBlob(t *testing.T) {
	t.Parallel()
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
	// One listing for all of them, including paths the tree does not hold.
	files, err := r.FilesAt(ctx, head, []string{"README.md", "src/old.txt", "link", "src", "missing.txt", "READ", "src/old"})
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
		f, ok := files[tc.path]
		if !ok {
			t.Fatalf("FilesAt has no %s: %+v", tc.path, files)
		}
		if f.Mode != tc.mode || f.Type != tc.typ || f.Size != tc.size || len(f.Object) != 40 {
			t.Errorf("FilesAt[%s] = %+v, want mode %s type %s size %d", tc.path, f, tc.mode, tc.typ, tc.size)
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
		if f, ok := files[p]; ok {
			t.Errorf("FilesAt[%s] = %+v; want nothing", p, f)
		}
	}
	if len(files) != 4 {
		t.Errorf("FilesAt = %+v, want the 4 entries", files)
	}
	if _, err := r.FilesAt(ctx, "0000000000000000000000000000000000000000", []string{"README.md"}); err == nil {
		t.Error("FilesAt of a commit that does not exist: no error")
	}
	if _, err := r.ReadBlob(ctx, "0000000000000000000000000000000000000000"); err == nil {
		t.Error("Blob of an object that does not exist: no error")
	}
}
