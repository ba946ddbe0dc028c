package render

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/render/md"
	"github.com/planexhq/planex/internal/tmpl"
)

// PRView is what the pull request body shows.
type PRView struct {
	Report
	Issue      int
	ApprovedBy string
	Summary    string
	// NoCI: planex opened the pull request with the workflow's default
	// GITHUB_TOKEN, so GitHub runs no workflow for it; the body says so.
	NoCI bool
	// Others are commits on the run branch that no task of the run made
	// (pushed by someone, with or without planex's trailers of another
	// session), at most a few; OthersCount is how many there are.
	Others      []Commit
	OthersCount int
	// Heading, when set, starts the text (a follow-up's report is a
	// comment under a heading); it counts towards GitHub's limit.
	Heading string
	// Hidden are files of the run's changes whose diff GitHub hides by the
	// repository's attributes (at most a few); HiddenCount is how many
	// there are, or -1 when planex could not tell (the body says so).
	Hidden      []HiddenFile
	HiddenCount int
}

// HiddenFile is a changed file GitHub's diff hides, and the attribute
// that hides it (`-diff`, `linguist-generated`).
type HiddenFile struct{ Path, Why string }

// Commit is a commit the pull request body names.
type Commit struct{ SHA, Subject string }

// CIDocsURL explains how to have CI run on planex's pull requests.
const CIDocsURL = "https://github.com/planexhq/planex/blob/main/docs/action.md#pull-requests-that-run-ci"

// PRBody renders the pull request body (the run's report), within
// GitHub's size limit.
func PRBody(v PRView) string {
	if v.Summary == "" {
		v.Summary = v.Meta.Summary
	}
	sorted := append([]plan.Task(nil), v.Tasks...)
	plan.SortByID(sorted)
	var problems []plan.Task
	refused := false
	for _, t := range sorted {
		refused = refused || t.NetworkRefused != ""
		if t.Status == plan.StatusFailed || t.Status == plan.StatusSkipped {
			problems = append(problems, t)
		}
	}
	t := tmpl.Must(tmpl.ParseFS(templateFS, funcs(), "templates/pr-body.md.tmpl"))
	var b bytes.Buffer
	err := t.Execute(&b, "pr-body.md.tmpl", struct {
		PRView
		Counts      plan.Counts
		SortedTasks []plan.Task
		Problems    []plan.Task
		CIDocsURL   string
		Refused     bool
		OthersMore  int
		Attributes  []string
		HiddenMore  int
	}{v, plan.Count(v.Tasks), sorted, problems, CIDocsURL, refused, max(v.OthersCount-len(v.Others), 0), AttributeFiles(sorted),
		max(v.HiddenCount-len(v.Hidden), 0)})
	if err != nil {
		panic(fmt.Sprintf("rendering pull request body: %v", err))
	}
	out := b.String()
	if v.Heading != "" {
		out = v.Heading + "\n\n" + out
	}
	if len(out) > MaxCommentBytes {
		// Cut between lines, so no escape or code span is cut in two, and
		// close the <details> planex opened if the cut fell inside it.
		out = cutMarkdown(out, MaxCommentBytes-300)
		out += "\n… (truncated; the full report is context.md in the session state)\n"
		if v.Issue > 0 {
			out += fmt.Sprintf("\nCloses #%d\n", v.Issue)
		}
	}
	return out
}

// maxAttributeFiles bounds the .gitattributes files the body names.
const maxAttributeFiles = 20

// AttributeFiles lists the .gitattributes files the tasks changed, in any
// folder (at most maxAttributeFiles): GitHub's diff of the pull request honours them, so one an agent
// wrote (`evil.js -diff`, `linguist-generated`) shows a file's changes as
// binary or collapses them, out of a person's sight.
func AttributeFiles(tasks []plan.Task) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tasks {
		for _, f := range t.FilesModified {
			if (f == ".gitattributes" || strings.HasSuffix(f, "/.gitattributes")) && !seen[f] && len(out) < maxAttributeFiles {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// AttributesWarning is the warning a CI-fix round's section of the pull
// request's body carries for the .gitattributes files its tasks changed
// (AttributeFiles), or "" when they changed none: the round's agent
// writes to the same branch, and the body's own warning tells only the
// first run's tasks.
func AttributesWarning(tasks []plan.Task) string {
	files := AttributeFiles(tasks)
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n> [!WARNING]\n> **This round changes what GitHub's diff shows:** a `.gitattributes` file can mark files binary (`-diff`) or generated (`linguist-generated`), which hides or collapses their changes. Read these first, and the files they name in full:\n")
	for _, f := range files {
		b.WriteString("> - " + Code(f) + "\n")
	}
	return b.String()
}

// PlainURL says whether u is an http(s) address that Markdown shows as
// one link and nothing else: no white space, no character that could end
// it or start markup (<>()[]`"'\|), no user information, no "@". The
// addresses planex shows come from its record, which a forged state ref
// may have filled with Markdown of its own (a team mention, an image).
func PlainURL(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "https" || p.Scheme == "http") && p.Host != "" && p.User == nil &&
		!strings.ContainsAny(u, " \t\r\n<>()[]`\"'\\|@")
}

// StatusView is the progress comment edited as waves run.
type StatusView struct {
	Session string
	PlanID  string
	State   string // planned, running, done, failed, cancelled
	Tasks   []plan.Task
	Note    string
	PRURL   string
	RunURL  string
	Updated time.Time
}

const statusMarker = "<!-- planex:status -->"

// IsStatusComment reports whether a body is planex's status comment.
func IsStatusComment(body string) bool { return strings.HasPrefix(body, statusMarker) }

// StatusComment renders the progress comment. A plan with very many
// tasks gets shorter titles, then none, so that the comment stays
// within GitHub's limit with every task listed.
func StatusComment(v StatusView) string {
	var out string
	for _, titleMax := range []int{60, 20, 0} {
		if out = statusComment(v, titleMax); len(out) <= MaxCommentBytes {
			break
		}
	}
	return out
}

func statusComment(v StatusView, titleMax int) string {
	var b strings.Builder
	b.WriteString(statusMarker + "\n")
	fmt.Fprintf(&b, "**planex** · plan %s · **%s**\n\n", orDash(md.Code(v.PlanID)), md.Text(v.State))
	if v.Note != "" {
		// The note is planex's own Markdown; the callers escape what they
		// put in it.
		b.WriteString(v.Note + "\n\n")
	}
	if len(v.Tasks) > 0 {
		c := plan.Count(v.Tasks)
		fmt.Fprintf(&b, "%d completed · %d failed · %d skipped · %d pending\n\n", c.Completed, c.Failed, c.Skipped, c.Pending)
		b.WriteString("| Wave | Task | Status |\n|---|---|---|\n")
		for _, w := range waves(v.Tasks) {
			for _, t := range w.Tasks {
				name := md.Cell(t.ID)
				if titleMax > 0 {
					name += ": " + md.Cell(abbrev.Truncate(t.Title, titleMax))
				}
				fmt.Fprintf(&b, "| %d | %s | %s |\n", w.N, name, statusIcon(t.Status))
			}
		}
		b.WriteString("\n")
	}
	if PlainURL(v.PRURL) {
		fmt.Fprintf(&b, "Pull request: %s\n\n", v.PRURL)
	}
	if PlainURL(v.RunURL) {
		fmt.Fprintf(&b, "[Workflow run](%s) · ", v.RunURL)
	}
	fmt.Fprintf(&b, "last updated %s", v.Updated.UTC().Format("2006-01-02 15:04:05 MST"))
	return b.String()
}

func statusIcon(s plan.Status) string {
	switch s {
	case plan.StatusCompleted:
		return "✅ completed"
	case plan.StatusFailed:
		return "❌ failed"
	case plan.StatusSkipped:
		return "⏭️ skipped"
	case plan.StatusRunning:
		return "⏳ running"
	}
	return "⏸️ pending"
}
