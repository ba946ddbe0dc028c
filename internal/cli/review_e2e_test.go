package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/ghfake"
	"github.com/planexhq/planex/internal/review"
)

// The scripted agent's review: a high finding on the line T1 adds
// (a/t1.txt:1) and a medium one on a line no task touched (a/keep.txt:1).
const runReviewJSON = `{"id":"__ID__","verdict":"fail","summary":"one real problem","criteria":[{"criterion":"file has content","met":true,"evidence":"a/t1.txt:1"}],
"findings":[{"severity":"high","file":"a/t1.txt","line":1,"explanation":"The greeting is wrong.","suggestion":"Say hello."},
{"severity":"medium","file":"a/keep.txt","line":1,"explanation":"This unchanged file still says a.","suggestion":"Rename it."}]}`

func (g *ghEnv) writeFake(name, content string) {
	g.t.Helper()
	if err := os.WriteFile(filepath.Join(g.fake_dir(), name), []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

func summaries(rs []ghfake.Review) []ghfake.Review {
	var out []ghfake.Review
	for _, r := range rs {
		if review.IsSummary(r.Body) {
			out = append(out, r)
		}
	}
	return out
}

// runWithReview plans and runs one task with -y and returns its pull request.
func runWithReview(t *testing.T, g *ghEnv) ghfake.PullRequest {
	t.Helper()
	g.setPlan(task{ID: "T1", Title: "base", Scope: "a/**"})
	g.writeFake("review.json", runReviewJSON)
	n := g.fake.AddIssue(ghRepo, "maintainer", "Add a file", "")
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex -y add a file"))
	if r.code != 0 {
		t.Fatalf("run: %d\n%s\n%s", r.code, r.out, r.err)
	}
	if !strings.Contains(r.summary, "## Review") || !strings.Contains(r.summary, "The greeting is wrong.") {
		t.Errorf("context.md (job summary) lacks the review:\n%s", r.summary)
	}
	// The reviewer saw the task's commit, its criteria and what the run
	// recorded, read-only in a worktree of the run branch.
	p, _ := os.ReadFile(filepath.Join(g.fake_dir(), "review-T1.prompt"))
	for _, want := range []string{"+T1 was here", "file has content", "Tests passed: claimed", "read-only"} {
		if !strings.Contains(string(p), want) {
			t.Errorf("review prompt lacks %q", want)
		}
	}
	seen, _ := os.ReadFile(filepath.Join(g.fake_dir(), "review-T1.seen"))
	// A worktree of its own, outside the checkout and its .git directory.
	if wd, _, _ := strings.Cut(string(seen), "\n"); !strings.HasSuffix(wd, ".review") || strings.Contains(wd, "/.git/") || strings.HasPrefix(wd, g.repo) || !strings.Contains(string(seen), "README.md") {
		t.Errorf("review working directory:\n%s", seen)
	}
	prs := g.fake.PullRequests(ghRepo)
	if len(prs) != 1 {
		t.Fatalf("%d pull requests", len(prs))
	}
	return prs[0]
}

func TestActionRunPostsReviewInlineOnAddedLinesOnly(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	pr := runWithReview(t, g)
	rs := g.fake.Reviews(ghRepo, pr.Number)
	if len(rs) != 1 || rs[0].State != "COMMENTED" || !review.IsSummary(rs[0].Body) {
		t.Fatalf("reviews = %+v", rs)
	}
	body := rs[0].Body
	for _, want := range []string{"**Verdict: fail**", "| T1 base | file has content | ✅ yes | `a/t1.txt:1` |", "Findings not on a changed line", "`a/keep.txt:1`", "This unchanged file still says a.", "/planex fix"} {
		if !strings.Contains(body, want) {
			t.Errorf("summary lacks %q:\n%s", want, body)
		}
	}
	cs := g.fake.ReviewComments(ghRepo, pr.Number)
	if len(cs) != 1 {
		t.Fatalf("inline comments = %+v", cs)
	}
	c := cs[0]
	if c.Path != "a/t1.txt" || c.Line != 1 || c.Side != "RIGHT" || !strings.Contains(c.Body, "The greeting is wrong.") {
		t.Errorf("inline comment = %+v", c)
	}
	// The line really is one the pull request adds.
	diff := review.ParseUnified(g.originGit("diff", "main..."+pr.Head))
	if !diff.Added(c.Path, c.Line) {
		t.Errorf("%s:%d is not an added line of the pull request", c.Path, c.Line)
	}
	if errs := g.fake.Errors(); len(errs) > 0 {
		t.Errorf("requests GitHub would refuse: %v", errs)
	}

	// Re-running replaces the summary: give the fake the pull request's
	// files (so it checks placements too) and ask for a review again, with
	// one more finding.
	g.fake.SetPRFiles(ghRepo, pr.Number, []ghfake.PRFile{{Filename: "a/t1.txt", Status: "added", Additions: 1, Patch: "@@ -0,0 +1 @@\n+T1 was here"}},
		g.originGit("diff", "main..."+pr.Head))
	g.writeFake("review-PR.json", strings.Replace(strings.Replace(runReviewJSON, `"verdict":"fail"`, `"verdict":"concerns"`, 1),
		`"findings":[`, `"findings":[{"severity":"low","file":"a/t1.txt","line":1,"explanation":"Add a trailing period."},`, 1))
	r := g.run("issue_comment", g.comment(pr.Number, true, "maintainer", "/planex review"))
	if r.code != 0 {
		t.Fatalf("re-review: %d\n%s\n%s", r.code, r.out, r.err)
	}
	rs = g.fake.Reviews(ghRepo, pr.Number)
	sums := summaries(rs)
	if len(sums) != 1 || sums[0].ID != rs[0].ID {
		t.Fatalf("summaries after a re-run = %+v", sums)
	}
	if !strings.Contains(sums[0].Body, "**Verdict: concerns**") || strings.Contains(sums[0].Body, "**Verdict: fail**") {
		t.Errorf("the summary was not replaced:\n%s", sums[0].Body)
	}
	cs = g.fake.ReviewComments(ghRepo, pr.Number)
	if len(cs) != 2 {
		t.Fatalf("inline comments after a re-run = %+v", cs)
	}
	if !strings.Contains(cs[1].Body, "Add a trailing period.") || cs[1].Line != 1 {
		t.Errorf("new inline comment = %+v", cs[1])
	}
	for _, rv := range rs {
		if rv.State != "COMMENTED" {
			t.Errorf("review %d is %s; planex only comments", rv.ID, rv.State)
		}
	}
	if errs := g.fake.Errors(); len(errs) > 0 {
		t.Errorf("requests GitHub would refuse: %v", errs)
	}
}

func TestActionReviewForkPullRequestFromDiffOnly(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	marker := filepath.Join(g.fake_dir(), "pwned")
	patch := "@@ -0,0 +1,3 @@\n+#!/bin/sh\n+touch " + marker + "\n+echo done"
	diff := "diff --git a/tool.sh b/tool.sh\nnew file mode 100755\nindex 0000000..1234567\n--- /dev/null\n+++ b/tool.sh\n" + patch + "\n"
	n := g.fake.AddPullRequest(ghRepo, ghfake.PullRequest{Title: "Add a helper", Body: "Adds tool.sh, which prints done.", Author: "stranger",
		Head: "main", HeadRepo: "stranger/demo", HeadSHA: strings.Repeat("e", 40),
		Files: []ghfake.PRFile{{Filename: "tool.sh", Status: "added", Additions: 3, Patch: patch}}, Diff: diff})
	g.writeFake("review-PR.json", `{"id":"PR","verdict":"fail","summary":"it touches files","criteria":[{"criterion":"prints done","met":true,"evidence":"tool.sh:3"}],
"findings":[{"severity":"high","file":"tool.sh","line":2,"explanation":"Creates a file outside the repository.","suggestion":"Remove it."},
{"severity":"low","file":"tool.sh","line":9,"explanation":"No usage text."}]}`)
	r := g.run("issue_comment", g.comment(n, true, "maintainer", "/planex review"))
	if r.code != 0 {
		t.Fatalf("review: %d\n%s\n%s", r.code, r.out, r.err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("code from the fork was executed")
	}
	// The agent worked in an empty scratch folder with the diff as text,
	// not in a checkout.
	seen, err := os.ReadFile(filepath.Join(g.fake_dir(), "review-PR.seen"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(seen)), "\n")
	if got := strings.Join(lines[1:], ","); got != "pr.diff,pr.md" {
		t.Errorf("the review's working directory held %q", got)
	}
	if strings.Contains(lines[0], "/ws") {
		t.Errorf("the review ran in the workspace: %s", lines[0])
	}
	prompt, _ := os.ReadFile(filepath.Join(g.fake_dir(), "review-PR.prompt"))
	if !strings.Contains(string(prompt), "touch "+marker) || !strings.Contains(string(prompt), "never be run") {
		t.Errorf("the prompt lacks the diff or the warning:\n%s", prompt)
	}
	if refs := g.originGit("for-each-ref", "--format=%(refname)"); strings.Contains(refs, "stranger") || strings.Contains(refs, "eeeeeeee") {
		t.Errorf("origin gained refs from the fork: %s", refs)
	}
	rs := g.fake.Reviews(ghRepo, n)
	if len(rs) != 1 || rs[0].State != "COMMENTED" || rs[0].CommitID != strings.Repeat("e", 40) {
		t.Fatalf("reviews = %+v", rs)
	}
	if !strings.Contains(rs[0].Body, "`tool.sh:9`") || !strings.Contains(rs[0].Body, "No usage text.") || strings.Contains(rs[0].Body, "/planex fix") {
		t.Errorf("summary:\n%s", rs[0].Body)
	}
	cs := g.fake.ReviewComments(ghRepo, n)
	if len(cs) != 1 || cs[0].Path != "tool.sh" || cs[0].Line != 2 {
		t.Errorf("inline comments = %+v", cs)
	}
	if errs := g.fake.Errors(); len(errs) > 0 {
		t.Errorf("requests GitHub would refuse: %v", errs)
	}
}

func TestRunReviewFailureIsReportedNotFatal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "base", Scope: "a/**"})
	f.write(f.fake, "review.json", `{"id":"__ID__","verdict":"maybe"}`) // not the schema
	out, errOut, code := f.planex("-y", "add a file")
	if code != 0 {
		t.Fatalf("a failed review failed the run: %d\n%s\n%s", code, out, errOut)
	}
	if got := len(f.branchLog()); got != 1 {
		t.Errorf("%d commits", got)
	}
	report, _ := os.ReadFile(filepath.Join(f.sessionDir(), "context.md"))
	for _, want := range []string{"## Review", "The review failed:** no task could be reviewed", "Not reviewed: invalid agent result"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("context.md lacks %q:\n%s", want, report)
		}
	}
	res, err := review.Load(filepath.Join(f.sessionDir(), "review.json"))
	if err != nil || res == nil || res.Status != review.StatusFailed {
		t.Errorf("review.json = %+v, %v", res, err)
	}
}

func TestRunReviewSkip(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setPlan(task{ID: "T1", Title: "base", Scope: "a/**"})
	out, errOut, code := f.planex("-y", "--review", "skip", "add a file")
	if code != 0 {
		t.Fatalf("%d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.sessionDir(), "review.json")); err == nil {
		t.Error("--review skip still reviewed")
	}
	if _, err := os.Stat(filepath.Join(f.fake, "review-T1.seen")); err == nil {
		t.Error("the agent was asked to review")
	}
	if _, _, code := f.planex("-y", "--review", "maybe", "add a file"); code != 2 {
		t.Errorf("a bad --review value: exit %d", code)
	}
}
