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
	"strings"

	"github.com/spf13/cobra"
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
}

// Run executes planex with args and returns the process exit code.
func Run(ctx context.Context, args []string, stdio IO) int {
	if stdio.Getenv == nil {
		stdio.Getenv = os.Getenv
	}
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
		return 1
	}
	return 0
}

// exitError ends the program with a code and an optional message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

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

Session state lives in .workflow/.lite-plan/<session>/ (explore.csv, tasks.csv,
results.csv, discoveries.ndjson, context.md).`,
		Example: `  planex --agent-cmd ./my-agent.sh "add rate limiting to the public API"
  planex -y -c 2 requirement.md
  planex --continue
  planex status`,
		Args:          cobra.ArbitraryArgs,
		Version:       stdio.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMain(cmd, stdio, o, args)
		},
	}
	o.register(root)
	root.AddCommand(newStatusCmd(stdio))
	for _, extra := range extraCommands(stdio) {
		root.AddCommand(extra)
	}
	return root
}

func logger(w io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// joinArgs turns the positional words into one requirement.
func joinArgs(args []string) string { return strings.TrimSpace(strings.Join(args, " ")) }
