// Package render turns a session into text people read: the context.md
// report, task tables and status lines. Templates are embedded.
package render

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/render/md"
	"github.com/planexhq/planex/internal/review"
	"github.com/planexhq/planex/internal/session"
	"github.com/planexhq/planex/internal/tmpl"
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

// funcs are the templates' helpers. Every value planex did not write
// itself (the agents' text, the requirement, file names) goes through
// one of the md escapers: text, cell, paras, quote, code or codecell.
func funcs() tmpl.FuncMap {
	return tmpl.FuncMap{
		"text":      escaper(md.Text),
		"cell":      escaper(md.Cell),
		"paras":     escaper(md.Block),
		"quote":     escaper(md.Quote),
		"code":      escaper(md.Code),
		"codecell":  escaper(md.CodeCell),
		"firstLine": abbrev.FirstLine,
		"short":     abbrev.SHA,
		"usd":       USD,
		"inTokens":  InputTokens,
		"planID":    func(ts []plan.Task) string { return plan.ID(plan.Hash(ts)) },
		"list":      idList,
		"codes":     codeList,
		"taskFiles": taskFiles,
		"table":     TaskTable,
		"trunc":     abbrev.Truncate,
		"orDash":    orDash,
		"capIDs":    capIDs,
		"idRanges":  idRanges,
		"login":     login,
		"mark":      Mark,
		"passed":    testsMark,
		"met":       metMark,
		"reason":    reason,
		"count":     plural.Count,
		// Templates read fields only (see internal/tmpl): what review
		// computes by method comes through these.
		"findings": (*review.Result).Findings,
		"where":    review.Finding.Where,
	}
}

// Mark is a task's or exploration's status with its mark: ✅ completed,
// ❌ failed, ⏭️ skipped. A status planex does not know is shown as
// written (escaped), never as one it is not.
func Mark(s plan.Status) string {
	switch s {
	case plan.StatusCompleted, plan.StatusFailed, plan.StatusSkipped, plan.StatusRunning, plan.StatusPending:
		return statusIcon(s)
	}
	return md.Cell(string(s))
}

// testsMark shows tests_passed: ✅ passed (planex ran them), ❔ the
// agent's word when planex ran none, ❌ failed, or — when no test ran.
func testsMark(v plan.TestResult) string {
	switch v {
	case plan.TestsPass:
		return "✅ passed"
	case plan.TestsClaimed:
		return "❔ agent says passed (not run by planex)"
	case plan.TestsFail:
		return "❌ failed"
	}
	return "—"
}

// metMark shows whether a review criterion is met.
func metMark(met bool) string {
	if met {
		return "✅ yes"
	}
	return "❌ **no**"
}

// reason is a task's error without a repeated status label: a skipped
// task's "skipped: dependency T2 failed" (as sessions written by earlier
// versions say) reads "dependency T2 failed" after its ⏭️ skipped mark.
func reason(s plan.Status, err string) string {
	if rest, ok := strings.CutPrefix(strings.TrimSpace(err), string(s)+":"); ok && s != "" {
		err = rest
	}
	return md.Text(strings.TrimSpace(err))
}

// escaper lets a template apply f to any string-like value (statuses,
// severities and verdicts have types of their own).
func escaper(f func(string) string) func(any) string {
	return func(v any) string {
		switch x := v.(type) {
		case nil:
			return ""
		case string:
			return f(x)
		case fmt.Stringer:
			return f(x.String())
		}
		return f(fmt.Sprint(v))
	}
}

// login renders a GitHub login as a mention (planex means to notify
// the approver); anything that is not a login is escaped text.
func login(s string) string {
	if loginRe.MatchString(s) {
		return "@" + s
	}
	return md.Text(s)
}

var loginRe = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)

// idList renders ids (task or exploration ids) for running text or a
// table cell.
func idList(ids []string) string { return orDash(md.Cell(strings.Join(ids, ", "))) }

// codeList renders paths as code spans separated by commas.
func codeList(paths []string) string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if c := md.Code(p); c != "" {
			out = append(out, c)
		}
	}
	return strings.Join(out, ", ")
}

// maxTaskFiles is how many of a task's files its section of context.md
// names; the run's list under "Files modified" names them all.
const maxTaskFiles = 50

// taskFiles renders a task's files as codeList does, the first
// maxTaskFiles of them: an agent that makes thousands of files must not
// push the later tasks' sections, their failures among them, past the
// part of the report the job summary holds (StepSummary).
func taskFiles(paths []string) string {
	if len(paths) <= maxTaskFiles {
		return codeList(paths)
	}
	return codeList(paths[:maxTaskFiles]) + fmt.Sprintf(" and %d more (under Files modified)", len(paths)-maxTaskFiles)
}

// Context renders context.md.
func Context(r Report) string {
	t := tmpl.Must(tmpl.ParseFS(templateFS, funcs(), "templates/context.md.tmpl"))
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
	err := t.Execute(&b, "context.md.tmpl", struct {
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
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", t.Wave, md.Cell(t.ID), md.Cell(t.Title), md.CodeCell(t.Scope), idList(t.Deps), Mark(t.Status))
	}
	return b.String()
}

// Cell makes text safe for one Markdown table cell (see md.Cell).
func Cell(s string) string { return md.Cell(s) }

// Text, Code and CodeBlock escape what planex did not write for the
// messages composed outside this package (replies, notes); see md.
func Text(s string) string { return md.Text(s) }

// Code renders s as an inline code span (see md.Code).
func Code(s string) string { return md.Code(s) }

// CodeBlock renders s as a fenced code block s cannot close (see
// md.CodeBlock).
func CodeBlock(info, s string) string { return md.CodeBlock(info, s) }

// USD formats an estimated cost in a report, where zero means that no
// agent reported one.
func USD(c float64) string {
	if c == 0 {
		return "$0 (not reported)"
	}
	return Dollars(c)
}

// InputTokens formats a count of input tokens, naming the parts read from
// and written to the provider's prompt cache when there are any: they are
// billed at other rates than the rest, so the cost reads right only with
// them.
func InputTokens(in, cacheRead, cacheWrite int64) string {
	var parts []string
	if cacheRead > 0 {
		parts = append(parts, fmt.Sprintf("%d read from cache", cacheRead))
	}
	if cacheWrite > 0 {
		parts = append(parts, fmt.Sprintf("%d written to cache", cacheWrite))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d in", in)
	}
	return fmt.Sprintf("%d in (%s)", in, strings.Join(parts, ", "))
}

// Dollars formats an amount of money. Every cost planex shows has this
// one precision, cents; an amount above zero but below a cent is not
// shown as nothing.
func Dollars(c float64) string {
	if c > 0 && c < 0.005 {
		return "<$0.01"
	}
	return fmt.Sprintf("$%.2f", c)
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
	fmt.Fprintf(&b, "session  %s\nbranch   %s (from %s)\n", m.ID, m.Branch, abbrev.SHA(m.Base))
	fmt.Fprintf(&b, "request  %s\n", abbrev.Truncate(abbrev.PlainLine(m.Requirement), 100))
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
		phase("analyze", fmt.Sprintf("done (%s, %s)", orDash(abbrev.PlainLine(m.Type)), orDash(abbrev.PlainLine(m.Complexity))))
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
		phase("plan", fmt.Sprintf("%s, plan %s", plural.Count(len(tasks), "task", "tasks"), plan.ID(plan.Hash(tasks))))
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
			fmt.Fprintf(&b, "  %-4s %-20s %-9s %s\n", abbrev.PlainLine(e.ID), abbrev.PlainLine(e.Angle), abbrev.PlainLine(string(e.Status)), abbrev.Truncate(abbrev.PlainLine(e.Error), 80))
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
				extra = "commit " + abbrev.SHA(t.Commit)
			case t.Error != "":
				extra = abbrev.Truncate(abbrev.PlainLine(t.Error), 80)
			}
			fmt.Fprintf(&b, "  %-4s %-9s %-40s %s\n", abbrev.PlainLine(t.ID), abbrev.PlainLine(string(t.Status)), abbrev.Truncate(abbrev.PlainLine(t.Title), 40), extra)
		}
	}
	return b.String()
}
