package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/sandbox"
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
	t.Parallel()
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

// An agent command under /tmp or the home, which the sandbox replaces with
// empty folders, is refused before the first step, naming the path and
// --sandbox-read; made readable, it passes.
func TestHiddenAgentCommandIsRefusedOnce(t *testing.T) {
	t.Parallel()
	available := func(context.Context, sandbox.Mode) (*sandbox.Sandbox, error) { return &sandbox.Sandbox{}, nil }
	repo := emptyRepo(t)
	scripts := t.TempDir() // under /tmp, apart from the repository
	script := filepath.Join(scripts, "my-agent.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	homeAgent := filepath.Join(home, "bin", "agent")
	// A self-hosted runner's temporary folder, outside every home: the
	// sandbox hides it too (it holds checkout's token).
	const runnerTemp = "/srv/actions-runner/_work/_temp"
	env := func(k string) string {
		switch k {
		case "HOME":
			return home
		case "RUNNER_TEMP":
			return runnerTemp
		case "GITLAB_CI":
			return "true"
		case "CI_PROJECT_DIR":
			return "/builds/group/app"
		}
		return ""
	}
	for _, c := range []struct {
		name     string
		command  string
		readable []string
		hidden   string
	}{
		{"script under /tmp", script + " --fast", nil, script},
		{"quoted script under /tmp", "'" + script + "'", nil, script},
		{"script under the home", homeAgent, nil, homeAgent},
		{"script under ~", "~/bin/agent", nil, homeAgent},
		{"script under RUNNER_TEMP", runnerTemp + "/agent.sh", nil, runnerTemp + "/agent.sh"},
		{"script in GitLab CI's folder beside the job", "/builds/group/app.tmp/agent.sh", nil, "/builds/group/app.tmp/agent.sh"},
		{"made readable", script, []string{scripts}, ""},
		{"a program on the system", "sh -c true", nil, ""},
		{"a script in the task's worktree", "./agent.sh", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &agentFlags{sandbox: "auto", command: c.command, readable: c.readable, newSandbox: available}
			_, err := a.containment(context.Background(), repo, false, io.Discard, env)
			if c.hidden == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(ee.msg, c.hidden) || !strings.Contains(ee.msg, "--sandbox-read") {
				t.Fatalf("err = %v, want exit 2 naming %s and --sandbox-read", err, c.hidden)
			}
		})
	}
}
