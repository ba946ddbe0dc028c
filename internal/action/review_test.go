package action

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/ghfake"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/review"
)

// A high finding on the line T1 adds, and a medium one elsewhere.
const reviewWithFindings = `{"id":"__ID__","verdict":"fail","summary":"one real problem","criteria":[{"criterion":"file has content","met":true,"evidence":"a/T1.txt:1"}],
"findings":[{"severity":"high","file":"a/T1.txt","line":1,"explanation":"The greeting is wrong.","suggestion":"Say hello."},
{"severity":"medium","file":"README.md","line":1,"explanation":"The title is terse.","suggestion":"Say more."}]}`

func reviewed(c *Config) { c.Review = "agent" }

// TestReviewFixFollowUp: a run's review lands on its pull request (the
// high finding inline), /planex fix plans a follow-up citing it, and the
// follow-up's run answers in the finding's thread; then nothing is left
// to fix. /planex review reviews the pull request from its diff.
func TestReviewFixFollowUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "base", Scope: "a/**"})
	w.agent.review = reviewWithFindings
	n := w.fake.AddIssue(wRepo, "maintainer", "A file", "")
	r, err := w.handle(w.comment(n, "maintainer", "/planex -y a file"), reviewed)
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("run: %v %+v", err, r.Outputs)
	}
	pr := w.fake.PullRequests(wRepo)[0]
	inline := w.fake.ReviewComments(wRepo, pr.Number)
	if len(inline) != 1 || inline[0].Path != "a/T1.txt" {
		t.Fatalf("inline comments = %+v", inline)
	}
	key, ok := review.FindingKeyOf(inline[0].Body)
	if !ok {
		t.Fatal("the inline comment carries no finding key")
	}

	w.agent.review = ""
	r, err = w.handle(w.comment(pr.Number, "maintainer", "/planex fix"), reviewed)
	if err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("fix: %v %+v\n%s", err, r.Outputs, w.lastComment(pr.Number))
	}
	// The fix plan's tasks cite the high finding, not the medium one, and
	// the record links the task to the review comment (these were
	// internal/cli's TestActionFixPlansFromHighFindings).
	state := "refs/planex/state/" + strconv.Itoa(pr.Number)
	if tasks := run(t, w.origin, "show", state+":tasks.csv"); !strings.Contains(tasks, "answers: "+key) ||
		strings.Contains(tasks, review.FindingKey("README.md", 1, "The title is terse.")) {
		t.Errorf("the fix plan's tasks do not cite finding %s alone:\n%s", key, tasks)
	}
	if rec := run(t, w.origin, "show", state+":github.json"); !strings.Contains(rec, `"finding_key": "`+key+`"`) ||
		!strings.Contains(rec, `"comment_id": `+strconv.FormatInt(inline[0].ID, 10)) {
		t.Errorf("the record does not link the task to the review comment:\n%s", rec)
	}
	r, err = w.handle(w.comment(pr.Number, "maintainer", "/planex approve "+w.planID(pr.Number)), reviewed)
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("approve the fix: %v %+v", err, r.Outputs)
	}
	var reply *ghfake.ReviewComment
	for _, c := range w.fake.ReviewComments(wRepo, pr.Number) {
		if c.InReplyTo == inline[0].ID {
			reply = &c
		}
	}
	if reply == nil || !slices.Contains(review.FixedKeys(reply.Body), key) || len(review.FixedKeys(reply.Body)) != 1 ||
		!strings.Contains(reply.Body, "T1 (Fix review findings): completed") {
		t.Fatalf("no done reply marking %s fixed: %+v", key, reply)
	}
	if len(w.commentsWith(pr.Number, "### Follow-up report")) != 1 {
		t.Error("the follow-up posted no report on the pull request")
	}
	if _, err := w.handle(w.comment(pr.Number, "maintainer", "/planex fix"), reviewed); err != nil || !strings.Contains(w.lastComment(pr.Number), "no open high-severity finding") {
		t.Errorf("second fix: %v %q", err, w.lastComment(pr.Number))
	}

	// /planex review: from the diff GitHub has, read-only.
	w.agent.review = reviewWithFindings
	w.fake.SetPRFiles(wRepo, pr.Number, []ghfake.PRFile{{Filename: "a/T1.txt", Status: "added", Additions: 1, Patch: "@@ -0,0 +1 @@\n+T1"}},
		"diff --git a/a/T1.txt b/a/T1.txt\nnew file mode 100644\n--- /dev/null\n+++ b/a/T1.txt\n@@ -0,0 +1 @@\n+T1\n")
	r, err = w.handle(w.comment(pr.Number, "maintainer", "/planex review"), reviewed)
	if err != nil || r.Outputs.Status != "reviewed" || !strings.Contains(r.Outputs.Summary, "The greeting is wrong") {
		t.Errorf("review: %v %+v", err, r.Outputs)
	}
	// On an issue, review and fix are refused.
	for _, cmd := range []string{"/planex review", "/planex fix"} {
		if r, err := w.handle(w.comment(n, "maintainer", cmd), reviewed); err != nil || r.Outputs.Status != "refused" {
			t.Errorf("%s on an issue: %v %+v", cmd, err, r.Outputs)
		}
	}
	w.noRefusedRequests()
}

func TestGroupAnswers(t *testing.T) {
	t.Parallel()
	tasks := []plan.Task{
		{ID: "T1", Title: "one", Status: plan.StatusCompleted, Commit: "0123456789abcdef"},
		{ID: "T2", Title: "two", Status: plan.StatusFailed, Error: "broke"},
		{ID: "T3", Title: "three", Status: plan.StatusPending},
	}
	answers := []Answer{
		{Task: "T1", CommentID: 7, FindingKey: "aaaaaaaaaa"},
		{Task: "T2", CommentID: 7, FindingKey: "bbbbbbbbbb"},
		{Task: "T1", CommentID: 0, FindingKey: "cccccccccc"},
		{Task: "T2", CommentID: 0, FindingKey: "cccccccccc"},
		{Task: "T3", CommentID: 8},
		{Task: "T1", CommentID: 9, Replied: true},
	}
	groups := groupAnswers(answers, tasks)
	if len(groups) != 2 || groups[0].comment != 7 || groups[1].comment != 0 {
		t.Fatalf("groups = %+v", groups)
	}
	if got := groups[0].fixed(); !slices.Equal(got, []string{"aaaaaaaaaa"}) {
		t.Errorf("fixed in comment 7 = %v", got)
	}
	// cccccccccc is answered by a task that failed too: not fixed.
	if got := groups[1].fixed(); len(got) != 0 {
		t.Errorf("fixed in the body = %v", got)
	}
	if !slices.Equal(groups[0].idx, []int{0, 1}) || !strings.Contains(strings.Join(groups[0].lines, "\n"), "T2 (two): failed: broke") {
		t.Errorf("group 7 = %+v", groups[0])
	}
}
