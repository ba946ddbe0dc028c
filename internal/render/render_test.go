package render

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/review"
	"github.com/planexhq/planex/internal/session"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/render -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file; run with -update if intended.\n--- got ---\n%s", name, got)
	}
}

func sample() Report {
	created := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	return Report{
		Meta: session.Meta{ID: "add-rate-limiting-2026-11-22", Requirement: "Add rate limiting to the public API\nwith per-key limits", Created: created,
			Base: "0123456789abcdef0123456789abcdef01234567", BaseBranch: "main", Branch: "planex/add-rate-limiting-2026-11-22",
			Type: "feature", Complexity: "Medium", Summary: "Add a token-bucket limiter in front of the API handlers.", Approach: "Middleware first, then wiring, then docs."},
		Explore: []plan.ExploreRow{
			{ID: "E1", Angle: "patterns", Description: "How handlers are wrapped", Status: plan.StatusCompleted, Findings: "Handlers use chi middleware | see router.go", KeyFiles: []string{"api/router.go"}},
			{ID: "E2", Angle: "testing", Description: "Test layout", Status: plan.StatusFailed, Error: "agent timed out after 5m0s"},
		},
		Tasks: []plan.Task{
			{ID: "T1", Title: "Limiter middleware", Description: "Write it", Scope: "api/limit/**", Wave: 1, Status: plan.StatusCompleted, TestsPassed: "true", AcceptanceMet: "all met", FilesModified: []string{"api/limit/limit.go", "api/limit/limit_test.go"}, Commit: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", InputTokens: 1000, OutputTokens: 200, CostUSD: 0.012, CacheReadTokens: 600},
			{ID: "T2", Title: "Wire into router", Description: "Use it", Scope: "api/router.go", Deps: []string{"T1"}, ContextFrom: []string{"E1", "T1"}, Wave: 2, Status: plan.StatusFailed, TestsPassed: "false", Error: "execution directives failed: exit status 1"},
			{ID: "T3", Title: "Docs", Description: "Document \"limits\"", Scope: "docs/**", Deps: []string{"T2"}, Wave: 3, Status: plan.StatusSkipped, Error: "skipped: dependency T2 failed"},
		},
		Discoveries: []session.Discovery{{TS: "2026-11-22T09:01:00Z", Worker: "E1", Type: "test_command", Data: json.RawMessage(`{"command":"go test ./..."}`)}},
		Spent:       agent.Usage{InputTokens: 5000, OutputTokens: 900, CostUSD: 0.05, CacheReadTokens: 3000, CacheWriteTokens: 400},
		Review: &review.Result{Kind: review.KindRun, Status: review.StatusCompleted, Verdict: review.VerdictConcerns, Head: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
			Tasks: []review.TaskReview{{Task: "T1", Title: "Limiter middleware", Verdict: review.VerdictConcerns, Summary: "Works; one edge case.",
				Criteria: []review.Criterion{{Criterion: "limits per key", Met: true, Evidence: "api/limit/limit.go:12"}, {Criterion: "burst | refill tested", Met: false, Note: "no refill test"}},
				Findings: []review.Finding{{ID: "T1-F1", Severity: review.Medium, File: "api/limit/limit.go", Line: 30, Explanation: "The map grows without bound.", Suggestion: "Evict idle keys."}}}},
		},
	}
}

func TestContextGolden(t *testing.T) {
	golden(t, "context.md", Context(sample()))
}

func TestPlanCommentGolden(t *testing.T) {
	r := sample()
	body, truncated := PlanComment(PlanView{Summary: r.Meta.Summary, Approach: r.Meta.Approach, Type: "feature", Complexity: "Medium",
		Explore: r.Explore, Tasks: r.Tasks, Session: r.Meta.ID, Base: r.Meta.Base, Estimate: "$0.08", Trigger: "/planex", StateRef: "refs/planex/state/7"})
	if truncated {
		t.Error("a small plan was truncated")
	}
	golden(t, "plan-comment.md", body)
	m, ok := ParsePlanMarker(body)
	if !ok || m.ID != plan.ID(plan.Hash(r.Tasks)) || m.SHA256 != plan.Hash(r.Tasks) || m.Session != r.Meta.ID {
		t.Errorf("marker = %+v, %v", m, ok)
	}
}

func TestPRBodyGolden(t *testing.T) {
	golden(t, "pr-body.md", PRBody(PRView{Report: sample(), Issue: 7, ApprovedBy: "octocat"}))
}

func TestStatusCommentGolden(t *testing.T) {
	r := sample()
	body := StatusComment(StatusView{Session: r.Meta.ID, PlanID: "abc1234567", State: "running", Tasks: r.Tasks,
		RunURL: "https://github.com/o/r/actions/runs/1", Updated: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)})
	golden(t, "status-comment.md", body)
	if !IsStatusComment(body) || IsStatusComment("hello") {
		t.Error("IsStatusComment is wrong")
	}
}

// TestInputTokens: the cache parts appear only when there are some, so
// reports of runs without caching read as before.
func TestInputTokens(t *testing.T) {
	for _, tc := range []struct {
		in, read, write int64
		want            string
	}{
		{5000, 0, 0, "5000 in"},
		{5000, 3000, 0, "5000 in (3000 read from cache)"},
		{5000, 0, 400, "5000 in (400 written to cache)"},
		{5000, 3000, 400, "5000 in (3000 read from cache, 400 written to cache)"},
	} {
		if got := InputTokens(tc.in, tc.read, tc.write); got != tc.want {
			t.Errorf("InputTokens(%d, %d, %d) = %q, want %q", tc.in, tc.read, tc.write, got, tc.want)
		}
	}
}

func TestParsePlanMarkerRejectsJunk(t *testing.T) {
	forged := "hello\n" + PlanMarker{ID: "x", SHA256: "y"}.String()
	for _, body := range []string{"", forged, "<!-- planex:plan {} -->", "<!-- planex:plan {\"id\":\"x\"} -->", "<!-- planex:plan not json -->"} {
		if _, ok := ParsePlanMarker(body); ok {
			t.Errorf("accepted %q", body)
		}
	}
}

func TestStatus(t *testing.T) {
	r := sample()
	out := Status(r.Meta, r.Explore, r.Tasks, true)
	for _, want := range []string{"analyze  done (feature, Medium)", "explore  2/2 angles finished", "execute  1 completed, 1 failed, 1 skipped, 0 pending", "wave 2", "T1   completed", "commit aaaaaaaaaa"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

func TestMarksAndMoney(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Mark(plan.StatusCompleted), "✅ completed"},
		{Mark(plan.StatusFailed), "❌ failed"},
		{Mark(plan.StatusSkipped), "⏭️ skipped"},
		{Mark(plan.StatusPending), "⏸️ pending"},
		{Mark("weird|status"), `weird\|status`}, // not dressed up as a known one
		{testsMark("true"), "✅ passed"},
		{testsMark("claimed"), "❔ agent says passed (not run by planex)"},
		{testsMark(plan.TestsFail), "❌ failed"},
		{testsMark(""), "—"},
		{reason(plan.StatusSkipped, "skipped: dependency T2 failed"), "dependency T2 failed"},
		{reason(plan.StatusSkipped, "dependency T2 failed"), "dependency T2 failed"},
		{reason(plan.StatusFailed, "skipped: not me"), "skipped: not me"},
		{reason(plan.StatusFailed, "failed: <b>x</b>"), "&lt;b>x&lt;/b>"},
		{USD(0), "$0 (not reported)"},
		{USD(0.05), "$0.05"},
		{USD(0.012), "$0.01"},
		{USD(0.0001), "<$0.01"},
		{USD(12.345), "$12.35"},
		{Dollars(0), "$0.00"},
		{Dollars(1.2), "$1.20"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestReportsReadWell: no "(s)" plurals, no raw booleans in the tables, no
// label twice, and one cost precision in every rendering.
func TestReportsReadWell(t *testing.T) {
	r := sample()
	one := sample()
	one.Tasks = one.Tasks[:1]
	one.Explore = one.Explore[:1]
	plan1, _ := PlanComment(PlanView{Summary: "s", Explore: one.Explore, Tasks: one.Tasks, Session: "s", Estimate: "about $0.01"})
	outs := map[string]string{
		"context":     Context(r),
		"context-one": Context(one),
		"pr":          PRBody(PRView{Report: r, Issue: 7}),
		"pr-one":      PRBody(PRView{Report: one, Issue: 7}),
		"plan-one":    plan1,
	}
	costRe := regexp.MustCompile(`\$[0-9]+(\.[0-9]+)?`)
	for name, out := range outs {
		for _, bad := range []string{"(s)", "| true |", "| false |", "skipped: skipped", "(skipped): skipped", "Error: skipped:"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s contains %q:\n%s", name, bad, out)
			}
		}
		for _, m := range costRe.FindAllString(out, -1) {
			if !regexp.MustCompile(`^\$[0-9]+\.[0-9]{2}$`).MatchString(m) {
				t.Errorf("%s: cost %q is not in dollars and cents", name, m)
			}
		}
	}
	if !strings.Contains(outs["pr-one"], "1 of 1 task completed") || !strings.Contains(outs["plan-one"], "Exploration: 1 angle<") {
		t.Errorf("singular forms:\n%s\n%s", outs["pr-one"], outs["plan-one"])
	}
}

func TestPRBodyWithoutCIGolden(t *testing.T) {
	body := PRBody(PRView{Report: sample(), Issue: 7, ApprovedBy: "octocat", NoCI: true})
	golden(t, "pr-body-no-ci.md", body)
	if !strings.Contains(body, "CI will not run on this pull request") || !strings.Contains(body, "]("+CIDocsURL+")") {
		t.Errorf("the note is missing:\n%s", body)
	}
	if strings.Contains(PRBody(PRView{Report: sample(), Issue: 7}), "CI will not run") {
		t.Error("the note is shown without NoCI")
	}
}

func TestPlanCommentWarnsAboutWorkflowScopes(t *testing.T) {
	r := sample()
	if body, _ := PlanComment(PlanView{Tasks: r.Tasks, Session: r.Meta.ID}); strings.Contains(body, "workflows") {
		t.Errorf("a plan that cannot touch workflows warns about them:\n%s", body)
	}
	r.Tasks[2].Scope = "docs/**;.github/workflows/ci.yml"
	body, _ := PlanComment(PlanView{Tasks: r.Tasks, Session: r.Meta.ID})
	for _, want := range []string{"**T3 can change files in `.github/workflows/`.**", "`workflows` permission", "`GITHUB_TOKEN` can never have it", "`github-token` input"} {
		if !strings.Contains(body, want) {
			t.Errorf("plan comment lacks %q:\n%s", want, body)
		}
	}
}

func TestPlanCommentWarnsAboutSettingsScopes(t *testing.T) {
	r := sample()
	r.Tasks[1].Scope = "**"
	if body, _ := PlanComment(PlanView{Tasks: r.Tasks, Session: r.Meta.ID}); strings.Contains(body, "planex.yml") {
		t.Errorf("a plan none of whose scopes names the settings file warns about it:\n%s", body)
	}
	r.Tasks[2].Scope = "docs/**;.github/planex.yml"
	body, _ := PlanComment(PlanView{Tasks: r.Tasks, Session: r.Meta.ID})
	if !strings.Contains(body, "**T3 may change `.github/planex.yml`**") || !strings.Contains(body, "`auto-approve`") {
		t.Errorf("plan comment lacks the settings warning:\n%s", body)
	}
}

func TestPlanCommentWarnsAboutConfigScopes(t *testing.T) {
	r := sample()
	r.Tasks[1].Scope = "**"
	if body, _ := PlanComment(PlanView{Tasks: r.Tasks, Session: r.Meta.ID}); strings.Contains(body, "local actions") {
		t.Errorf("a plan none of whose scopes is written for CI configuration warns about it:\n%s", body)
	}
	r.Tasks[2].Scope = "docs/**;.github/actions/setup/**"
	body, _ := PlanComment(PlanView{Tasks: r.Tasks, Session: r.Meta.ID})
	if !strings.Contains(body, "**T3 may change what GitHub runs or decides by beyond workflow files**") || !strings.Contains(body, "`CODEOWNERS`") {
		t.Errorf("plan comment lacks the configuration warning:\n%s", body)
	}
}

func TestPlanCommentWarnsAboutGuidanceScopes(t *testing.T) {
	r := sample()
	r.Tasks[1].Scope = "**"
	r.Tasks[2].Scope = "docs/**"
	if body, _ := PlanComment(PlanView{Tasks: r.Tasks, Session: r.Meta.ID}); strings.Contains(body, "repository's guidance") {
		t.Errorf("a plan none of whose scopes names a guidance file warns about it:\n%s", body)
	}
	r.Tasks[2].Scope = "docs/**;docs/AGENTS.md"
	body, _ := PlanComment(PlanView{Tasks: r.Tasks, Session: r.Meta.ID})
	if !strings.Contains(body, "**T3 may change what coding agents read as the repository's guidance**") || !strings.Contains(body, "`.claude/`") {
		t.Errorf("plan comment lacks the guidance warning:\n%s", body)
	}
	r.Tasks[2].Scope = "docs/**"
	r.Tasks[1].Scope = ".devcontainer/**"
	body, _ = PlanComment(PlanView{Tasks: r.Tasks, Session: r.Meta.ID})
	if !strings.Contains(body, "**T2 may change what coding agents read as the repository's guidance**") || !strings.Contains(body, "run on their own (`.devcontainer/`") {
		t.Errorf("plan comment lacks the warning for a dev container's scope:\n%s", body)
	}
}

// TestRedTeamReportHostileFileNames: files an agent committed under names
// with a newline, a terminal escape, backticks, a Markdown link and an
// HTML comment are listed in context.md one item each, as code, with no
// control byte: a name cannot end the list, start a heading or a link of
// its own, hide the lines after it, or drive a terminal that shows the
// file.
func TestRedTeamReportHostileFileNames(t *testing.T) {
	t.Parallel()
	names := []string{"line\n# Approved by maintainers.txt", "esc\x1b]0;title\x07\x1b[31mred.txt", "tick`s``.go", "[click](https:evil.example).md",
		"<!-- hide.txt", "-n", "README.md", "readme.md"}
	r := sample()
	r.Tasks[0].FilesModified = names
	out := Context(r)
	for _, b := range []byte{0x1b, 0x07, '\r'} {
		if strings.IndexByte(out, b) >= 0 {
			t.Errorf("context.md holds the control byte %#x", b)
		}
	}
	_, section, ok := strings.Cut(out, "## Files modified\n")
	if !ok {
		t.Fatalf("no file list:\n%s", out)
	}
	section, _, _ = strings.Cut(strings.TrimLeft(section, "\n"), "\n\n")
	items := strings.Split(strings.TrimSpace(section), "\n")
	if len(items) != len(names) {
		t.Fatalf("%d list lines for %d files:\n%s", len(items), len(names), section)
	}
	for _, it := range items {
		if !strings.HasPrefix(it, "- `") || !strings.HasSuffix(it, "`") {
			t.Errorf("item %q is not one code span", it)
		}
	}
	for _, bad := range []string{"\n# Approved", "\n<!--", "\n[click]"} {
		if strings.Contains(out, bad) {
			t.Errorf("context.md has %q at a line's start", bad)
		}
	}
}
