package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes an empty git repository with one commit.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "start"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// Mistakes in what the user typed are usage errors (exit 2), found before
// a session starts, as the README's exit code table says.
func TestBadRequirementAndAgentExit2(t *testing.T) {
	repo := gitRepo(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "nope", "add a cache"}, `unknown agent "nope"`},
		{[]string{"--agent-cmd", "true", "   "}, "the requirement is empty"},
		{[]string{"--agent-cmd", "true", filepath.Join(repo, "missing-requirement.md")}, "missing-requirement.md"},
	} {
		args := append([]string{"-C", repo, "--sandbox", "off"}, c.args...)
		out, errOut, code := runInProcess(t, args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("planex %q: exit %d, stderr %q, stdout %q; want exit 2 and %q", c.args, code, errOut, out, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, ".workflow")); !os.IsNotExist(err) {
		t.Errorf("a session folder was made: %v", err)
	}
}
