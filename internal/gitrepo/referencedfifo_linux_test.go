//go:build linux

package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamReferencedFileIsAFIFO: whoever could write the git directory
// names, in the repository's config, a FIFO nobody writes where planex
// looks into a file to learn what to hide from a contained agent: as
// core.askPass or a credential helper's program (planex reads its first
// bytes: a script may hold a token), or as an ssh configuration given to
// core.sshCommand with -F, directly or by its Include. planex's own read,
// made before each contained step, waited on it for ever (no context
// reaches a file's open). Each is now opened without waiting and read
// only when it is a regular file.
func TestRedTeamReferencedFileIsAFIFO(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, key, value string }{
		{"askpass", "core.askPass", "%F"},
		{"credential helper", "credential.helper", "!%F get"},
		{"ssh config", "core.sshCommand", "ssh -F %F"},
		{"ssh config include", "core.sshCommand", "ssh -F %R"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			dir := t.TempDir()
			fifo := makeFIFO(t, dir)
			regular := filepath.Join(dir, "ssh_config")
			if err := os.WriteFile(regular, []byte("Include "+fifo+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			value := map[string]string{"%F": fifo, "%R": regular}
			v := tc.value
			for k, p := range value {
				v = strings.ReplaceAll(v, k, p)
			}
			mustGit(t, r.Root, "config", tc.key, v)
			done := make(chan error, 1)
			go func() {
				_, err := ReferencedFiles(context.Background(), r, filepath.Join(r.CommonDir, "config"), "/home/ci")
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("ReferencedFiles = %v", err)
				}
			case <-time.After(time.Minute):
				// Free the reader so the test binary can end.
				if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				t.Fatal("reading what the config names waited on the FIFO")
			}
		})
	}
}
