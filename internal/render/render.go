// Package render turns a session into text people read: the context.md
// report, task tables and status lines. Templates are embedded.
package render

import (
	"bytes"
	"embed"
	"fmt"
	"sort"
	"strings"
	"text/template"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/review"
	"github.com/planexhq/planex/internal/session"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// Report is everything context.md shows.
type Report struct {
	Meta        session.Meta
	Explore     []plan.ExploreRow
	Tasks       []plan.Task
	Discoveries []session.Discovery
	Spent       agent.Usage
	StopReason  string
	// Review is the review of the run's changes, when there is one.
	Review *review.Result
}

func funcs() template.FuncMap {
	return template.FuncMap{
		"cell":      Cell,
		"firstLine": func(s string) string { l, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); return l },
		"short":     Short,
		"usd":       USD,
		"planID":    func(ts []plan.Task) string { return plan.ID(plan.Hash(ts)) },
		"list":      func(ids []string) string { return orDash(strings.Join(ids, ", ")) },
		"table":     TaskTable,
		"trunc":     func(s string, n int) string { return plan.Truncate(s, n) },
		"quote": func(s string) string {
			lines := strings.Split(strings.TrimSpace(s), "\n")
			for i, l := range lines {
				lines[i] = strings.TrimRight("> "+l, " ")
			}
			return strings.Join(lines, "\n")
		},
	}
}

// Context renders context.md.
func Context(r Report) string {
	t := template.Must(template.New("").Funcs(funcs()).ParseFS(templateFS, "templates/context.md.tmpl"))
	files := map[string]bool{}
	for _, x := range r.Tasks {
		if x.Status == plan.StatusCompleted {
			for _, f := range x.FilesModified {
				files[f] = true
			}
		}
	}
	var fl []string
	for f := range files {
		fl = append(fl, f)
	}
	sort.Strings(fl)
	done := 0
	for _, e := range r.Explore {
		if e.Status == plan.StatusCompleted {
			done++
		}
	}
	var b bytes.Buffer
	err := t.ExecuteTemplate(&b, "context.md.tmpl", struct {
		Report
		Counts      plan.Counts
		Files       []string
		ExploreDone int
	}{r, plan.Count(r.Tasks), fl, done})
	if err != nil {
		// The template is embedded and tested; failing here is a bug.
		panic(fmt.Sprintf("rendering context.md: %v", err))
	}
	return b.String()
}

// TaskTable renders tasks as a Markdown table, by wave then id.
func TaskTable(tasks []plan.Task) string {
	sorted := append([]plan.Task(nil), tasks...)
	plan.SortByID(sorted)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Wave < sorted[j].Wave })
	var b strings.Builder
	b.WriteString("| Wave | Task | Title | Scope | Deps | Status |\n|---|---|---|---|---|---|\n")
	for _, t := range sorted {
		fmt.Fprintf(&b, "| %d | %s | %s | `%s` | %s | %s |\n", t.Wave, t.ID, Cell(t.Title), Cell(t.Scope), orDash(strings.Join(t.Deps, ", ")), t.Status)
	}
	return b.String()
}

// Cell makes text safe for one Markdown table cell or list item.
func Cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", "\\|")
}

// Short abbreviates a commit id.
func Short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}

// USD formats an estimated cost.
func USD(c float64) string {
	if c == 0 {
		return "$0 (not reported)"
	}
	return fmt.Sprintf("$%.4f", c)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// Status renders `planex status`: phases, waves and each task.
func Status(m session.Meta, explore []plan.ExploreRow, tasks []plan.Task, haveTasks bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "session  %s\nbranch   %s (from %s)\n", m.ID, m.Branch, Short(m.Base))
	fmt.Fprintf(&b, "request  %s\n", plan.Truncate(strings.Join(strings.Fields(m.Requirement), " "), 100))
	phase := func(name, state string) { fmt.Fprintf(&b, "  %-8s %s\n", name, state) }
	b.WriteString("phases\n")
	switch {
	case m.Imported:
		phase("analyze", "skipped (imported plan)")
		phase("explore", "skipped (imported plan)")
	case len(explore) == 0:
		phase("analyze", "pending")
		phase("explore", "pending")
	default:
		phase("analyze", fmt.Sprintf("done (%s, %s)", orDash(m.Type), orDash(m.Complexity)))
		done := 0
		for _, e := range explore {
			if e.Status.Done() {
				done++
			}
		}
		phase("explore", fmt.Sprintf("%d/%d angles finished", done, len(explore)))
	}
	switch {
	case !haveTasks:
		phase("plan", "pending")
	default:
		phase("plan", fmt.Sprintf("%d tasks, plan %s", len(tasks), plan.ID(plan.Hash(tasks))))
	}
	c := plan.Count(tasks)
	switch {
	case m.Cancelled:
		phase("execute", "cancelled")
	case m.WaitingAt != "":
		phase("execute", fmt.Sprintf("waiting for approval of the %s (planex --continue %s)", m.WaitingAt, m.ID))
	case !haveTasks:
		phase("execute", "pending")
	default:
		phase("execute", fmt.Sprintf("%d completed, %d failed, %d skipped, %d pending", c.Completed, c.Failed, c.Skipped, c.Pending))
	}
	if !m.Finished.IsZero() {
		phase("report", "written "+m.Finished.Format("2006-01-02 15:04 MST"))
	}
	if len(explore) > 0 {
		b.WriteString("explorations\n")
		for _, e := range explore {
			fmt.Fprintf(&b, "  %-4s %-20s %-9s %s\n", e.ID, e.Angle, e.Status, plan.Truncate(Cell(e.Error), 80))
		}
	}
	if haveTasks {
		sorted := append([]plan.Task(nil), tasks...)
		plan.SortByID(sorted)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Wave < sorted[j].Wave })
		wave := -1
		for _, t := range sorted {
			if t.Wave != wave {
				wave = t.Wave
				fmt.Fprintf(&b, "wave %d\n", wave)
			}
			extra := ""
			switch {
			case t.Commit != "":
				extra = "commit " + Short(t.Commit)
			case t.Error != "":
				extra = plan.Truncate(Cell(t.Error), 80)
			}
			fmt.Fprintf(&b, "  %-4s %-9s %-40s %s\n", t.ID, t.Status, plan.Truncate(t.Title, 40), extra)
		}
	}
	return b.String()
}
