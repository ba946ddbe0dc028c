package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/render/md"
	"github.com/planexhq/planex/internal/render/md/mdtest"
)

// An agent under a scope like src/** creates thousands of files with long
// names: context.md lists each twice (the task's files and the run's), and
// the runner refused the job summary whole past 1 MiB, so the report (its
// failures with it) was missing from the run's page.
func TestRedTeamStepSummaryBounded(t *testing.T) {
	t.Parallel()
	r := sample()
	var files []string
	for i := range 6000 {
		files = append(files, fmt.Sprintf("api/limit/%s%05d.go", strings.Repeat("x", 180), i))
	}
	r.Tasks[0].FilesModified = files
	report := Context(r)
	if len(report) <= MaxStepSummaryBytes {
		t.Fatalf("the report is %d bytes: the attack needs more than %d", len(report), MaxStepSummaryBytes)
	}
	got := StepSummary(report)
	if len(got) > MaxStepSummaryBytes {
		t.Fatalf("the job summary is %d bytes, more than the runner accepts", len(got))
	}
	for _, want := range []string{"# planex report", "| T2 | Wire into router |", "execution directives failed", "… (truncated: the job summary holds at most 1024 KiB"} {
		if !strings.Contains(got, want) {
			t.Errorf("the bounded summary lacks %q", want)
		}
	}
	if !strings.HasPrefix(report, got[:len(got)-200]) {
		t.Error("the bounded summary is not the report's beginning")
	}
	assertNoProblems(t, "bounded summary", parseDoc(t, got), mdtest.Rules{})
	if small := Context(sample()); StepSummary(small) != small {
		t.Error("a summary within the limit was changed")
	}
}

// What a cut leaves open is closed, so the note after it is text: a code
// block (an error's, the plan comment's Mermaid chart) and planex's
// <details>; an agent's text, escaped, opens neither.
func TestCutMarkdown(t *testing.T) {
	t.Parallel()
	agent := md.Block("```\n<details>\n~~~\n``` ```")
	tests := []struct {
		name, in, want string
	}{
		{"fits", "a\nb\n", "a\nb\n"},
		{"between lines", "aaaa\nbbbb\ncccc\n", "aaaa\nbbbb\n"},
		{"open fence closed", "x\n```mermaid\ngraph\nA-->B\nC-->D\n", "x\n```mermaid\ngraph\nA-->B\n```\n"},
		{"longer fence closed by its length", "````text\n```\nline\nmore lines\n", "````text\n```\nline\n````\n"},
		{"closed fence stays closed", "```\nx\n```\nafter\nmore text\n", "```\nx\n```\nafter\n"},
		{"details closed", "<details>\n<summary>s</summary>\n\nbody\nmore body\n", "<details>\n<summary>s</summary>\n\nbody\n\n</details>\n"},
		{"details in a code block are text", "```\n<details>\n```\nx\nmore text\n", "```\n<details>\n```\nx\n"},
		{"an agent's text opens nothing", agent + "\n" + strings.Repeat("z", 40) + "\n", agent + "\n"},
	}
	for _, tc := range tests {
		limit := len(tc.in) - 5
		if tc.name == "fits" {
			limit = len(tc.in)
		}
		if got := cutMarkdown(tc.in, limit); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A follow-up's report is the pull request body under a heading, posted as
// a comment. An agent whose text brings the body to just under GitHub's
// limit (its findings and acceptance claim are shown) made the comment,
// heading and all, just over it: GitHub refused it and the follow-up's
// report was never posted.
func TestRedTeamFollowUpReportWithinLimit(t *testing.T) {
	t.Parallel()
	const heading = "### CI-fix round 2 report"
	pad := func(n int) PRView {
		r := sample()
		r.Meta.Approach = strings.Repeat("a", n)
		return PRView{Report: r}
	}
	// The body's length grows with the padding one for one: find the
	// padding that leaves it 4 bytes under the limit.
	n := MaxCommentBytes - 4 - len(PRBody(pad(1))) + 1
	if got := len(PRBody(pad(n))); got != MaxCommentBytes-4 {
		t.Fatalf("the padded body is %d bytes, want %d", got, MaxCommentBytes-4)
	}
	v := pad(n)
	v.Heading = heading
	got := PRBody(v)
	if len(got) > MaxCommentBytes {
		t.Fatalf("the follow-up report is %d bytes, more than GitHub takes", len(got))
	}
	if !strings.HasPrefix(got, heading+"\n\n") || !strings.Contains(got, "(truncated; the full report is context.md") {
		t.Errorf("the report lacks its heading or the truncation note:\n%s…%s", got[:200], got[len(got)-200:])
	}
	assertNoProblems(t, "follow-up report", parseDoc(t, got), mdtest.Rules{OwnHTML: []string{"<details>\n<summary>Approach and exploration</summary>", "</details>"}})
}
