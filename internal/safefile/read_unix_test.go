//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadRegular: a regular file (also through a link) is read whole; a
// link to /dev/zero, a FIFO no one writes, a directory and a file over
// the cap are refused at once with an error naming the path, and never
// read past the cap.
func TestReadRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := write("small.json", `{"mcpServers":{}}`)
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		want       string
		err        error
	}{
		{"regular", small, `{"mcpServers":{}}`, nil},
		{"a link to a regular file", link("linked.json", small), `{"mcpServers":{}}`, nil},
		{"a link to /dev/zero", link("zero.json", "/dev/zero"), "", ErrNotRegular},
		{"a FIFO", fifo, "", ErrNotRegular},
		{"a link to a FIFO", link("to-fifo.json", fifo), "", ErrNotRegular},
		{"a directory", dir, "", ErrNotRegular},
		{"over the cap", write("big.json", strings.Repeat("x", 65)), "", ErrTooLarge},
		{"at the cap", write("cap.json", strings.Repeat("x", 64)), strings.Repeat("x", 64), nil},
	} {
		start := time.Now()
		got, err := ReadRegular(c.path, 64)
		if time.Since(start) > 5*time.Second {
			t.Errorf("%s: ReadRegular took %v", c.name, time.Since(start))
		}
		if c.err != nil {
			if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.path) || got != nil {
				t.Errorf("%s: ReadRegular = %d bytes, %v; want %v naming %s", c.name, len(got), err, c.err, c.path)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%s: ReadRegular = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := ReadRegular(filepath.Join(dir, "absent.json"), 64); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want ErrNotExist", err)
	}
}
