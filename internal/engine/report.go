package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/review"
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
	rv, err := review.Load(s.File(session.ReviewFile))
	if err != nil {
		// A damaged review must not cost the report; say so instead.
		rv = &review.Result{Status: review.StatusFailed, Error: err.Error()}
	}
	md := render.Context(render.Report{Meta: s.Meta, Explore: explore, Tasks: tasks, Discoveries: ds, Spent: Spent(s, tasks), StopReason: stopReason, Review: rv})
	// Titles, findings, discoveries and reviews are agents' text: no value
	// planex holds and does not pass on goes into the report.
	md = agent.Redact(md, e.o.Contain.Secrets())
	if err := safefile.Write(s.File(session.ContextFile), []byte(md), 0o644); err != nil {
		return err
	}
	if len(tasks) == 0 {
		// Nothing ran (explore, or a stop before planning): no branch.
		fmt.Fprintf(e.o.Out, "report: %s\n", s.File(session.ContextFile))
		return nil
	}
	c := plan.Count(tasks)
	fmt.Fprintf(e.o.Out, "done: %d completed, %d failed, %d skipped, %d pending of %d; %s; branch %s; report %s\n",
		c.Completed, c.Failed, c.Skipped, c.Pending, c.Total, SpentLine(Spent(s, tasks)), s.Meta.Branch, s.File(session.ContextFile))
	return nil
}

// phase tells Options.Phase that a phase begins.
func (e *Engine) phase(name string) {
	if e.o.Phase != nil {
		e.o.Phase(name)
	}
}

func previewAngles(rows []plan.ExploreRow) string {
	var b strings.Builder
	b.WriteString("Exploration angles:\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "  %s  %-20s %s\n", r.ID, r.Angle, abbrev.Truncate(r.Description, 90))
	}
	return b.String()
}

func previewTasks(s *session.Session, tasks []plan.Task) string {
	var b strings.Builder
	if s.Meta.Summary != "" {
		fmt.Fprintf(&b, "Plan: %s\n", s.Meta.Summary)
	}
	fmt.Fprintf(&b, "Plan %s, %s:\n", plan.ID(plan.Hash(tasks)), plural.Count(len(tasks), "task", "tasks"))
	b.WriteString(render.TaskTable(tasks))
	// What the Action's plan comment shows: each task in full, and the
	// commands its execution directives will run.
	for _, t := range tasks {
		fmt.Fprintf(&b, "\n%s  %s\n", t.ID, abbrev.OneLine(t.Title))
		for _, f := range []struct{ label, text string }{
			{"what", t.Description}, {"scope", t.Scope}, {"tests", t.Test},
			{"done when", t.AcceptanceCriteria}, {"runs after it", t.ExecutionDirectives},
		} {
			if strings.TrimSpace(f.text) != "" {
				fmt.Fprintf(&b, "    %-14s %s\n", f.label+":", abbrev.Truncate(abbrev.OneLine(f.text), 400))
			}
		}
	}
	if est := PlanEstimate(s, tasks); est != "" {
		fmt.Fprintf(&b, "\nEstimated cost: %s.\n", est)
	}
	return b.String()
}

// PlanEstimate prices the tasks of a plan from what the steps before it
// (analyze, explore, plan) cost on average: "" when nothing was priced.
func PlanEstimate(s *session.Session, tasks []plan.Task) string {
	spent := Spent(s, tasks)
	if spent.CostUSD == 0 || len(s.Meta.Usage) == 0 {
		return ""
	}
	steps := len(s.Meta.Usage)
	per := spent.CostUSD / float64(steps)
	return fmt.Sprintf("about %s for the %s (from %s spent on %s so far)", render.Dollars(per*float64(len(tasks))),
		plural.Count(len(tasks), "task", "tasks"), render.Dollars(spent.CostUSD), plural.Count(steps, "planning step", "planning steps"))
}

// workflowsNote warns, before a plan is approved, that some of its tasks
// can change workflow files, which a push needs a special permission for.
func workflowsNote(s *session.Session, tasks []plan.Task) string {
	ids := plan.WorkflowTasks(tasks)
	if len(ids) == 0 {
		return ""
	}
	return fmt.Sprintf("warning: %s can change files in %s/: pushing %s to GitHub needs a token with the workflows permission "+
		"(a classic token's workflow scope, or Workflows: write for a GitHub App or fine-grained token); an Actions GITHUB_TOKEN cannot push it",
		strings.Join(ids, ", "), plan.WorkflowsDir, s.Meta.Branch)
}

// settingsNote warns, before a plan is approved, that some of its tasks
// may change planex's own settings file (their scope names it; no other
// task's commit may change it).
func settingsNote(tasks []plan.Task) string {
	return tasksWarning(plan.SettingsTasks(tasks), "may change %s, planex's own settings (auto-approve, max-cost-usd): once merged, they decide what later runs may do",
		plan.SettingsFile)
}

// tasksWarning is the console's warning that the tasks ids may change a
// guarded path ("" when there are none): the ids, then what follows.
func tasksWarning(ids []string, format string, args ...any) string {
	if len(ids) == 0 {
		return ""
	}
	return fmt.Sprintf("warning: %s "+format, append([]any{strings.Join(ids, ", ")}, args...)...)
}

// configNote warns, before a plan is approved, that some of its tasks
// may change configuration GitHub acts on beyond workflow files
// (plan.ConfigTasks): no other task's commit may.
func configNote(tasks []plan.Task) string {
	return tasksWarning(plan.ConfigTasks(tasks), "may change local actions (%s/), action definitions, CODEOWNERS, Dependabot's settings, .gitmodules or .lfsconfig: "+
		"a local action runs on the push with the secrets a workflow hands it, and the others decide, once merged, who must review, where Dependabot's secrets go "+
		"and where every checkout fetches submodules and large files from",
		plan.ActionsDir)
}

// guidanceNote warns, before a plan is approved, that some of its tasks
// may change what coding agents read as the repository's guidance
// (plan.GuidanceTasks): no other task's commit may.
func guidanceNote(tasks []plan.Task) string {
	return tasksWarning(plan.GuidanceTasks(tasks), "may change what coding agents read as the repository's guidance (AGENTS.md, CLAUDE.md, GEMINI.md, %s, their settings folders such as .claude/) or files developers' tools run on their own (.devcontainer/, .vscode/tasks.json, git hooks): "+
		"every later run on the branch, and every developer's own agent or editor once merged, takes them for the repository's instructions or runs them",
		plan.InstructionsDir+"/")
}

// review runs the optional reviewer. Its failure is written to
// review.json (and so to the report), logged and shown, and the run goes
// on: a review is advice, the tasks' own checks decide.
func (e *Engine) review(ctx context.Context, s *session.Session, tasks []plan.Task) {
	if e.o.Reviewer == nil {
		return
	}
	path := s.File(session.ReviewFile)
	if err := e.canStart(s, tasks, agent.PhaseReview); err != nil {
		msg := "not started: " + err.Error()
		fmt.Fprintf(e.o.Out, "review: %s\n", msg)
		res := &review.Result{Kind: review.KindRun, Session: s.Meta.ID, Status: review.StatusFailed, Error: msg, Started: e.o.Now().UTC()}
		if serr := review.Save(path, res); serr != nil {
			e.o.Log.Warn("recording the skipped review", "err", serr)
		}
		return
	}
	e.phase("review")
	fmt.Fprintln(e.o.Out, "review: reviewing the run's changes")
	// Each review step is held to what the budget leaves when it starts:
	// a review reads the diff a task's agent wrote, which may be written
	// to have the reviewer spend.
	limit := func() agent.Limit { return e.o.Budget.limit(s, tasks) }
	if err := e.o.Reviewer.Review(ctx, s, tasks, limit); err != nil {
		e.o.Log.Warn("review failed", "session", s.Meta.ID, "err", err)
		fmt.Fprintf(e.o.Out, "review: failed: %v (the run's result stands)\n", err)
		if rerr := review.RecordFailure(path, err, e.o.Now().UTC()); rerr != nil {
			e.o.Log.Warn("recording the failed review", "err", rerr)
		}
	}
}

// SpentLine says what a session has spent so far: its cost, or "cost
// unknown" when no step had a price, and its tokens.
func SpentLine(u agent.Usage) string {
	n := u.InputTokens + u.OutputTokens
	tokens := plural.Count(int(n), "token", "tokens")
	switch {
	case n == 0 && u.CostUSD == 0:
		return "no model usage reported"
	case u.CostUSD == 0:
		return "spent " + tokens + " (cost unknown)"
	}
	return "spent " + render.Dollars(u.CostUSD) + " (" + tokens + ")"
}
