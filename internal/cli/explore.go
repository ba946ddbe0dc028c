package cli

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/explore"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/session"
	"github.com/planexhq/planex/internal/termsafe"
)

// extraCommands are the subcommands beyond run and status.
func extraCommands(stdio IO) []*cobra.Command {
	return []*cobra.Command{newExploreCmd(stdio), newLocateCmd(), newEvalLocateCmd(), newActionCmd(stdio)}
}

// newMapper returns the repository mapper, or nil when disabled.
func newMapper(disabled bool, log *slog.Logger) engine.Mapper {
	if disabled {
		return nil
	}
	return explore.Mapper{Log: log}
}

func newExploreCmd(stdio IO) *cobra.Command {
	var repoDir string
	var top, angles int
	var verbose bool
	cmd := &cobra.Command{
		Use:   `explore [-C DIR] [--top K] [--angles N] "<requirement>" | FILE`,
		Short: "Explore a requirement from the repository map alone (no model needed)",
		Long: `explore maps the repository (languages, manifests, build and test commands,
symbols, imports), ranks its files for the requirement, and writes a session whose
explore.csv holds one row per angle, written from the map. It prints a readable
summary. Plan and carry it out with an agent later:

  planex --continue <session> --agent anthropic`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if len(args) == 0 {
				return usageError(cmd, "explore: give a requirement (text or a .md/.txt file)")
			}
			if angles < 1 || angles > 4 {
				return usageError(cmd, "--angles must be between 1 and 4, got %d", angles)
			}
			if top < 1 {
				return usageError(cmd, "--top must be at least 1, got %d", top)
			}
			repo, err := openRepo(ctx, repoDir, stdio.Getenv)
			if err != nil {
				return fmt.Errorf("planex works inside a git repository: %w", err)
			}
			req, err := readRequest(args, repo.Root)
			if err != nil {
				return err
			}
			if len(req.Imported) > 0 {
				return fmt.Errorf("planex explore takes a requirement, not a plan (%s)", req.Source)
			}
			if strings.TrimSpace(req.Requirement) == "" {
				return fmt.Errorf("the requirement is empty")
			}
			log := logger(stdio.Err, verbose)
			mp := explore.Mapper{TopK: top, Log: log}
			m, ranked, err := mp.Build(ctx, repo.Root, req.Requirement)
			if err != nil {
				return err
			}
			kind, names := engine.PresetAngles(req.Requirement, angles)
			rows := explore.Rows(m, ranked, names)
			eng, err := engine.New(repo, engine.Options{Out: stdio.Out, Log: log})
			if err != nil {
				return err
			}
			s, err := eng.StartExplored(ctx, req, rows, explore.Context(m, ranked))
			if err != nil {
				return err
			}
			out := stdio.Out
			fmt.Fprintf(out, "\n## Repository\n\n%s\n", strings.TrimSpace(m.Summary()))
			fmt.Fprintf(out, "\n## Files most relevant to the requirement\n\n")
			if len(ranked) == 0 {
				fmt.Fprintln(out, "(no file matched the requirement's words)")
			}
			for i, r := range ranked {
				fmt.Fprintf(out, "%2d. %s\n", i+1, termsafe.Path(r.Path))
			}
			fmt.Fprintf(out, "\n## Exploration (%s requirement, %s)\n", kind, plural.Count(len(rows), "angle", "angles"))
			for _, r := range rows {
				fmt.Fprintf(out, "\n%s %s: %s\n", r.ID, r.Angle, r.Findings)
			}
			fmt.Fprintf(out, "\nWritten: %s and %s\n", s.File(session.ExploreFile), s.File(session.ContextFile))
			fmt.Fprintf(out, "Next: plan and carry it out with an agent:\n  planex --continue %s --agent anthropic   (or --agent-cmd CMD)\n", s.Meta.ID)
			return nil
		},
	}
	cmd.Flags().StringVarP(&repoDir, "repo", "C", ".", "the repository `DIR` to explore")
	cmd.Flags().IntVar(&top, "top", explore.DefaultTopK, "how many ranked files to start from")
	cmd.Flags().IntVar(&angles, "angles", 3, "how many exploration angles (1-4)")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "log details to stderr")
	return cmd
}
