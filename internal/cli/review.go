package cli

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/review"
)

// Review modes (--review, and the Action's review input).
const (
	reviewAgent = "agent"
	reviewSkip  = "skip"
)

// parseReviewMode checks a --review value; empty means the default, agent.
func parseReviewMode(v string) (string, error) {
	switch m := strings.ToLower(strings.TrimSpace(v)); m {
	case "", reviewAgent:
		return reviewAgent, nil
	case reviewSkip, "none", "off", "false":
		return reviewSkip, nil
	default:
		return "", fmt.Errorf("review must be agent or skip, got %q", v)
	}
}

// reviewerFor builds the engine's review hook: the agent reviews each
// completed task read-only after the last wave. It is nil for skip or
// when there is no agent.
func reviewerFor(mode string, ag agent.Agent, repo *gitrepo.Repo, timeout time.Duration, out io.Writer, log *slog.Logger) engine.Reviewer {
	if mode != reviewAgent || ag == nil {
		return nil
	}
	return &review.Reviewer{Agent: ag, Repo: repo, Timeout: timeout, Out: out, Log: log}
}
