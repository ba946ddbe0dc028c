// Package cli is planex's command line: flag parsing and wiring only. The
// work is done by the engine and the packages it uses.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/proc"
	"github.com/planexhq/planex/internal/termsafe"
)

// IO is where a command reads and writes.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
	// IsTerminal reports whether In is an interactive terminal.
	IsTerminal bool
	// Version is printed by --version.
	Version string
	// GitHubRetry is how the GitHub client retries (its zero value: the
	// client's defaults, a first wait of 1 s). cmd/planex leaves it zero;
	// tests that make the fake GitHub fail on purpose shorten the waits.
	GitHubRetry gh.RetryPolicy
	// AllowLocalOrigin lets `planex action` work on a checkout whose
	// origin is a repository on this machine (a path, a file:// URL).
	// cmd/planex leaves it false: a git-directory writer's local origin
	// ran its own hooks on planex's push. The e2e tests, whose origin is a
	// bare repository on disk, set it.
	AllowLocalOrigin bool
}

// Exit codes (README.md, "Exit codes").
const (
	exitOK          = 0   // done, or stopped where the user asked
	exitFailed      = 1   // the run failed: a task failed or was skipped, a budget stop, an error
	exitUsage       = 2   // unknown command or flag, bad value, bad arguments
	exitWaiting     = 3   // stopped at an approval gate, waiting for the user (no terminal)
	exitInterrupted = 130 // interrupted (SIGINT/SIGTERM); resume with --continue
)

// Run executes planex with args and returns the process exit code.
func Run(ctx context.Context, args []string, stdio IO) int {
	if stdio.Getenv == nil {
		stdio.Getenv = os.Getenv
	}
	// A descriptor planex's caller left open (a secret file as fd 7)
	// reaches no program planex starts, contained or not.
	if err := proc.CloseInherited(); err != nil {
		fmt.Fprintf(stdio.Err, "planex: warning: marking inherited descriptors close-on-exec: %v\n", err)
	}
	// Everything planex prints can quote agents' and repositories' text:
	// none of it may drive the terminal (or the Action's log viewer).
	stdio.Out, stdio.Err = termsafe.NewWriter(stdio.Out), termsafe.NewWriter(stdio.Err)
	root := newRootCmd(stdio)
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	if err := root.ExecuteContext(ctx); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(stdio.Err, ee.msg)
			}
			return ee.code
		}
		fmt.Fprintln(stdio.Err, "planex:", err)
		return exitFailed
	}
	return exitOK
}

// exitError ends the program with a code and an optional message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageError is a usage mistake (exit 2): the message, and where to read
// how cmd is used.
func usageError(cmd *cobra.Command, format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf("planex: "+format+"\nRun '%s --help' for usage.", append(args, cmd.CommandPath())...)}
}

// usageArgs makes cobra's argument checks usage errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError(cmd, "%v", err)
		}
		return nil
	}
}

// unknownCommand refuses a one-word requirement that is a subcommand's
// name mistyped (within cobra's edit distance of 2, or a prefix): planex
// stauts must not start a paid run. Words far from every subcommand, and
// names of existing files, are requirements.
func unknownCommand(root *cobra.Command, args []string) error {
	// The first word decides: `planex explor "add a cache"` and `planex
	// locat foo` are typed commands as much as `planex stauts` is. A
	// requirement of several words comes as one quoted argument.
	if len(args) == 0 || !commandLike.MatchString(args[0]) {
		return nil
	}
	if _, err := os.Stat(args[0]); err == nil {
		return nil
	}
	suggestions := root.SuggestionsFor(args[0])
	if len(suggestions) == 0 {
		return nil
	}
	return &exitError{code: exitUsage, msg: fmt.Sprintf("planex: unknown command %q for %q\n\nDid you mean this?\n\t%s\n\nTo plan it as a requirement, give the whole requirement as one quoted argument of more than one word (planex %q). Run 'planex --help' for usage.",
		args[0], root.CommandPath(), strings.Join(suggestions, "\n\t"), strings.Join(append(args[:1:1], "…"), " "))}
}

var commandLike = regexp.MustCompile(`^[A-Za-z][A-Za-z-]*$`)

func newRootCmd(stdio IO) *cobra.Command {
	o := &runOptions{}
	root := &cobra.Command{
		Use:   `planex [flags] "<requirement>" | FILE`,
		Short: "Plan a change to this repository, get it approved, and carry it out as one commit per task",
		Long: `planex explores the repository from several angles, writes a plan (tasks with
dependencies and file scopes) and, once you approve it, carries out the tasks in
dependency waves on the branch planex/<session>, one commit per task. Your checked-out
branch, index and working tree are never touched.

The requirement is text, or a .md/.txt file holding it, or a plan.json / tasks.csv
you already have (planning is then skipped).

Session state lives in the git directory, .git/planex/sessions/<session>/ (explore.csv,
tasks.csv, results.csv, discoveries.ndjson, context.md, session.json); planex status
shows where. A session committed to the repository or copied from another clone is
never resumed.

Exit codes: 0 done; 1 the run failed (a task, a budget, an error); 2 usage error;
3 stopped at an approval gate, waiting for you (no terminal); 130 interrupted.`,
		Example: `  planex --agent-cmd ./my-agent.sh "add rate limiting to the public API"
  planex -y -c 2 requirement.md
  planex --continue
  planex status`,
		Args:    cobra.ArbitraryArgs,
		Version: stdio.Version,
		// Suggestions for mistyped subcommands (unknownCommand).
		SuggestionsMinimumDistance: 2,
		SilenceUsage:               true,
		SilenceErrors:              true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMain(cmd, stdio, o, args)
		},
	}
	o.register(root)
	root.AddCommand(newStatusCmd(stdio), newRetryCmd(stdio), newVersionCmd(stdio))
	for _, extra := range extraCommands(stdio) {
		root.AddCommand(extra)
	}
	// An unknown or malformed flag is a usage error, on every command.
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError(cmd, "%v", err) })
	return root
}

// newVersionCmd is `planex version`, as --version: people type both.
func newVersionCmd(stdio IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print planex's version",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			v := stdio.Version
			if v == "" {
				v = "dev"
			}
			_, err := fmt.Fprintf(stdio.Out, "planex version %s\n", v)
			return err
		},
	}
}

func logger(w io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(newPlainHandler(w, level))
}

// joinArgs turns the positional words into one requirement.
// openRepo opens the repository containing dir, with task worktrees kept
// under $RUNNER_TEMP when the environment names one (a workflow's runner
// cleans it between jobs) and under the OS temp dir otherwise.
func openRepo(ctx context.Context, dir string, getenv func(string) string) (*gitrepo.Repo, error) {
	repo, err := gitrepo.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	repo.TempDir = getenv("RUNNER_TEMP")
	return repo, nil
}

func joinArgs(args []string) string { return strings.TrimSpace(strings.Join(args, " ")) }
