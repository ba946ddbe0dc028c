package action

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/render"
)

func TestJudgeApproval(t *testing.T) {
	t.Parallel()
	hash := strings.Repeat("ab", 32)
	id := plan.ID(hash)
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	base := strings.Repeat("c", 40)
	inputs := strings.Repeat("e", 64)
	marker := func(planID, sha string) string {
		body, _ := render.PlanComment(render.PlanView{Session: "s1", Base: base, Inputs: inputs, Tasks: []plan.Task{{ID: "T1", Title: "x", Scope: "a/**"}}, Trigger: "/planex"})
		// The marker names the plan the comment shows; rewrite it to the
		// plan under test.
		m, _ := render.ParsePlanMarker(body)
		return strings.Replace(strings.Replace(body, m.ID, planID, 1), m.SHA256, sha, 1)
	}
	bot := func(cid int64, at time.Duration, body string) *postedComment {
		return &postedComment{ID: cid, Kind: event.KindIssueComment, Login: "planex[bot]", Bot: true, Self: true, Body: body, Created: t0.Add(at)}
	}
	// otherBot is a comment by a bot that is not planex's account
	// (dependabot, a contributor's GitHub App).
	otherBot := func(cid int64, at time.Duration, body string) *postedComment {
		return &postedComment{ID: cid, Login: "helper-app[bot]", Bot: true, Body: body, Created: t0.Add(at)}
	}
	person := func(cid int64, at time.Duration, login, body string) *postedComment {
		return &postedComment{ID: cid, Kind: event.KindIssueComment, Login: login, Body: body, Created: t0.Add(at)}
	}
	planC := bot(10, time.Minute, marker(id, hash))
	// autoPlanC is the plan comment of a plan posted to run at once.
	autoPlanC := bot(10, time.Minute, strings.Replace(planC.Body, `"inputs":"`+inputs+`"`, `"inputs":"`+inputs+`","auto":true,"for":"maintainer"`, 1))
	approve := person(11, 2*time.Minute, "maintainer", "/planex approve "+id)
	yes := person(9, 0, "maintainer", "/planex -y add a cache")
	edited := func(c *postedComment) *postedComment {
		e := *c
		e.Edited = true
		return &e
	}
	rec := func(via ApprovalVia, approvedBy string) *Record {
		return &Record{Thread: 1, SessionID: "s1", Base: base, PlanID: id, PlanHash: hash, PlanCommentID: 10, ApprovedVia: via, ApprovedBy: approvedBy}
	}
	cases := []struct {
		name      string
		rec       *Record
		thread    []*postedComment
		approving *postedComment
		auto      bool
		want      string // "" = holds
	}{
		{"an approve command after the plan", rec(viaComment, "maintainer"), []*postedComment{planC, approve}, approve, false, ""},
		{"-y before the plan", rec(viaYes, "maintainer"), []*postedComment{yes, autoPlanC}, yes, false, ""},
		{"-y before a plan posted to wait", rec(viaYes, "maintainer"), []*postedComment{yes, planC}, yes, false, "was posted to wait for an approval"},
		{"auto-approve on", rec(viaAutoApprove, "maintainer"), []*postedComment{autoPlanC}, nil, true, ""},
		// A state ref names the approver whose access is checked again:
		// one the plan comment does not name is not its approval.
		{"auto-approve, the record names another approver", rec(viaAutoApprove, "planex[bot]"), []*postedComment{autoPlanC}, nil, true, "not for @planex[bot]"},
		{"-y, the record names another approver", rec(viaYes, "lead"), []*postedComment{yes, autoPlanC}, person(9, 0, "lead", yes.Body), false, "not for @lead"},
		{"auto-approve, a comment that names nobody (an older planex's)", rec(viaAutoApprove, "maintainer"),
			[]*postedComment{bot(10, time.Minute, strings.Replace(autoPlanC.Body, `,"for":"maintainer"`, "", 1))}, nil, true, "does not say whom for"},
		{"auto-approve on, a plan posted to wait", rec(viaAutoApprove, "maintainer"), []*postedComment{planC}, nil, true, "was posted to wait for an approval"},
		// GitHub keeps a login's letter case as its owner chose it; the
		// marker names the same account however a record spells it.
		{"auto-approve, the marker names the approver in other letters", rec(viaAutoApprove, "Maintainer"), []*postedComment{autoPlanC}, nil, true, ""},
		// planex never edits its plan comment, and an approval's text is
		// taken only as written (TestRedTeamEditedPlanMarkerRunsAtOnce,
		// TestRedTeamEditedCommentForgesApproval).
		{"plan comment edited", rec(viaComment, "maintainer"), []*postedComment{edited(planC), approve}, approve, false, "was edited after planex posted it"},
		{"approving comment edited", rec(viaComment, "maintainer"), []*postedComment{planC, edited(approve)}, edited(approve), false, "approving comment was edited"},
		{"-y edited", rec(viaYes, "maintainer"), []*postedComment{edited(yes), autoPlanC}, edited(yes), false, "approving comment was edited"},

		{"auto-approve turned off", rec(viaAutoApprove, "maintainer"), []*postedComment{autoPlanC}, nil, false, "auto-approve setting is off"},
		{"dispatch", rec(viaDispatch, "maintainer"), []*postedComment{planC}, nil, false, "workflow_dispatch"},
		{"never approved", rec("", ""), []*postedComment{planC}, nil, false, "no approval is on record"},
		{"plan comment gone", rec(viaComment, "maintainer"), []*postedComment{approve}, approve, false, "plan comment is not on #1"},
		{"plan comment by a person", rec(viaComment, "maintainer"), []*postedComment{person(10, time.Minute, "mallory", planC.Body), approve}, approve, false, "not planex's comment"},
		{"plan comment for another plan", rec(viaComment, "maintainer"), []*postedComment{bot(10, time.Minute, marker("0123456789", hash)), approve}, approve, false, "not planex's comment"},
		{"plan comment without its base (an older planex's)", rec(viaComment, "maintainer"), []*postedComment{bot(10, time.Minute, strings.Replace(planC.Body, `,"base":"`+base+`"`, "", 1)), approve}, approve, false, "does not show the base"},
		{"plan comment without the inputs hash (an older planex's, or stripped by an edit)", rec(viaComment, "maintainer"), []*postedComment{bot(10, time.Minute, strings.Replace(planC.Body, `,"inputs":"`+inputs+`"`, "", 1)), approve}, approve, false, "does not show the hash of the requirement"},
		{"plan comment on another base", rec(viaComment, "maintainer"), []*postedComment{bot(10, time.Minute, strings.Replace(planC.Body, base, strings.Repeat("d", 40), 1)), approve}, approve, false, "not on cccccc"},
		{"approving comment gone", rec(viaComment, "maintainer"), []*postedComment{planC}, nil, false, "approving comment is not on #1"},
		{"approved by someone else", rec(viaComment, "maintainer"), []*postedComment{planC, approve}, person(11, 2*time.Minute, "mallory", approve.Body), false, "not @maintainer's"},
		{"approves another plan", rec(viaComment, "maintainer"), []*postedComment{planC}, person(11, 2*time.Minute, "maintainer", "/planex approve 0123456789"), false, "does not approve plan"},
		{"approval before the plan", rec(viaComment, "maintainer"), []*postedComment{planC}, person(8, 0, "maintainer", approve.Body), false, "written before plan"},
		{"approval in the plan's second, older id", rec(viaComment, "maintainer"), []*postedComment{planC}, person(9, time.Minute, "maintainer", approve.Body), false, "written before plan"},
		{"approval before a re-posted plan", &Record{Thread: 1, SessionID: "s1", Base: base, PlanID: id, PlanHash: hash, PlanCommentID: 12, ApprovedVia: viaComment, ApprovedBy: "maintainer"},
			[]*postedComment{planC, approve, bot(12, 3*time.Minute, planC.Body)}, approve, false, "written before plan"},
		{"-y that is not -y", rec(viaYes, "maintainer"), []*postedComment{autoPlanC}, person(9, 0, "maintainer", "/planex add a cache"), false, "not a /planex -y command"},
		{"-y after the plan", rec(viaYes, "maintainer"), []*postedComment{autoPlanC}, person(12, 3*time.Minute, "maintainer", yes.Body), false, "posted before"},
		{"-y approved an earlier plan", rec(viaYes, "maintainer"), []*postedComment{yes, bot(9, 30*time.Second, marker("1111111111", hash)), autoPlanC}, yes, false, "approved an earlier plan"},
		{"plan comment forged by another bot", rec(viaComment, "maintainer"), []*postedComment{otherBot(10, time.Minute, planC.Body), approve}, approve, false, "not planex's comment"},
		{"-y: another bot's plan comment in between is not planex's", rec(viaYes, "maintainer"), []*postedComment{yes, otherBot(9, 30*time.Second, marker("1111111111", hash)), autoPlanC}, yes, false, ""},
		{"approved by another bot", rec(viaComment, "helper-app[bot]"), []*postedComment{planC}, otherBot(11, 2*time.Minute, approve.Body), false, "not @helper-app[bot]'s"},
		// A review approving the plan, later dismissed by a maintainer:
		// the dismissal takes the approval back.
		{"approving review dismissed", rec(viaComment, "maintainer"), []*postedComment{planC},
			&postedComment{ID: 5, Kind: event.KindReview, Login: "maintainer", Body: approve.Body, Created: t0.Add(2 * time.Minute), Dismissed: true}, false, "review was dismissed"},
		{"approving review", rec(viaComment, "maintainer"), []*postedComment{planC},
			&postedComment{ID: 5, Kind: event.KindReview, Login: "maintainer", Body: approve.Body, Created: t0.Add(2 * time.Minute)}, false, ""},
		// A review in the plan comment's second with a larger id (reviews
		// are numbered apart from comments): not known to come after.
		{"approving review in the plan's second", rec(viaComment, "maintainer"), []*postedComment{planC},
			&postedComment{ID: 99, Kind: event.KindReview, Login: "maintainer", Body: approve.Body, Created: planC.Created}, false, "written before plan"},
		// A -y review in the second of an earlier plan: that plan may
		// have come after it, so the -y may have approved that one.
		{"-y review in an earlier plan's second", rec(viaYes, "maintainer"),
			[]*postedComment{bot(9, 30*time.Second, marker("1111111111", hash)), autoPlanC},
			&postedComment{ID: 3, Kind: event.KindReview, Login: "maintainer", Body: yes.Body, Created: t0.Add(30 * time.Second)}, false, "approved an earlier plan"},
	}
	for _, c := range cases {
		err := judgeApproval(c.rec, c.thread, c.approving, "/planex", c.auto, false)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		case err != nil && !isRefusal(err):
			t.Errorf("%s: %v is not a refusal", c.name, err)
		}
	}
}

// TestAfter: GitHub's times order comments; equal or missing times fall
// back on ids, which only grow. An edit (updated_at) never counts.
func TestAfter(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	c := func(id int64, at time.Duration) *postedComment { return &postedComment{ID: id, Created: t0.Add(at)} }
	cases := []struct {
		name string
		a, b *postedComment
		want bool
	}{
		{"later time", c(1, time.Second), c(2, 0), true},
		{"earlier time, larger id (another id space)", c(9, 0), c(2, time.Second), false},
		{"same second, larger id", c(3, 0), c(2, 0), true},
		{"same second, smaller id", c(1, 0), c(2, 0), false},
		{"no time", &postedComment{ID: 5}, c(4, time.Hour), true},
		// A review's id and an issue comment's id are numbered apart: in
		// one second neither is known to come first.
		{"same second, review with a larger id than a comment", &postedComment{ID: 900, Kind: event.KindReview, Created: t0}, &postedComment{ID: 2, Kind: event.KindIssueComment, Created: t0}, false},
		{"same second, comment with a larger id than a review", &postedComment{ID: 900, Kind: event.KindIssueComment, Created: t0}, &postedComment{ID: 2, Kind: event.KindReview, Created: t0}, false},
		{"a later review", &postedComment{ID: 1, Kind: event.KindReview, Created: t0.Add(time.Second)}, &postedComment{ID: 2, Kind: event.KindIssueComment, Created: t0}, true},
	}
	for _, k := range cases {
		if got := after(k.a, k.b); got != k.want {
			t.Errorf("%s: %v", k.name, got)
		}
	}
}

// reviewsOnly is what approvalComment reads of a pull request's reviews.
type reviewsOnly struct {
	approvalAPI
	reviews []*github.PullRequestReview
}

func (r reviewsOnly) ListReviews(context.Context, string, string, int) ([]*github.PullRequestReview, error) {
	return r.reviews, nil
}

// TestApprovalReviewDismissed: a maintainer who dismisses a review that
// approved a plan takes that approval back; the jobs that check the
// approval again (each task, each resume) find it dismissed and refuse.
func TestApprovalReviewDismissed(t *testing.T) {
	t.Parallel()
	at := github.Timestamp{Time: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	for _, state := range []string{"COMMENTED", "APPROVED", "DISMISSED", "dismissed"} {
		body, login, id := "/planex approve 0123456789", "maintainer", int64(77)
		api := reviewsOnly{reviews: []*github.PullRequestReview{{ID: &id, Body: &body, State: &state, User: &github.User{Login: &login}, SubmittedAt: &at}}}
		g := &gate{env: &env{Cfg: &Config{Owner: "o", Repo: "r"}, GH: GitHub{Approvals: api}, self: &identity{pinned: "planex[bot]"}}}
		rec := &Record{Thread: 3, ApprovalCommentKind: event.KindReview, ApprovalCommentID: id}
		c, err := g.approvalComment(context.Background(), rec, nil)
		if err != nil || c == nil {
			t.Fatalf("%s: %v %v", state, c, err)
		}
		if want := strings.EqualFold(state, "DISMISSED"); c.Dismissed != want || c.Kind != event.KindReview {
			t.Errorf("%s: dismissed %v kind %q", state, c.Dismissed, c.Kind)
		}
	}
}
