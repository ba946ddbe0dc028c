package review

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/render/md"
)

// Inline is a finding anchored to a line the diff adds.
type Inline struct {
	Finding Finding
	Path    string
	Line    int
	Body    string
}

// Place splits findings into inline comments (on lines d adds) and those
// that can only be told in the review's body (unchanged lines, files the
// diff does not touch, no line). skip holds finding keys that already
// have an inline comment on the pull request; those are neither commented
// again nor repeated in the body.
func Place(findings []Finding, d Diff, skip map[string]bool) (inline []Inline, body []Finding) {
	for _, f := range findings {
		if f.Line > 0 && d.Added(f.File, f.Line) {
			if skip[f.Key] {
				continue
			}
			inline = append(inline, Inline{Finding: f, Path: f.File, Line: f.Line, Body: InlineBody(f)})
			continue
		}
		body = append(body, f)
	}
	return inline, body
}

// Markers planex leaves in what it posts. They are HTML comments, so
// GitHub does not show them.
const (
	summaryMarker = "<!-- planex:review "
	findingMarker = "<!-- planex:finding "
	fixedMarker   = "<!-- planex:fixed "
	batchMarker   = "<!-- planex:review-comments -->"
)

// InlineBody is the text of an inline comment for f.
func InlineBody(f Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** %s\n\n%s\n", badge(f.Severity), md.Text(string(f.Severity)), md.Block(f.Explanation))
	if f.Suggestion != "" {
		fmt.Fprintf(&b, "\n**Suggested change:** %s\n", md.Block(f.Suggestion))
	}
	fmt.Fprintf(&b, "\n<sub>planex review · finding %s", md.Text(f.ID))
	if f.Severity == High {
		b.WriteString(" · `/planex fix` plans a follow-up for it")
	}
	fmt.Fprintf(&b, "</sub>\n%s%s -->", findingMarker, f.Key)
	return b.String()
}

// The markers are read only where planex writes them: alone on their
// line (a summary's and an inline comment's is the last one). What
// agents write is escaped (see internal/render/md) and can hold no
// "<!--"; the anchors are a second line of defence.
var findingRe = regexp.MustCompile(`(?m)^<!-- planex:finding ([0-9a-f]{6,64}) -->\r?$`)

// FindingKeyOf returns the finding key an inline comment body carries.
func FindingKeyOf(body string) (string, bool) {
	ms := findingRe.FindAllStringSubmatch(body, -1)
	if ms == nil {
		return "", false
	}
	return ms[len(ms)-1][1], true
}

// FixedBody is planex's reply in a finding's (or a reviewer's) thread when
// the task that answers it is done. key may be empty (a human's comment).
func FixedBody(text, key string) string {
	if key == "" {
		return text
	}
	return text + "\n" + fixedMarker + key + " -->"
}

var fixedRe = regexp.MustCompile(`(?m)^<!-- planex:fixed ([0-9a-f]{6,64}) -->\r?$`)

// FixedKeys returns the finding keys a comment says are fixed.
func FixedKeys(body string) []string {
	var out []string
	for _, m := range fixedRe.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// BatchBody is the body of a review that only carries new inline comments
// of a re-run (the summary lives in planex's earlier review, updated in
// place).
func BatchBody(n int) string {
	return fmt.Sprintf("planex re-reviewed this pull request: %s. The summary is in planex's first review above, updated for this run.\n\n%s", plural.Count(n, "new inline finding", "new inline findings"), batchMarker)
}

// Data is what the summary's marker carries for later runs: enough to plan
// fixes without trusting anything but planex's own review.
type Data struct {
	Kind     string        `json:"kind"`
	Session  string        `json:"session,omitempty"`
	Head     string        `json:"head,omitempty"`
	Findings []DataFinding `json:"findings"`
}

// DataFinding is a finding in the marker, shortened.
type DataFinding struct {
	ID          string   `json:"id"`
	Key         string   `json:"key"`
	Severity    Severity `json:"sev"`
	File        string   `json:"file"`
	Line        int      `json:"line,omitempty"`
	Inline      bool     `json:"inline,omitempty"`
	Explanation string   `json:"text"`
	Suggestion  string   `json:"fix,omitempty"`
}

// maxDataFindings bounds the marker (a review body holds 65,536 bytes).
const maxDataFindings = 60

// IsSummary reports whether body is one of planex's review summaries.
func IsSummary(body string) bool { return strings.Contains(body, summaryMarker) }

var summaryRe = regexp.MustCompile(`(?m)^<!-- planex:review v1 ([A-Za-z0-9_-]+) -->\r?$`)

// ParseSummary reads the marker of a summary body (its last one).
func ParseSummary(body string) (Data, bool) {
	ms := summaryRe.FindAllStringSubmatch(body, -1)
	if ms == nil {
		return Data{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(ms[len(ms)-1][1])
	if err != nil {
		return Data{}, false
	}
	var d Data
	if json.Unmarshal(raw, &d) != nil {
		return Data{}, false
	}
	return d, true
}

func marker(r *Result, inline map[string]bool) string {
	d := Data{Kind: r.Kind, Session: r.Session, Head: r.Head, Findings: []DataFinding{}}
	for _, f := range r.Findings() {
		if len(d.Findings) == maxDataFindings {
			break
		}
		d.Findings = append(d.Findings, DataFinding{ID: f.ID, Key: f.Key, Severity: f.Severity, File: f.File, Line: f.Line,
			Inline: inline[f.Key], Explanation: abbrev.Truncate(f.Explanation, 400), Suggestion: abbrev.Truncate(f.Suggestion, 300)})
	}
	b, _ := json.Marshal(d)
	return summaryMarker + "v1 " + base64.RawURLEncoding.EncodeToString(b) + " -->"
}

// SummaryOptions tune the summary body.
type SummaryOptions struct {
	// Inline holds the keys of findings that are (or already were) inline
	// comments; the others are listed in the body.
	Inline map[string]bool
	// Trigger is the command prefix ("/planex") for the fix hint.
	Trigger string
	// Fixable says whether `/planex fix` works here (planex's own pull
	// requests).
	Fixable bool
}

// maxBody keeps a summary under GitHub's limit with room to spare.
const maxBody = 60000

// Summary renders the review's body: verdict, a table of tasks ×
// criteria, the findings that are not inline comments, and the marker.
func Summary(r *Result, o SummaryOptions) string {
	var b strings.Builder
	all := r.Findings()
	counts := map[Severity]int{}
	for _, f := range all {
		counts[f.Severity]++
	}
	writeSummaryHead(&b, r, len(all), counts)
	writeCriteriaTable(&b, r.Tasks)
	writeTaskVerdicts(&b, r.Tasks)
	writeBodyFindings(&b, all, o.Inline)
	if o.Fixable && counts[High] > 0 {
		trigger := o.Trigger
		if trigger == "" {
			trigger = "/planex"
		}
		fmt.Fprintf(&b, "\n`%s fix` plans follow-up tasks on this branch for the open high-severity findings.\n", trigger)
	}
	b.WriteString("\n" + marker(r, o.Inline) + "\n")
	return b.String()
}

// writeSummaryHead writes the heading, the verdict line and, for a review
// that did not finish, why.
func writeSummaryHead(b *strings.Builder, r *Result, findings int, counts map[Severity]int) {
	b.WriteString("## planex review\n\n")
	what := plural.Count(len(r.Tasks), "task", "tasks") + " reviewed"
	if r.Kind == KindPullRequest {
		what = "the pull request's diff reviewed against its description"
	}
	fmt.Fprintf(b, "**Verdict: %s** · %s · %s: %d high, %d medium, %d low", verdictText(r.Verdict), what, plural.Count(findings, "finding", "findings"), counts[High], counts[Medium], counts[Low])
	if r.Head != "" {
		fmt.Fprintf(b, " · at `%s`", abbrev.SHA(r.Head))
	}
	b.WriteString("\n\nplanex comments; it never approves. A person decides whether this merges.\n")
	if r.Status == StatusFailed && r.Error != "" {
		fmt.Fprintf(b, "\n> **The review did not finish:** %s\n", md.Text(r.Error))
	}
}

// writeCriteriaTable writes the table of tasks × criteria: one row a
// criterion, or one row for a task that was not reviewed or had none.
func writeCriteriaTable(b *strings.Builder, tasks []TaskReview) {
	b.WriteString("\n| Task | Criterion | Met | Evidence |\n|---|---|---|---|\n")
	rows := 0
	for _, t := range tasks {
		name := t.Task
		if t.Title != "" && t.Task != "PR" {
			name += " " + t.Title
		}
		if t.Error != "" {
			fmt.Fprintf(b, "| %s | *not reviewed: %s* | — | — |\n", md.Cell(name), md.Cell(abbrev.Truncate(t.Error, 200)))
			rows++
			continue
		}
		if len(t.Criteria) == 0 {
			fmt.Fprintf(b, "| %s | *no criteria given* | — | — |\n", md.Cell(name))
			rows++
			continue
		}
		for i, c := range t.Criteria {
			label := ""
			if i == 0 {
				label = md.Cell(name)
			}
			met := "❌ no"
			if c.Met {
				met = "✅ yes"
			}
			ev := "—"
			if c.Evidence != "" {
				ev = md.CodeCell(c.Evidence)
			}
			crit := md.Cell(abbrev.Truncate(c.Criterion, 200))
			if c.Note != "" {
				crit += " — " + md.Cell(abbrev.Truncate(c.Note, 200))
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", label, crit, met, ev)
			rows++
		}
	}
	if rows == 0 {
		b.WriteString("| — | *nothing was reviewed* | — | — |\n")
	}
}

// writeTaskVerdicts lists each task's own verdict and summary, if any.
func writeTaskVerdicts(b *strings.Builder, tasks []TaskReview) {
	var verdicts []string
	for _, t := range tasks {
		if t.Summary != "" || t.Verdict != "" {
			verdicts = append(verdicts, fmt.Sprintf("- **%s** (%s): %s", md.Text(t.Task), verdictText(t.Verdict), md.Text(abbrev.Truncate(t.Summary, 600))))
		}
	}
	if len(verdicts) > 0 {
		b.WriteString("\n### Verdicts\n\n" + strings.Join(verdicts, "\n") + "\n")
	}
}

// writeBodyFindings counts the findings posted inline and lists the
// others, stopping well before the body would outgrow GitHub's limit.
func writeBodyFindings(b *strings.Builder, all []Finding, inline map[string]bool) {
	var bodyOnly []Finding
	inlineN := 0
	for _, f := range all {
		if inline[f.Key] {
			inlineN++
			continue
		}
		bodyOnly = append(bodyOnly, f)
	}
	if inlineN > 0 {
		fmt.Fprintf(b, "\n%s.\n", plural.Count(inlineN, "finding is an inline comment on the line it concerns", "findings are inline comments on the lines they concern"))
	}
	if len(bodyOnly) == 0 {
		return
	}
	b.WriteString("\n### Findings not on a changed line\n\n")
	for _, f := range bodyOnly {
		fmt.Fprintf(b, "- %s **%s** %s (%s): %s", badge(f.Severity), md.Text(string(f.Severity)), md.Code(f.Where()), md.Text(f.ID), md.Text(abbrev.Truncate(f.Explanation, 800)))
		if f.Suggestion != "" {
			fmt.Fprintf(b, " *Suggested:* %s", md.Text(abbrev.Truncate(f.Suggestion, 500)))
		}
		b.WriteString("\n")
		if b.Len() > maxBody-8000 {
			b.WriteString("- … (more findings are in review.json of the run)\n")
			break
		}
	}
}

func verdictText(v string) string {
	switch v {
	case VerdictPass:
		return "pass"
	case VerdictFail:
		return "fail"
	case VerdictConcerns:
		return "concerns"
	}
	return "—"
}

func badge(s Severity) string {
	switch s {
	case High:
		return "🔴"
	case Medium:
		return "🟠"
	}
	return "🟡"
}
