// Package prompt renders the instructions planex gives agents. Untrusted
// text (requirements, issue bodies, findings, repository content) is
// always placed inside <data> blocks, and any block markers inside it are
// neutralised so it cannot close the block early. The repository's own
// guidance for agents (AGENTS.md and the like) has a <guidance> block of
// its own, which the rules rank below planex's.
package prompt

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"strings"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/gfm"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/tmpl"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// Set is the parsed templates.
type Set struct{ t *tmpl.Template }

// Load parses the embedded templates.
func Load() (*Set, error) {
	t, err := tmpl.ParseFS(templateFS, tmpl.FuncMap{"join": strings.Join}, "templates/*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("parsing prompt templates: %w", err)
	}
	return &Set{t: t}, nil
}

// Common is what every prompt may show.
type Common struct {
	Requirement string
	RepoSummary string
	KeyFiles    []string
	Discoveries string
	Worker      string
	Execute     bool
	// Detached: the working directory is a scratch folder, not the
	// repository (a pull request review from its diff alone).
	Detached bool
	// Guidance is the repository's guidance for agents (package guidance).
	Guidance string
}

// Analyze renders the analyze prompt.
func (s *Set) Analyze(c Common) (string, error) {
	c.Worker = "analyze"
	return s.render("analyze.tmpl", c)
}

// Explore renders one angle's prompt.
func (s *Set) Explore(c Common, angle agent.Angle) (string, error) {
	c.Worker = angle.ID
	return s.render("explore.tmpl", struct {
		Common
		Angle agent.Angle
	}{c, angle})
}

// Plan renders the planning prompt from completed explorations.
func (s *Set) Plan(c Common, explorations []plan.ExploreRow, feedback string) (string, error) {
	c.Worker = "plan"
	return s.render("plan.tmpl", struct {
		Common
		Explorations []plan.ExploreRow
		Feedback     string
	}{c, explorations, feedback})
}

// Execute renders a task's prompt, with the task's text as the approver
// read it (visibleTask).
func (s *Set) Execute(c Common, t plan.Task, prevContext, directives string) (string, error) {
	t = visibleTask(t)
	c.Worker = t.ID
	c.Execute = true
	return s.render("execute.tmpl", struct {
		Common
		Task        plan.Task
		PrevContext string
		Directives  string
	}{c, t, prevContext, directives})
}

// ReviewTask is what the review of one task shows.
type ReviewTask struct {
	Task plan.Task
	// Approach and Summary are the plan's.
	Approach, Summary string
	// Diff is `git show` of the task's commit (possibly cut short).
	Diff      string
	Truncated bool
}

// visibleTask is t's text as the approver read it in the plan comment:
// characters that display as nothing (tag characters, bidi controls,
// zero-width ones) are dropped, so a planner cannot pass the agents that
// carry out or review a task instructions nobody could see.
func visibleTask(t plan.Task) plan.Task {
	for _, f := range []*string{&t.ID, &t.Title, &t.Description, &t.Test, &t.AcceptanceCriteria, &t.Scope, &t.Hints.Tips} {
		*f = gfm.StripInvisible(*f)
	}
	files := make([]string, len(t.Hints.Files))
	for i, f := range t.Hints.Files {
		files[i] = gfm.StripInvisible(f)
	}
	t.Hints.Files = files
	return t
}

// Review renders the prompt that reviews one task's commit read-only,
// with the task's text as the approver read it (visibleTask); the diff
// is shown as it is.
func (s *Set) Review(c Common, in ReviewTask) (string, error) {
	in.Task = visibleTask(in.Task)
	c.Worker = "review"
	return s.render("review.tmpl", struct {
		Common
		ReviewTask
	}{c, in})
}

// ReviewPR is what the review of a pull request shows.
type ReviewPR struct {
	Number      int
	Title, Body string
	Diff        string
	Truncated   bool
	// DiffFile is the diff's file name in the working directory.
	DiffFile string
}

// PullRequestReview renders the prompt that reviews a pull request from
// its diff alone; the working directory is a scratch folder.
func (s *Set) PullRequestReview(in ReviewPR) (string, error) {
	c := Common{Worker: "review", Detached: true, Requirement: strings.TrimSpace(in.Title + "\n\n" + in.Body)}
	return s.render("review-pr.tmpl", struct {
		Common
		ReviewPR
	}{c, in})
}

func (s *Set) render(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := s.t.Execute(&b, name, sanitize(data)); err != nil {
		return "", fmt.Errorf("rendering %s: %w", name, err)
	}
	return b.String(), nil
}

// Defuse stops untrusted text from closing or opening a <data> or
// <guidance> block: a zero-width space follows the tag's name, in any
// case and spacing a reader would still take for the tag (</Data>,
// </ guidance >, <data class="x">), with the fullwidth and small forms
// of <, / and > and of the name's letters (which Unicode's compatibility
// normalisation reads as the plain ones) and any Unicode space. Only the lower- and upper-case spellings
// were defused before, so an AGENTS.md holding </Guidance> (or an issue
// holding </Data>) closed the block and went on as planex's own text.
//
// A tag's name is defused whatever follows it, and a < ending the text
// gets the zero-width space too: each string is defused alone, and a
// template that puts one string after another (a line per key file)
// joined a file named "x</data" and one named ">" into a closing tag.
func Defuse(s string) string {
	if !strings.ContainsAny(s, "<\uff1c\ufe64") {
		return s
	}
	s = blockTag.ReplaceAllString(s, "${1}\u200b${2}")
	return openEnd.ReplaceAllString(s, "${1}\u200b${2}")
}

// Characters a reader takes for a tag's <, /, > and the spaces inside it.
const (
	tagLT    = `[<\x{ff1c}\x{fe64}]`
	tagSlash = `[/\x{ff0f}]`
	tagGT    = `[>\x{ff1e}\x{fe65}]`
	tagSpace = `[\s\v\x{85}\p{Z}]`
)

// blockTag is the start of an opening or closing <data> or <guidance>
// tag, whatever its case and spacing, up to the character after its name
// (a space, a slash, the tag's end, or the end of the text).
var blockTag = regexp.MustCompile(`(?i)(` + tagLT + tagSpace + `*` + tagSlash + `?` + tagSpace + `*(?:` + tagName("data") + `|` + tagName("guidance") + `))(` +
	tagSpace + `|` + tagSlash + `|` + tagGT + `|$)`)

// tagName matches name (lower-case ASCII letters) spelled in ASCII or
// fullwidth letters, in any mix; the pattern using it ignores case.
func tagName(name string) string {
	var b strings.Builder
	for _, c := range name {
		fmt.Fprintf(&b, `[%c\x{%x}]`, c, c-'a'+0xff41)
	}
	return b.String()
}

// openEnd is a < (with spaces or a slash after it) ending the text.
var openEnd = regexp.MustCompile(`(` + tagLT + `)((?:` + tagSpace + `|` + tagSlash + `)*)$`)
