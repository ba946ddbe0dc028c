//go:build linux

package agent

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRedTeamConfigThatIsAFIFO: a configuration planex reads to show
// filtered is a FIFO, or a link to one (a repository's committed
// node_modules/etc/npmrc -> /run/initctl, where planex's PATH holds the
// checkout's node_modules/.bin): opening it for reading waited for a
// writer that never came, and planex hung before the step started. It
// is refused as no regular file, unopened.
func TestRedTeamConfigThatIsAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	link := filepath.Join(dir, "npmrc")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, link} {
		if b, ok := readConfigToShow(p); ok || b != nil {
			t.Errorf("%s: read %q, ok %v; want refused", p, b, ok)
		}
		if lines := readLines(p); lines != nil {
			t.Errorf("%s: read %q as a git config; want refused", p, lines)
		}
	}
}

// TestStartsLikeSecretFIFO: a held variable names a FIFO (or a link to
// one): startsLikeSecret opens it without waiting for a writer and
// counts it as no key.
func TestStartsLikeSecretFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if startsLikeSecret(fifo) != sniffNone {
		t.Errorf("%s: a FIFO taken for a key", fifo)
	}
}
