package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/planexhq/planex/internal/apicommit"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/review"
	"github.com/planexhq/planex/internal/session"
)

// newRetryCmd is `planex retry [SESSION_ID]`: the failed and skipped tasks
// of an approved plan run again, as the plan was approved. tasks.csv is
// not edited by hand, so the approval (the plan's hash, which leaves task
// status out) still holds.
func newRetryCmd(stdio IO) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "retry [SESSION_ID]",
		Short: "Run the failed and skipped tasks of a session's approved plan again",
		Long: `planex retry sets the failed and skipped tasks of a session (the newest, or
SESSION_ID) back to pending and runs them, with the plan as it was approved:
no gate asks again. Tasks that completed keep their commits.`,
		Example: `  planex retry
  planex retry 20260101-120000-add-a-cache`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return retryMain(cmd, stdio, o, args)
		},
	}
	o.register(cmd)
	for _, name := range []string{"continue", "yes"} {
		cmd.Flags().MarkHidden(name)
	}
	return cmd
}

func retryMain(cmd *cobra.Command, stdio IO, o *runOptions, args []string) error {
	if cmd.Flags().Changed("continue") {
		return usageError(cmd, "retry takes the session id as its argument, not --continue")
	}
	if o.concurrency < 1 {
		return usageError(cmd, "--concurrency must be at least 1, got %d", o.concurrency)
	}
	reviewMode, err := review.ParseMode(o.review)
	if err != nil {
		return usageError(cmd, "--%v", err)
	}
	signing, err := apicommit.ParseMode(o.commitSigning)
	if err != nil {
		return usageError(cmd, "--%v", err)
	}
	ctx := cmd.Context()
	repo, err := openRepo(ctx, o.repoDir, stdio.Getenv)
	if err != nil {
		return fmt.Errorf("planex works inside a git repository: %w", err)
	}
	id := ""
	if len(args) == 1 {
		id = args[0]
	}
	if !cmd.Flags().Changed("commit-signing") {
		signing = recordedSigning(session.StoreFor(repo.Root, repo.CommonDir), id, signing)
	}
	eng, err := newRunEngine(ctx, stdio, o, repo, reviewMode, signing, nil)
	if err != nil {
		return err
	}
	out, err := eng.Retry(ctx, id, "")
	switch {
	case errors.Is(err, engine.ErrNothingToRetry):
		fmt.Fprintf(stdio.Out, "%v; nothing to do.\n", err)
		return nil
	case errors.Is(err, engine.ErrNotApproved):
		return &exitError{code: exitUsage, msg: fmt.Sprintf("planex: %v; approve it first with planex --continue", err)}
	case errors.Is(err, engine.ErrPlanChanged):
		return &exitError{code: exitFailed, msg: fmt.Sprintf("planex: %v; tasks.csv was edited after approval: restore it, or start a new plan", err)}
	case err != nil:
		return err
	}
	return report(stdio, out, false)
}
