package cli

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/sandbox"
)

// TestSandboxLimitsFlag: --sandbox-limits, else $PLANEX_SANDBOX_LIMITS,
// reaches the containment; a bad value is a usage error naming it.
func TestSandboxLimitsFlag(t *testing.T) {
	t.Parallel()
	none := func(context.Context, sandbox.Mode) (*sandbox.Sandbox, error) { return nil, nil }
	repo := emptyRepo(t)
	for _, c := range []struct {
		name, flag, env string
		want            sandbox.Limits
		wantErr         string
	}{
		{name: "defaults", want: sandbox.Limits{}},
		{name: "flag", flag: "file-size=512M,processes=100", want: sandbox.Limits{FileSize: 512 << 20, Processes: 100}},
		{name: "environment", env: "memory=off", want: sandbox.Limits{Memory: sandbox.Unlimited}},
		{name: "flag over environment", flag: "processes=64", env: "processes=9999", want: sandbox.Limits{Processes: 64}},
		{name: "bad", flag: "cpu=1", wantErr: `--sandbox-limits (or PLANEX_SANDBOX_LIMITS): sandbox limits: "cpu=1"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &agentFlags{sandbox: "off", limits: c.flag, newSandbox: none}
			getenv := func(k string) string {
				if k == "PLANEX_SANDBOX_LIMITS" {
					return c.env
				}
				return ""
			}
			contain, err := a.containment(context.Background(), repo, false, &bytes.Buffer{}, getenv)
			if c.wantErr != "" {
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want a usage error containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || contain.Limits != c.want {
				t.Errorf("limits = %+v, %v; want %+v", contain.Limits, err, c.want)
			}
		})
	}
}

// TestSandboxWriteHoldingRunnerFiles: a --sandbox-write folder that holds
// a file the Actions runner reads after planex's step ($GITHUB_ENV and
// the rest) is refused before any step, naming the folder and the
// variable: every contained agent could write BASH_ENV= there and take
// over the job's later steps (TestRedTeamRunnerFileCommands,
// ./internal/agent, has an agent try). A folder beside the files is
// accepted.
func TestSandboxWriteHoldingRunnerFiles(t *testing.T) {
	t.Parallel()
	repo := emptyRepo(t)
	temp := t.TempDir()
	for _, c := range []struct {
		name, write string
		refused     bool
	}{
		{"the runner's temporary folder", temp, true},
		{"a cache beside the command files", filepath.Join(temp, "cache"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := &agentFlags{sandbox: "on", writable: []string{c.write}}
			getenv := func(k string) string {
				if k == "GITHUB_ENV" {
					return filepath.Join(temp, "_runner_file_commands", "set_env_1")
				}
				return ""
			}
			_, err := a.containment(context.Background(), repo, false, &bytes.Buffer{}, getenv)
			var ee *exitError
			switch {
			case c.refused && (!errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "$GITHUB_ENV") || !strings.Contains(err.Error(), c.write)):
				t.Errorf("error = %v, want a usage error naming $GITHUB_ENV and %s", err, c.write)
			case !c.refused && err != nil:
				t.Errorf("a folder beside the runner's files was refused: %v", err)
			}
		})
	}
}
