package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/guidance"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/prompt"
	"github.com/planexhq/planex/internal/session"
)

// anglePresets are the design's fallback angles by requirement type.
func anglePresets(kind string) []string {
	switch kind {
	case "architecture", "refactor":
		return []string{"architecture", "dependencies", "modularity", "integration-points"}
	case "security":
		return []string{"security", "auth-patterns", "dataflow", "validation"}
	case "performance":
		return []string{"performance", "bottlenecks", "caching", "data-access"}
	case "bugfix":
		return []string{"error-handling", "dataflow", "state-management", "edge-cases"}
	default:
		return []string{"patterns", "integration-points", "testing", "dependencies"}
	}
}

var (
	reArch = regexp.MustCompile(`refactor|architect|restructure|modular`)
	reSec  = regexp.MustCompile(`security|auth|permission|access`)
	rePerf = regexp.MustCompile(`performance|slow|faster|speed|latency|optimi|cache`)
	reBug  = regexp.MustCompile(`fix|bug|error|issue|broken|crash`)
)

// guessType classifies a requirement by keywords, for the fallback.
// The first class whose keywords match wins.
func guessType(req string) string {
	t := strings.ToLower(req)
	for _, c := range []struct {
		typ      string
		keywords *regexp.Regexp
	}{
		{"architecture", reArch},
		{"security", reSec},
		{"performance", rePerf},
		{"bugfix", reBug},
	} {
		if c.keywords.MatchString(t) {
			return c.typ
		}
	}
	return "feature"
}

// angleCount maps complexity to the number of angles.
func angleCount(complexity string, proposed int) int {
	lo, hi := 2, 3
	switch complexity {
	case "Low":
		lo, hi = 1, 1
	case "High":
		lo, hi = 3, 4
	}
	n := proposed
	if n < lo {
		n = lo
	}
	if n > hi {
		n = hi
	}
	return n
}

// fallbackAngles builds preset angles for a requirement.
func fallbackAngles(req, kind string, n int) []agent.Angle {
	presets := anglePresets(kind)
	var out []agent.Angle
	for i := 0; i < n && i < len(presets); i++ {
		out = append(out, agent.Angle{
			ID: fmt.Sprintf("E%d", i+1), Angle: presets[i],
			Description: fmt.Sprintf("Explore the codebase from the %s angle for: %s", presets[i], abbrev.Truncate(abbrev.FirstLine(req), 120)),
			Focus:       presets[i],
		})
	}
	return out
}

func (e *Engine) common(ctx context.Context, s *session.Session, rc *RepoContext) prompt.Common {
	c := prompt.Common{Requirement: s.Meta.Requirement, Guidance: e.guidance(ctx, s)}
	if rc != nil {
		c.RepoSummary, c.KeyFiles = rc.Summary, rc.KeyFiles
	}
	return c
}

// guidance is the repository's guidance for agents (AGENTS.md and the
// like) as committed at the session's base, read once per engine. Every
// step of every agent kind is given it; without it the run goes on.
func (e *Engine) guidance(ctx context.Context, s *session.Session) string {
	e.guideMu.Lock()
	defer e.guideMu.Unlock()
	if text, ok := e.guide[s.Meta.Base]; ok {
		return text
	}
	docs, err := guidance.Load(ctx, e.repo, s.Meta.Base)
	if err != nil {
		e.o.Log.Warn("reading the repository's guidance for agents", "err", err)
	}
	text := guidance.Text(docs)
	if e.guide == nil {
		e.guide = map[string]string{}
	}
	e.guide[s.Meta.Base] = text
	return text
}

// analyze classifies the requirement and writes explore.csv. An agent
// that fails or answers nothing usable falls back to the presets.
func (e *Engine) analyze(ctx context.Context, s *session.Session, rc *RepoContext) error {
	e.phase("analyze")
	fmt.Fprintln(e.o.Out, "analyze: classifying the requirement")
	var res agent.AnalyzeResult
	p, err := e.prompts.Analyze(e.common(ctx, s, rc))
	if err != nil {
		return err
	}
	if err := e.canStart(s, nil, agent.PhaseAnalyze); err != nil {
		return err
	}
	r, err := e.runStep(ctx, s, agent.Step{Phase: agent.PhaseAnalyze, Prompt: p, Dir: e.repo.Root, Timeout: e.step(agent.PhaseAnalyze)})
	s.AddUsage("analyze", r.Usage)
	if err == nil {
		err = agent.Decode(agent.PhaseAnalyze, r.Raw, &res)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	kind := res.Type
	if kind == "" {
		kind = guessType(s.Meta.Requirement)
	}
	complexity := res.Complexity
	if complexity == "" {
		complexity = "Medium"
	}
	angles := dedupeAngles(res.Angles)
	n := angleCount(complexity, len(angles))
	if err != nil || len(angles) == 0 {
		if err != nil {
			fmt.Fprintf(e.o.Out, "analyze: agent gave no usable answer (%v); using the %s presets\n", abbrev.OneLine(err.Error()), kind)
		}
		angles = fallbackAngles(s.Meta.Requirement, kind, n)
	} else if len(angles) > n {
		angles = angles[:n]
	} else if len(angles) < n {
		// Top up from the presets, skipping angles already chosen.
		have := map[string]bool{}
		for _, a := range angles {
			have[a.Angle] = true
		}
		for _, f := range fallbackAngles(s.Meta.Requirement, kind, 4) {
			if len(angles) == n {
				break
			}
			if !have[f.Angle] {
				angles = append(angles, f)
			}
		}
	}
	rows := make([]plan.ExploreRow, len(angles))
	for i, a := range angles {
		rows[i] = plan.ExploreRow{ID: fmt.Sprintf("E%d", i+1), Angle: a.Angle, Description: a.Description, Focus: a.Focus, Wave: 1, Status: plan.StatusPending}
	}
	s.Meta.Type, s.Meta.Complexity = kind, complexity
	if err := s.SaveMeta(); err != nil {
		return err
	}
	fmt.Fprintf(e.o.Out, "analyze: %s, complexity %s, %s\n", kind, complexity, plural.Count(len(rows), "angle", "angles"))
	return s.WriteExplore(rows)
}

func dedupeAngles(in []agent.Angle) []agent.Angle {
	seen := map[string]bool{}
	var out []agent.Angle
	for _, a := range in {
		k := strings.ToLower(strings.TrimSpace(a.Angle))
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, a)
	}
	return out
}

// explore runs the pending angles concurrently, saving each row as it
// finishes.
func (e *Engine) explore(ctx context.Context, s *session.Session, rc *RepoContext) error {
	rows, err := s.ReadExplore()
	if err != nil {
		return err
	}
	for _, r := range rows {
		if !r.Status.Done() {
			e.phase("explore")
			break
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	sem := make(chan struct{}, e.o.Concurrency)
	// The explorations that run at once share what the budget left.
	var shared *agent.Shared
	if l := e.o.Budget.limit(s, nil); l != (agent.Limit{}) {
		shared = agent.NewShared(l)
	}
	for i := range rows {
		if rows[i].Status.Done() {
			continue
		}
		// A free slot first: the check then sees what the steps before
		// it spent, and whether they reached their model.
		sem <- struct{}{}
		// Under mu: the steps running write the session's usage.
		mu.Lock()
		err := e.canStart(s, nil, agent.PhaseExplore)
		limit := e.o.Budget.limit(s, nil)
		mu.Unlock()
		if err != nil {
			<-sem
			mu.Lock()
			firstErr = err
			mu.Unlock()
			break
		}
		if limit != (agent.Limit{}) {
			limit.Shared = shared
		}
		i := i
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			row := rows[i]
			fmt.Fprintf(e.o.Out, "explore %s (%s): started\n", row.ID, row.Angle)
			res, usage, err := e.exploreOne(ctx, s, rc, row, limit)
			if shared != nil {
				shared.Finish(row.ID, usage)
			}
			mu.Lock()
			defer mu.Unlock()
			s.AddUsage(row.ID, usage)
			if err != nil {
				row.Status, row.Error = plan.StatusFailed, abbrev.Truncate(abbrev.OneLine(err.Error()), 500)
			} else {
				row.Status = plan.Status(res.Status)
				row.Findings = abbrev.Truncate(strings.TrimSpace(res.Findings), 800)
				row.KeyFiles = res.KeyFiles
				row.Error = res.Error
			}
			rows[i] = row
			fmt.Fprintf(e.o.Out, "explore %s (%s): %s%s\n", row.ID, row.Angle, row.Status, suffix(row.Error))
			if werr := s.WriteExplore(rows); werr != nil && firstErr == nil {
				firstErr = werr
			}
			if werr := s.SaveMeta(); werr != nil && firstErr == nil {
				firstErr = werr
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return firstErr
}

// exploreOne runs one exploration, held to limit (see agent.Step.Limit).
func (e *Engine) exploreOne(ctx context.Context, s *session.Session, rc *RepoContext, row plan.ExploreRow, limit agent.Limit) (agent.ExploreResult, agent.Usage, error) {
	var res agent.ExploreResult
	angle := agent.Angle{ID: row.ID, Angle: row.Angle, Description: row.Description, Focus: row.Focus}
	c := e.common(ctx, s, rc)
	c.Discoveries = e.discoveriesText(s)
	p, err := e.prompts.Explore(c, angle)
	if err != nil {
		return res, agent.Usage{}, err
	}
	r, err := agent.RunStep(ctx, e.o.Agent, agent.Step{Phase: agent.PhaseExplore, ID: row.ID, Prompt: p, Dir: e.repo.Root, Timeout: e.step(agent.PhaseExplore), Limit: limit},
		s.File(session.DiscoveriesFile), e.o.Log)
	if err != nil {
		return res, r.Usage, err
	}
	if err := agent.Decode(agent.PhaseExplore, r.Raw, &res); err != nil {
		return res, r.Usage, err
	}
	// As for tasks: the row says which MCP tools the step used, so a
	// reviewer sees where findings came from.
	if len(r.MCPCalls) > 0 {
		res.Findings = strings.TrimSpace(res.Findings + " MCP tools called: " + strings.Join(r.MCPCalls, ", ") + ".")
	}
	return res, r.Usage, nil
}

// plan synthesizes tasks.csv from the completed explorations. If every
// exploration failed the agent plans from the requirement alone.
func (e *Engine) plan(ctx context.Context, s *session.Session, rc *RepoContext, feedback string) error {
	rows, err := s.ReadExplore()
	if err != nil {
		return err
	}
	var done []plan.ExploreRow
	for _, r := range rows {
		if r.Status == plan.StatusCompleted {
			done = append(done, r)
		}
	}
	e.phase("plan")
	if len(done) == 0 {
		fmt.Fprintln(e.o.Out, "plan: no exploration succeeded; planning from the requirement alone")
	}
	c := e.common(ctx, s, rc)
	c.Discoveries = e.discoveriesText(s)
	p, err := e.prompts.Plan(c, done, feedback)
	if err != nil {
		return err
	}
	if err := e.canStart(s, nil, agent.PhasePlan); err != nil {
		return err
	}
	fmt.Fprintln(e.o.Out, "plan: synthesizing tasks")
	r, err := e.runStep(ctx, s, agent.Step{Phase: agent.PhasePlan, Prompt: p, Dir: e.repo.Root, Timeout: e.step(agent.PhasePlan)})
	s.AddUsage("plan", r.Usage)
	if serr := s.SaveMeta(); serr != nil {
		return serr
	}
	if err != nil {
		return fmt.Errorf("planning failed: %w", err)
	}
	var res agent.PlanResult
	if err := agent.Decode(agent.PhasePlan, r.Raw, &res); err != nil {
		return fmt.Errorf("planning failed: %w", err)
	}
	tasks := TasksFromPlan(res)
	// Links to explorations that failed carry no context; drop them
	// rather than reject the plan.
	known := map[string]bool{}
	for _, r := range rows {
		known[r.ID] = true
	}
	for i := range tasks {
		var keep []string
		for _, id := range tasks[i].ContextFrom {
			if !strings.HasPrefix(id, "E") || known[id] {
				keep = append(keep, id)
			}
		}
		tasks[i].ContextFrom = keep
	}
	s.Meta.Summary, s.Meta.Approach = res.Summary, res.Approach
	if err := s.SaveMeta(); err != nil {
		return err
	}
	if _, err := plan.Validate(s.File(session.TasksFile), tasks, rows); err != nil {
		// Keep what the agent proposed so the user can fix it by hand.
		if werr := s.WriteTasks(tasks); werr != nil {
			return werr
		}
		return &InvalidPlanError{What: fmt.Sprintf("the agent's plan is not valid; edit %s and run planex --continue %s", s.File(session.TasksFile), s.Meta.ID), Err: err}
	}
	fmt.Fprintf(e.o.Out, "plan: %s\n", plural.Count(len(tasks), "task", "tasks"))
	return s.WriteTasks(tasks)
}

// TasksFromPlan converts a plan result into pending task rows.
func TasksFromPlan(res agent.PlanResult) []plan.Task {
	tasks := make([]plan.Task, len(res.Tasks))
	for i, t := range res.Tasks {
		tasks[i] = plan.Task{
			ID: t.ID, Title: t.Title, Description: t.Description, Test: t.Test,
			AcceptanceCriteria: t.AcceptanceCriteria, Scope: t.Scope, Hints: plan.ParseHints(t.Hints),
			ExecutionDirectives: t.ExecutionDirectives, Deps: t.Deps, ContextFrom: t.ContextFrom,
			Status: plan.StatusPending,
		}
	}
	return tasks
}

// seedDiscoveries puts what the repository map found on the board once.
func (e *Engine) seedDiscoveries(s *session.Session, rc *RepoContext) {
	if s.Exists(session.DiscoveriesFile) || len(rc.Discoveries) == 0 {
		return
	}
	now := e.o.Now().UTC().Format(time.RFC3339)
	for _, d := range rc.Discoveries {
		if d.TS == "" {
			d.TS = now
		}
		if d.Worker == "" {
			d.Worker = "repomap"
		}
		if err := session.AppendDiscovery(s.File(session.DiscoveriesFile), d); err != nil {
			e.o.Log.Warn("seeding discovery", "err", err)
		}
	}
}

// runStep runs one agent step of a session; the agent writes discoveries
// to a file of its own, which planex adds to the session's board.
func (e *Engine) runStep(ctx context.Context, s *session.Session, step agent.Step) (agent.Result, error) {
	step.Limit = e.o.Budget.limit(s, nil)
	return agent.RunStep(ctx, e.o.Agent, step, s.File(session.DiscoveriesFile), e.o.Log)
}

// discoveriesText renders the board for a prompt, capped in size.
func (e *Engine) discoveriesText(s *session.Session) string {
	ds, err := session.ReadDiscoveries(s.File(session.DiscoveriesFile), e.o.Log)
	if err != nil {
		e.o.Log.Warn("reading discoveries", "err", err)
	}
	var b strings.Builder
	for _, d := range ds {
		var data any
		json.Unmarshal(d.Data, &data)
		line, _ := json.Marshal(data)
		fmt.Fprintf(&b, "- [%s from %s] %s\n", d.Type, d.Worker, line)
		if b.Len() > 6000 {
			b.WriteString("- …\n")
			break
		}
	}
	return b.String()
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}
