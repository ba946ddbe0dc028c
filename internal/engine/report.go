package engine

import (
	"fmt"
	"strings"

	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/safefile"
	"github.com/planexhq/planex/internal/session"
)

// aggregate writes results.csv and context.md.
func (e *Engine) aggregate(s *session.Session, tasks []plan.Task, stopReason string) error {
	if err := safefile.Write(s.File(session.ResultsFile), plan.WriteResults(tasks), 0o644); err != nil {
		return err
	}
	var explore []plan.ExploreRow
	if s.Exists(session.ExploreFile) {
		var err error
		if explore, err = s.ReadExplore(); err != nil {
			return err
		}
	}
	ds, err := session.ReadDiscoveries(s.File(session.DiscoveriesFile), e.o.Log)
	if err != nil {
		return err
	}
	if stopReason == "" {
		s.Meta.Finished = e.o.Now().UTC()
		if err := s.SaveMeta(); err != nil {
			return err
		}
	}
	md := render.Context(render.Report{Meta: s.Meta, Explore: explore, Tasks: tasks, Discoveries: ds, Spent: Spent(s, tasks), StopReason: stopReason})
	if err := safefile.Write(s.File(session.ContextFile), []byte(md), 0o644); err != nil {
		return err
	}
	c := plan.Count(tasks)
	fmt.Fprintf(e.o.Out, "done: %d completed, %d failed, %d skipped, %d pending of %d; branch %s; report %s\n",
		c.Completed, c.Failed, c.Skipped, c.Pending, c.Total, s.Meta.Branch, s.File(session.ContextFile))
	return nil
}

func previewAngles(rows []plan.ExploreRow) string {
	var b strings.Builder
	b.WriteString("Exploration angles:\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "  %s  %-20s %s\n", r.ID, r.Angle, plan.Truncate(r.Description, 90))
	}
	return b.String()
}

func previewTasks(s *session.Session, tasks []plan.Task) string {
	var b strings.Builder
	if s.Meta.Summary != "" {
		fmt.Fprintf(&b, "Plan: %s\n", s.Meta.Summary)
	}
	fmt.Fprintf(&b, "Plan %s, %d task(s):\n", plan.ID(plan.Hash(tasks)), len(tasks))
	b.WriteString(render.TaskTable(tasks))
	return b.String()
}
