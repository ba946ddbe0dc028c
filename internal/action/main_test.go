package action

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/planexhq/planex/internal/gitrepo/gittest"
)

// TestMain runs the package's tests with their scratch in memory where
// the caller chose no TMPDIR (issue 32, item 4: the package took 93 to
// 136 s of wall time for 62 to 82 s of CPU, half of it system time), and
// makes the worlds' template origin first. The collector runs at an
// eighth of its default pace (gcPercent): the tests' live heap is a few
// MiB, so by default it ran some twenty times a second and took about a
// fifth of the test process's own CPU.
func TestMain(m *testing.M) {
	debug.SetGCPercent(gcPercent)
	os.Exit(gittest.InMemory("planex-action-test", func() int { return runWithTemplate(m) }))
}

// gcPercent is the test binary's GOGC: a collection when the heap has
// grown eight times its live size.
const gcPercent = 800

// templateOrigin is the bare repository every world's origin starts as,
// made by runWithTemplate before any test runs and only read after: a
// world copies it (gittest.CopyTree) where making it ran five git
// processes and a clone's helpers.
var templateOrigin string

// runWithTemplate makes templateOrigin, runs the tests and removes it.
func runWithTemplate(m *testing.M) int {
	dir, err := os.MkdirTemp("", "planex-world-template-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "making the worlds' template:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	templateOrigin = filepath.Join(dir, "origin.git")
	if err := makeTemplateOrigin(filepath.Join(dir, "src"), templateOrigin); err != nil {
		fmt.Fprintln(os.Stderr, "making the worlds' template:", err)
		return 1
	}
	return m.Run()
}

// makeTemplateOrigin makes, at origin, the bare repository GitHub holds
// for a world: main with one commit of a README, made at src. GitHub runs
// no gc after a push; receive-pack's gc --auto would be a git process per
// push here. A push is kept as a pack, as GitHub keeps it (unpackLimit
// 1), so a clone links a few files instead of one for every object
// pushed so far.
func makeTemplateOrigin(src, origin string) error {
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "README.md"), []byte("# demo\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "README.md"},
		{"-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "initial"},
		{"clone", "-q", "--bare", "-c", "receive.autogc=false", "-c", "receive.unpackLimit=1", src, origin}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %w\n%s", args, err, out)
		}
	}
	return nil
}
