//go:build unix

package review

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/planexhq/planex/internal/safefile"
)

// TestRedTeamLoadFollowsNoLink: review.json sits in a session folder an
// agent without the sandbox may write, and the Action posts what it holds
// (findings, the verdict) to the pull request. A link there to a
// well-formed review of another run, or to any JSON file of the runner,
// was read through and shown as this run's review; now it is refused as
// a link, as is a FIFO (no wait) and /dev/zero, and the real file reads.
func TestRedTeamLoadFollowsNoLink(t *testing.T) {
	t.Parallel()
	elsewhere := filepath.Join(t.TempDir(), "review.json")
	if err := Save(elsewhere, &Result{Kind: KindRun, Session: "another-run", Status: StatusCompleted, Error: "read from elsewhere"}); err != nil {
		t.Fatal(err)
	}
	for name, plant := range map[string]func(p string) error{
		"a link to a review elsewhere": func(p string) error { return os.Symlink(elsewhere, p) },
		"a link to /dev/zero":          func(p string) error { return os.Symlink("/dev/zero", p) },
		"a FIFO":                       func(p string) error { return syscall.Mkfifo(p, 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "review.json")
			if err := plant(p); err != nil {
				t.Fatal(err)
			}
			r, err := Load(p)
			if err == nil {
				t.Fatalf("Load read %s: %+v", name, r)
			}
			if strings.HasPrefix(name, "a link") && !errors.Is(err, syscall.ELOOP) {
				t.Errorf("Load = %v, want a refused link (ELOOP)", err)
			}
			if name == "a FIFO" && !errors.Is(err, safefile.ErrNotRegular) {
				t.Errorf("Load = %v, want ErrNotRegular", err)
			}
		})
	}
	r, err := Load(elsewhere)
	if err != nil || r == nil || r.Error != "read from elsewhere" {
		t.Errorf("Load of the real file = %+v, %v", r, err)
	}
}
