package cli

import (
	"io"
	"log/slog"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/review"
)

// reviewerFor builds the engine's review hook: the agent reviews each
// completed task read-only after the last wave. It is nil for skip or
// when there is no agent.
func reviewerFor(mode review.Mode, ag agent.Agent, repo *gitrepo.Repo, timeout time.Duration, out io.Writer, log *slog.Logger) engine.Reviewer {
	if mode != review.ModeAgent || ag == nil {
		return nil
	}
	return &review.Reviewer{Agent: ag, Repo: repo, Timeout: timeout, Out: out, Log: log}
}
