//go:build unix

package action

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/session"
)

// TestRedTeamReportTextFollowsNoLink: the Action posts a session's
// context.md as the job summary and, for a plan too large for one
// comment, in a comment on the thread. A context.md that is a link to a
// file of the runner (left by an agent run without the sandbox) was read
// through, and that file's text posted; now the link is refused, the
// summary says the report could not be read, and the file's text is in
// neither.
func TestRedTeamReportTextFollowsNoLink(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(secret, []byte("aws_secret_access_key = runner-secret-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &session.Session{Path: t.TempDir(), Meta: session.Meta{ID: "s1"}}
	if err := os.Symlink(secret, s.File(session.ContextFile)); err != nil {
		t.Fatal(err)
	}
	store := &stateStore{&env{Log: slog.New(slog.DiscardHandler)}}
	got := store.reportText(s)
	if strings.Contains(got, "runner-secret-value") {
		t.Fatalf("the report read through the link: %q", got)
	}
	if !strings.Contains(got, "could not read the report of session s1") {
		t.Errorf("reportText = %q, want it to say the report could not be read", got)
	}
	if err := os.Remove(s.File(session.ContextFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.File(session.ContextFile), []byte("# Report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := store.reportText(s); got != "# Report\n" {
		t.Errorf("reportText of the real file = %q", got)
	}
}
