package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
		cfg, err := actionConfig(in, getenv, "octo", "demo", "main", "https://github.com")
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
		// Spaces around the input are the workflow's YAML, not the login.
		{input: " planex-app[bot] ", want: "planex-app[bot]"},
		{input: "planex-app[bot]\nhelper-app[bot]", bad: true},
		{input: "github-actions[bot] x", bad: true},
		// A login of look-alike letters (Cyrillic а) is no GitHub login.
		{input: "github-\u0430ctions[bot]", bad: true},
	} {
		env := map[string]string{"INPUT_BOT_LOGIN": c.input}
		getenv := func(k string) string { return env[k] }
		in := actionInputs{gha: githubactions.New(githubactions.WithGetenv(getenv)), getenv: getenv}
		cfg, err := actionConfig(in, getenv, "octo", "demo", "main", "https://github.com")
		var exit *exitError
		switch {
		case c.bad && (!errors.As(err, &exit) || exit.code != exitUsage || !strings.Contains(exit.msg, "input bot-login")):
			t.Errorf("bot-login %q: error %v; want a usage error naming the input", c.input, err)
		case !c.bad && (err != nil || cfg.BotLogin != c.want):
			t.Errorf("bot-login %q: BotLogin = %q, %v; want %q", c.input, cfg.BotLogin, err, c.want)
		}
	}
}

// TestActionConfigTrustedBots: the trusted-bots input lists the Apps
// that may start planex (commas, spaces or new lines between them); a
// person's login, the Actions bot or anything that is no App login is a
// usage error naming the input.
func TestActionConfigTrustedBots(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		input string
		want  []string
		bad   bool
	}{
		{input: "", want: nil},
		{input: "importer[bot]", want: []string{"importer[bot]"}},
		{input: "importer[bot], chat-bridge[bot]\nthird[bot]", want: []string{"importer[bot]", "chat-bridge[bot]", "third[bot]"}},
		{input: "octo-maintainer", bad: true},
		{input: "github-actions[bot]", bad: true},
		{input: "GitHub-Actions[bot]", bad: true},
		{input: "*[bot]", bad: true},
		{input: "github-\u0430ctions[bot]", bad: true},
	} {
		env := map[string]string{"INPUT_TRUSTED_BOTS": c.input}
		getenv := func(k string) string { return env[k] }
		in := actionInputs{gha: githubactions.New(githubactions.WithGetenv(getenv)), getenv: getenv}
		cfg, err := actionConfig(in, getenv, "octo", "demo", "main", "https://github.com")
		var exit *exitError
		switch {
		case c.bad && (!errors.As(err, &exit) || exit.code != exitUsage || !strings.Contains(exit.msg, "input trusted-bots")):
			t.Errorf("trusted-bots %q: error %v; want a usage error naming the input", c.input, err)
		case !c.bad && (err != nil || !slices.Equal(cfg.TrustedBots, c.want)):
			t.Errorf("trusted-bots %q: %q, %v; want %q", c.input, cfg.TrustedBots, err, c.want)
		}
	}
}

// TestActionConfigDefaultToken: planex takes its token for the job's own
// GITHUB_TOKEN (and so github-actions[bot], which every workflow of the
// repository posts as, for its own account) only when action.yml's
// comparison says so. A planex run from a step of its own with a
// GITHUB_TOKEN variable that holds an App's or a person's token (the
// variable's name says nothing of whose it is) was taken for the job
// token: github-actions[bot]'s pull requests on planex branches were then
// planex's, and its own were not.
func TestActionConfigDefaultToken(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, stated, input string
		want                bool
	}{
		{"action.yml: the job token", "true", "ghs_job", true},
		{"action.yml: another token", "false", "ghs_app", false},
		{"action.yml's answer, spaced", " true ", "ghs_job", true},
		{"own step, token from GITHUB_TOKEN, nothing stated", "", "", false},
		{"own step, token given as the input, nothing stated", "", "ghs_app", false},
		{"not a yes or no", "maybe", "", false},
	} {
		env := map[string]string{"PLANEX_DEFAULT_TOKEN": c.stated, "GITHUB_TOKEN": "ghs_app", "INPUT_GITHUB_TOKEN": c.input}
		getenv := func(k string) string { return env[k] }
		in := actionInputs{gha: githubactions.New(githubactions.WithGetenv(getenv)), getenv: getenv}
		cfg, err := actionConfig(in, getenv, "octo", "demo", "main", "https://github.com")
		if err != nil || cfg.DefaultToken != c.want {
			t.Errorf("%s: DefaultToken = %v, %v; want %v", c.name, cfg.DefaultToken, err, c.want)
		}
	}
}

// TestRedTeamActionConfigDispatchRefIsFull: the ref matrix waves are
// dispatched on is the triggering run's full ref (GITHUB_REF), never its
// short name (GITHUB_REF_NAME), which GitHub resolves to a tag of that
// name before the branch, a tag whoever can push may make. A ref that is
// neither a branch nor a tag (a pull request's merge ref) leaves the
// default branch to the action.
func TestRedTeamActionConfigDispatchRefIsFull(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ ref, name, want string }{
		{"refs/heads/main", "main", "refs/heads/main"},
		{"refs/heads/release/2", "release/2", "refs/heads/release/2"},
		{"refs/tags/v1", "v1", "refs/tags/v1"},
		{"refs/pull/7/merge", "7/merge", ""},
		{"", "", ""},
	} {
		env := map[string]string{"GITHUB_REF": c.ref, "GITHUB_REF_NAME": c.name}
		getenv := func(k string) string { return env[k] }
		in := actionInputs{gha: githubactions.New(githubactions.WithGetenv(getenv)), getenv: getenv}
		cfg, err := actionConfig(in, getenv, "octo", "demo", "main", "https://github.com")
		if err != nil || cfg.DispatchRef != c.want {
			t.Errorf("GITHUB_REF %q: DispatchRef = %q, %v; want %q", c.ref, cfg.DispatchRef, err, c.want)
		}
	}
}
