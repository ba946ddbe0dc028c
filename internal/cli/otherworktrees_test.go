//go:build linux

package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/sandbox"
)

// TestRedTeamOtherWorktreesHidden: planex runs in a linked worktree of
// the user's (feature), beside the main work tree (main) and another
// linked worktree (other), each with a git-ignored .env, outside the
// home and the temporary folders. planex hides the git-ignored files of
// the checkout it runs in, not of the others; a contained agent found
// their paths in the git directory (the main work tree holds it,
// worktrees/*/gitdir names the rest) and read both .env files. Now the
// other linked worktree is covered whole, and the main work tree but for
// its git directory; the checkout, its tracked files and the agent's own
// git still work.
func TestRedTeamOtherWorktreesHidden(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.New(context.Background(), sandbox.ModeAuto); err != nil {
		t.Skipf("needs the sandbox: %v", err)
	}
	dir := outsideTemp(t, "redteam-worktrees-")
	main := filepath.Join(dir, "main")
	if err := os.MkdirAll(main, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com"}
	gitIn(t, main, env, "init", "-q", "-b", "main")
	for name, text := range map[string]string{".gitignore": ".env\n", "README.md": "tracked\n"} {
		if err := os.WriteFile(filepath.Join(main, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, main, env, "add", "-A")
	gitIn(t, main, env, "commit", "-qm", "base")
	gitIn(t, main, env, "worktree", "add", "-q", "-b", "feature", "../feature")
	gitIn(t, main, env, "worktree", "add", "-q", "-b", "other", "../other")
	for wt, secret := range map[string]string{"main": "redteam-main-worktree-env", "other": "redteam-other-worktree-env", "feature": "own-checkout-env"} {
		if err := os.WriteFile(filepath.Join(dir, wt, ".env"), []byte(secret+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo, err := gitrepo.Open(context.Background(), filepath.Join(dir, "feature"))
	if err != nil {
		t.Fatal(err)
	}
	a := &agentFlags{sandbox: "on"}
	contain, err := a.containment(context.Background(), repo, false, io.Discard, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	// The agent: the worktrees' paths from the git directory, then
	// every .env there; then its own work: the checkout's tracked file
	// and git.
	script := `common=$(git rev-parse --git-common-dir)
for wt in "$(dirname "$common")" $(sed 's,/\.git$,,' "$common"/worktrees/*/gitdir); do cat "$wt/.env" "$wt/README.md"; done 2>/dev/null
echo "readme: $(cat README.md)"
echo "log: $(git log --format=%s -1)"`
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = repo.Root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cleanup, err := contain.PrepareContext(context.Background(), cmd, []string{"PATH=" + os.Getenv("PATH")}, nil, []string{repo.Root})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	for _, secret := range []string{"redteam-main-worktree-env", "redteam-other-worktree-env"} {
		if strings.Contains(got, secret) {
			t.Errorf("the agent read another work tree's ignored file (%s):\n%s", secret, got)
		}
	}
	if !strings.Contains(got, "readme: tracked") || !strings.Contains(got, "log: base") {
		t.Errorf("the agent's own checkout or git no longer works:\n%s", got)
	}
}
