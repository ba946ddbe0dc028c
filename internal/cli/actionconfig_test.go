package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"

	"github.com/planexhq/planex/internal/review"
)

// TestActionConfigReview: the review input becomes a review.Mode, and a
// value that is not one is a usage error naming the input and the value.
func TestActionConfigReview(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		input, want, err string
	}{
		{input: "", want: "agent"},
		{input: "agent", want: "agent"},
		{input: "skip", want: "skip"},
		{input: "off", want: "skip"},
		{input: "maybe", err: `input review must be agent or skip, got "maybe"`},
	} {
		env := map[string]string{"INPUT_REVIEW": c.input}
		getenv := func(k string) string { return env[k] }
		in := actionInputs{gha: githubactions.New(githubactions.WithGetenv(getenv)), getenv: getenv}
		cfg, err := actionConfig(in, getenv, "octo", "demo", "main", "https://github.com", "")
		if c.err != "" {
			var exit *exitError
			if !errors.As(err, &exit) || exit.code != exitUsage || exit.msg != c.err {
				t.Errorf("review %q: error %v; want the usage error %q", c.input, err, c.err)
			}
			continue
		}
		if err != nil || cfg.Review != review.Mode(c.want) {
			t.Errorf("review %q: Review = %q, %v; want %q", c.input, cfg.Review, err, c.want)
		}
	}
}

// TestOpenRepoKeepsWorktreesUnderRunnerTemp: the command line is what
// reads $RUNNER_TEMP; every repository it opens keeps its task worktrees
// in a folder directly under it, or under the OS temp dir without it.
func TestOpenRepoKeepsWorktreesUnderRunnerTemp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	runnerTemp := t.TempDir()
	for _, c := range []struct{ env, want string }{{runnerTemp, runnerTemp}, {"", os.TempDir()}} {
		repo, err := openRepo(context.Background(), dir, func(k string) string {
			if k == "RUNNER_TEMP" {
				return c.env
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := filepath.Dir(filepath.Dir(repo.WorktreeDir("s1", "T1"))); got != c.want {
			t.Errorf("RUNNER_TEMP=%q: worktrees under %s, want %s", c.env, got, c.want)
		}
	}
}

// TestActionConfigBotLogin: the bot-login input names planex's account
// (an App's "<slug>[bot]" or a user's login) and reaches the Action's
// configuration; anything that is not a GitHub login is a usage error
// naming the input.
func TestActionConfigBotLogin(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		input, want string
		bad         bool
	}{
		{input: "", want: ""},
		{input: "planex-app[bot]", want: "planex-app[bot]"},
		{input: "octo-maintainer", want: "octo-maintainer"},
		{input: "*[bot]", bad: true},
		{input: "a b", bad: true},
		{input: "-lead", bad: true},
	} {
		env := map[string]string{"INPUT_BOT_LOGIN": c.input}
		getenv := func(k string) string { return env[k] }
		in := actionInputs{gha: githubactions.New(githubactions.WithGetenv(getenv)), getenv: getenv}
		cfg, err := actionConfig(in, getenv, "octo", "demo", "main", "https://github.com", "")
		var exit *exitError
		switch {
		case c.bad && (!errors.As(err, &exit) || exit.code != exitUsage || !strings.Contains(exit.msg, "input bot-login")):
			t.Errorf("bot-login %q: error %v; want a usage error naming the input", c.input, err)
		case !c.bad && (err != nil || cfg.BotLogin != c.want):
			t.Errorf("bot-login %q: BotLogin = %q, %v; want %q", c.input, cfg.BotLogin, err, c.want)
		}
	}
}
