package agent

import (
	"context"
	"log/slog"
	"time"

	"github.com/planexhq/planex/internal/session"
)

// RunStep runs one agent step in a private folder of its own (see
// PrepareStep), then adds the discoveries the step left in its
// discoveries file to board, the session's discoveries.ndjson. With an
// empty board the step gets no discoveries file. The usage the agent
// reports is bounded (usage.Usage.Bounded).
func RunStep(ctx context.Context, a Agent, step Step, board string, log *slog.Logger) (Result, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	step, cleanup, err := PrepareStep(step)
	if err != nil {
		return Result{}, err
	}
	defer cleanup()
	if board == "" {
		step.DiscoveriesFile = ""
	}
	res, err := a.Run(ctx, step)
	// The agent's report of what it spent is its claim: a negative cost
	// would pay back earlier steps' spending, past every budget.
	res.Usage = res.Usage.Bounded()
	if board != "" {
		worker := step.ID
		if worker == "" {
			worker = string(step.Phase)
		}
		if _, merr := session.MergeDiscoveries(board, step.DiscoveriesFile, worker, time.Now(), log); merr != nil {
			log.Warn("adding the step's discoveries to the board", "step", worker, "err", merr)
		}
	}
	return res, err
}
