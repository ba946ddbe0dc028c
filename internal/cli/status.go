package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/session"
)

func newStatusCmd(stdio IO) *cobra.Command {
	var repoDir string
	var list bool
	cmd := &cobra.Command{
		Use:   "status [SESSION_ID]",
		Short: "Show a session's phases, waves and each task's status",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			repo, err := openRepo(cmd.Context(), repoDir, stdio.Getenv)
			if err != nil {
				return err
			}
			store := session.StoreFor(repo.Root, repo.CommonDir)
			if note := store.LegacyNote(); note != "" {
				fmt.Fprintln(stdio.Err, note)
			}
			if list {
				ids, err := session.List(store)
				if err != nil {
					return err
				}
				for _, id := range ids {
					fmt.Fprintln(stdio.Out, id)
				}
				return nil
			}
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			s, err := session.Open(store, id)
			if err != nil {
				return err
			}
			var explore []plan.ExploreRow
			if s.Exists(session.ExploreFile) {
				if explore, err = s.ReadExplore(); err != nil {
					return err
				}
			}
			var tasks []plan.Task
			have := s.Exists(session.TasksFile)
			if have {
				if tasks, err = s.ReadTasks(); err != nil {
					return err
				}
				if withWaves, err := plan.AssignWaves(tasks); err == nil {
					tasks = withWaves
				}
			}
			fmt.Fprint(stdio.Out, render.Status(s.Meta, explore, tasks, have))
			fmt.Fprintf(stdio.Out, "folder   %s\n", s.Path)
			fmt.Fprintf(stdio.Out, "So far: %s.\n", engine.SpentLine(engine.Spent(s, tasks)))
			return nil
		},
	}
	cmd.Flags().StringVarP(&repoDir, "repo", "C", ".", "the repository `DIR`")
	cmd.Flags().BoolVar(&list, "list", false, "list session ids, oldest first")
	return cmd
}
