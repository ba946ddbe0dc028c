//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/engine"
)

// TestRedTeamRequirementFileShipped: `planex TODO.md` reads the
// requirement from a file, and a cloned repository decides what TODO.md
// is. A link it commits out of the repository (to the user's cloud
// credentials, say) made those credentials the requirement, sent to the
// model and written into the plan; a link to /dev/zero read without end,
// a FIFO waited for a writer for ever, and a file of any size was read
// whole. Each is refused at once, naming the file, and a link that stays
// inside the repository is read as before.
func TestRedTeamRequirementFileShipped(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	secret := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(secret, []byte("aws_secret_access_key = SECRET-KEY-0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "real.md"), []byte("Add a health check.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(root, secret)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, file string
		plant      func(p string) error
		want       string // "" when the file is read
	}{
		{"a relative link out of the repository", "TODO.md", func(p string) error { return os.Symlink(rel, p) }, "out of the repository"},
		{"an absolute link out of the repository", "notes.txt", func(p string) error { return os.Symlink(secret, p) }, "out of the repository"},
		{"a link to /dev/zero", "zero.md", func(p string) error { return os.Symlink("/dev/zero", p) }, "out of the repository"},
		{"a FIFO", "fifo.md", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "not a regular file"},
		{"a 20 MiB file", "big.md", func(p string) error {
			f, err := os.Create(p)
			if err == nil {
				err = f.Truncate(20 << 20)
				f.Close()
			}
			return err
		}, "file too large"},
		{"a link inside the repository", "link.md", func(p string) error { return os.Symlink("real.md", p) }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(root, c.file)
			if err := c.plant(p); err != nil {
				t.Fatal(err)
			}
			type result struct {
				req engine.Request
				err error
			}
			done := make(chan result, 1)
			go func() { req, err := readRequest([]string{p}, root); done <- result{req, err} }()
			var got result
			select {
			case got = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("reading the requirement did not return")
			}
			if strings.Contains(got.req.Requirement, "SECRET-KEY") || got.err != nil && strings.Contains(got.err.Error(), "SECRET-KEY") {
				t.Errorf("the file outside the repository was read: %q, %v", got.req.Requirement, got.err)
			}
			if c.want == "" {
				if got.err != nil || got.req.Requirement != "Add a health check." {
					t.Errorf("readRequest = %q, %v; want the linked file's text", got.req.Requirement, got.err)
				}
				return
			}
			if got.err == nil || !strings.Contains(got.err.Error(), c.want) || !strings.Contains(got.err.Error(), c.file) {
				t.Errorf("readRequest = %q, %v; want an error naming %s and saying %q", got.req.Requirement, got.err, c.file, c.want)
			}
		})
	}
}
