package cli

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/render"
)

// groups lists the log groups opened, and fails the test unless each is
// closed before the next opens.
func groups(t *testing.T, log string) []string {
	t.Helper()
	var names []string
	open := false
	for _, c := range commands(log) {
		switch {
		case strings.HasPrefix(c, "::group::"):
			if open {
				t.Errorf("group %q opened inside another", c)
			}
			open = true
			names = append(names, strings.TrimPrefix(c, "::group::"))
		case c == "::endgroup::":
			if !open {
				t.Error("::endgroup:: without a group")
			}
			open = false
		}
	}
	if open {
		t.Error("a group is left open")
	}
	return names
}

// TestActionConventions: a plan posted and waiting for approval is a
// success; an approved run whose task fails exits 1 with an ::error
// annotation and its report in the job summary; phases are log groups;
// the token and the credential git derives from it are masked; a pull
// request opened with the default token says CI will not run on it.
func TestActionConventions(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(diamond()...)
	g.write(g.fixture.fake, "T2.fail", "could not do it")
	n := g.fake.AddIssue(ghRepo, "maintainer", "Add four files", "")

	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex add four files"), "PLANEX_DEFAULT_TOKEN=true")
	if r.code != 0 || r.outputs["status"] != "planned" {
		t.Fatalf("plan run: exit %d %v\n%s\n%s", r.code, r.outputs, r.out, r.err)
	}
	if got := strings.Join(groups(t, r.out), " | "); got != "setup | analyze | explore | plan" {
		t.Errorf("plan run groups = %s\n%s", got, r.out)
	}
	credential := base64.StdEncoding.EncodeToString([]byte("x-access-token:ghs_test"))
	for _, mask := range []string{"::add-mask::ghs_test", "::add-mask::" + credential} {
		if !strings.Contains(r.out, mask+"\n") {
			t.Errorf("log lacks %q", mask)
		}
	}
	if strings.Contains(r.out, "::error") || !strings.Contains(r.summary, "approve "+g.lastPlanID(n)) {
		t.Errorf("plan run: errors or no plan in the summary\n%s\n--- summary ---\n%s", r.out, r.summary)
	}

	id := g.lastPlanID(n)
	r = g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+id), "PLANEX_DEFAULT_TOKEN=true")
	if r.code != exitFailed || r.outputs["status"] != "failed" {
		t.Fatalf("approve run with a failed task: exit %d %v\n%s\n%s", r.code, r.outputs, r.out, r.err)
	}
	if got := strings.Join(groups(t, r.out), " | "); got != "setup | wave 1: T1 | wave 2: T2, T3 | review | publish" {
		t.Errorf("approve run groups = %s\n%s", got, r.out)
	}
	wantErr := "::error title=planex::plan " + id + " failed: 2 of 4 tasks completed%0AT2 failed: could not do it%0AT4 skipped: dependency T2 failed"
	if !strings.Contains(r.out, wantErr+"\n") {
		t.Errorf("no ::error annotation %q in\n%s", wantErr, r.out)
	}
	if !strings.Contains(r.summary, "# planex report: ") || !strings.Contains(r.summary, "| 2 | T2 | left | `b/**` | T1 | ❌ failed |") {
		t.Errorf("job summary:\n%s", r.summary)
	}
	prs := g.fake.PullRequests(ghRepo)
	if len(prs) != 1 || !strings.Contains(prs[0].Body, "CI will not run on this pull request") || !strings.Contains(prs[0].Body, "docs/action.md#pull-requests-that-run-ci") {
		t.Fatalf("pull request opened with the default token: %+v", prs)
	}
}

// TestActionAppTokenPullRequestHasNoCINote: with another token (an app's)
// the pull request says nothing about CI; and a settings mistake is
// annotated on its file and line.
func TestActionAppTokenPullRequestHasNoCINote(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.skipReview()
	g.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	n := g.fake.AddIssue(ghRepo, "maintainer", "One file", "")
	if r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex add a file"), "PLANEX_DEFAULT_TOKEN=false"); r.code != 0 {
		t.Fatalf("plan: %d\n%s", r.code, r.err)
	}
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+g.lastPlanID(n)), "PLANEX_DEFAULT_TOKEN=false")
	if r.code != 0 || r.outputs["status"] != "done" || strings.Contains(r.out, "::error") {
		t.Fatalf("approve: exit %d %v\n%s\n%s", r.code, r.outputs, r.out, r.err)
	}
	prs := g.fake.PullRequests(ghRepo)
	if len(prs) != 1 || strings.Contains(prs[0].Body, "CI will not run") {
		t.Fatalf("pull request opened with an app token: %+v", prs)
	}

	// A command that does not apply is refused, not failed.
	r = g.run("issue_comment", g.comment(n, false, "maintainer", "/planex cancel"))
	if r.code != 0 || r.outputs["status"] != "refused" || strings.Contains(r.out, "::error") {
		t.Errorf("nothing to cancel: exit %d %v\n%s", r.code, r.outputs, r.out)
	}
	g.fake.SetFile(ghRepo, "main", ".github/planex.yml", []byte("draft: true\nconcurrency: 0\n"))
	r = g.run("issue_comment", g.comment(n, false, "maintainer", "/planex status"))
	want := "::error file=.github/planex.yml,line=2,title=planex::.github/planex.yml line 2: concurrency must be between 1 and 64, got 0\n"
	if r.code != exitFailed || !strings.Contains(r.out, want) || !strings.Contains(r.summary, "planex failed") {
		t.Errorf("bad settings: exit %d\n%s\n%s\n--- summary ---\n%s", r.code, r.out, r.err, r.summary)
	}
	// A bad input value is a usage error.
	r = g.run("issue_comment", g.comment(n, false, "maintainer", "/planex status"), "INPUT_CONCURRENCY=lots")
	if r.code != exitUsage || !strings.Contains(r.out, `::error title=planex::input concurrency: "lots" is not a positive whole number`) {
		t.Errorf("bad input: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
}

// TestRedTeamActionAgentCannotIssueWorkflowCommands: an agent's text in
// planex's log (its task's error, spread over lines, \r included, "##["
// in the middle of a line, an ideographic space before "::") cannot
// stop planex's workflow commands, set outputs or add annotations: no line
// it wrote reads as a command.
func TestRedTeamActionAgentCannotIssueWorkflowCommands(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(task{ID: "T1", Title: "one", Scope: "a/**"})
	// JSON escapes: the agent's error holds real line breaks.
	g.write(g.fixture.fake, "T1.fail", `gave up\n::stop-commands::agent-owned\n  ::set-output name=status::done\r::error::forged annotation\n##[set-output name=pull-request-url;]https://evil.example\n\t::endgroup::\nstill at it ##[stop-commands]mid-line\n\u3000::set-output name=has-tasks::true\n#\r#[set-output name=status;]done`)
	n := g.fake.AddIssue(ghRepo, "maintainer", "One file", "")
	if r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex add a file")); r.code != 0 {
		t.Fatalf("plan: %d\n%s", r.code, r.err)
	}
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+g.lastPlanID(n)))
	if r.code != exitFailed || r.outputs["status"] != "failed" {
		t.Fatalf("approve: exit %d %v\n%s\n%s", r.code, r.outputs, r.out, r.err)
	}
	if !strings.Contains(r.out, "» ::stop-commands::agent-owned") {
		t.Fatalf("the agent's text is not in the log as text:\n%s", r.out)
	}
	own := regexp.MustCompile(`^::(group::|endgroup::$|add-mask::|error title=planex::)`)
	for _, log := range []string{r.out, r.err} {
		for _, c := range commands(log) {
			if !own.MatchString(c) || strings.HasPrefix(c, "::error title=planex::forged") {
				t.Errorf("a line the runner reads as a command: %q", c)
			}
		}
	}
	groups(t, r.out)
	// planex's own annotation carries the text, escaped onto one line (the
	// carriage return is dropped with the other control characters).
	if !strings.Contains(r.out, "T1 failed: gave up ::stop-commands::agent-owned ::set-output name=status::done::error::forged annotation") {
		t.Errorf("annotation:\n%s", r.out)
	}
}

// An agent makes files with long paths by the thousand in its scope, so
// that the report (context.md, the job summary) passes 1 MiB, which the
// runner refuses whole: the run's page showed no report, and no failure
// of another task. The summary is cut below the runner's limit, keeping
// every task's section, and says so.
func TestRedTeamActionAgentFloodsJobSummary(t *testing.T) {
	t.Parallel()
	g := newGHEnv(t)
	g.setPlan(task{ID: "T1", Title: "many files", Scope: "a/**"}, task{ID: "T2", Title: "other", Scope: "b/**"})
	// 450 paths of about 2,800 bytes each (fourteen folders of 200-byte
	// names, the worktree's own path still well below the system's 4,096)
	// make the same 1.2 MiB of names as 6,000 files of 200 bytes, at a
	// thirteenth of the files to add, commit, check and push.
	deep := "a/" + strings.Repeat(strings.Repeat("f", 200)+"/", 14)
	g.write(g.fixture.fake, "T1.sh", `mkdir -p `+deep+` && cd `+deep+` && seq 1 450 | sed 's/^/f/' | xargs touch && cd /`)
	g.write(g.fixture.fake, "T2.fail", "could not do it")
	n := g.fake.AddIssue(ghRepo, "maintainer", "Many files", "")
	if r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex add files")); r.code != 0 {
		t.Fatalf("plan: %d\n%s", r.code, r.err)
	}
	r := g.run("issue_comment", g.comment(n, false, "maintainer", "/planex approve "+g.lastPlanID(n)))
	if r.code != exitFailed || r.outputs["status"] != "failed" {
		t.Fatalf("approve: exit %d %v\n%s", r.code, r.outputs, r.err)
	}
	if len(r.summary) > render.MaxStepSummaryBytes {
		t.Fatalf("the job summary is %d bytes; the runner drops one past %d whole", len(r.summary), render.MaxStepSummaryBytes)
	}
	for _, want := range []string{"1 completed, 1 failed", "could not do it", "and 400 more (under Files modified)", "(truncated: the job summary holds at most 1024 KiB"} {
		if !strings.Contains(r.summary, want) {
			t.Errorf("the job summary lacks %q", want)
		}
	}
}
