package action

import (
	"github.com/planexhq/planex/internal/ghfake"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRedTeamForgedStateClosesAnotherIssue: the pull request of a plan
// made on an issue says "Closes #<issue>", with the issue number read
// from the thread's record. A forged state ref keeps the approved plan
// but names another issue there (a security report, say): merging the
// pull request closed that one. The record's thread and issue must be the
// thread it was read for; such a record is refused and nothing runs.
func TestRedTeamForgedStateClosesAnotherIssue(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	other := w.fake.AddIssue(wRepo, "reporter", "Security report", "Keep open until fixed.")
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	issueRe := regexp.MustCompile(`"issue": \d+`)
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile}, func(s string) string {
		return issueRe.ReplaceAllString(s, `"issue": `+strconv.Itoa(other))
	}))
	r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	if err == nil || !strings.Contains(err.Error(), "names thread") {
		t.Errorf("the forged record was taken: %v, status %q", err, r.Outputs.Status)
	}
	for _, pr := range w.fake.PullRequests(wRepo) {
		if strings.Contains(pr.Body, "Closes #"+strconv.Itoa(other)) {
			t.Errorf("the pull request closes #%d, which nobody asked planex about (%v, %q)", other, err, r.Outputs.Status)
		}
	}
}

// TestRedTeamForgedStatePullRequestLink: planex's status comment links
// the run's pull request, with the address read from the thread's
// record. A forged state ref puts Markdown of its own there (a team
// mention, an image, a link dressed as planex's approval): the status
// comment carried it as planex's words, pinging the team. An address
// that is not a plain web address is not shown.
func TestRedTeamForgedStatePullRequestLink(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	forged := `@org/security-team <img src=x onerror=alert(1)> [approve here](https://evil.example/approve)`
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile}, func(s string) string {
		return strings.Replace(s, "{", "{\n  \"pr_url\": \""+strings.ReplaceAll(forged, `"`, `\"`)+"\",", 1)
	}))
	w.agent.failTask("T1", "not now")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n))); err != nil {
		t.Logf("approve: %v", err)
	}
	for _, c := range w.fake.Comments(wRepo, n) {
		if strings.Contains(c.Body, "@org/security-team") || strings.Contains(c.Body, "evil.example") || strings.Contains(c.Body, "<img") {
			t.Errorf("a comment of planex's carries the forged pull request link:\n%s", c.Body)
		}
	}
}

// TestRedTeamForgedStateStatusWord: /planex status replies "Plan <id> is
// **<state>**" with the state read from the thread's record; a forged
// state ref put Markdown of its own there (a team mention, an image). A
// record whose state is not one planex writes is refused.
func TestRedTeamForgedStateStatusWord(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	stateRe := regexp.MustCompile(`"state": "[a-z]+"`)
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile}, func(s string) string {
		return stateRe.ReplaceAllString(s, `"state": "done** @org/security-team <img src=x onerror=alert(1)> **"`)
	}))
	if _, err := w.handle(w.comment(n, "maintainer", "/planex status")); err == nil {
		t.Error("the forged record was read")
	}
	for _, c := range w.fake.Comments(wRepo, n) {
		if strings.Contains(c.Body, "@org/security-team") || strings.Contains(c.Body, "<img") {
			t.Errorf("a comment of planex's carries the forged state:\n%s", c.Body)
		}
	}
}

// TestRedTeamForgedStateAnswersOnAnotherPullRequest: after a run, planex
// answers the review findings a follow-up's tasks cite, on the pull
// request its record names, and labels that pull request. A forged state
// ref of a plan made on an issue names someone's pull request there and
// adds a finding it "answers": when no task completed (so no pull request
// of the run's replaced the number), planex commented on that pull
// request, marking its finding fixed (which hides it from /planex fix),
// and labelled it failed. A plan on an issue has no findings to answer
// and a follow-up's pull request is its own thread: such a record is
// refused.
func TestRedTeamForgedStateAnswersOnAnotherPullRequest(t *testing.T) {
	checkForgedRecordSparesPullRequest(t, true, func(human int) string {
		return "\n  \"pr_number\": " + strconv.Itoa(human) + ",\n  \"answers\": [{\"task\": \"T1\", \"finding_key\": \"0123456789abcdef\"}],"
	})
}

// TestRedTeamForgedStateLabelsAnotherPullRequest: as above without the
// findings: the forged record of a plan on an issue names someone's pull
// request, and when no task completed planex labelled that pull request
// "planex:failed". The run's pull request is the one its branch heads.
func TestRedTeamForgedStateLabelsAnotherPullRequest(t *testing.T) {
	checkForgedRecordSparesPullRequest(t, false, func(human int) string {
		return "\n  \"pr_number\": " + strconv.Itoa(human) + ","
	})
}

// checkForgedRecordSparesPullRequest plans T1 (which fails) on a new
// issue, forges the thread's record to open with the fields that fields
// writes for someone's pull request human, and approves. The pull request
// must get no comment and no label from planex; with mustRefuse the
// approval must also fail reading the record.
func checkForgedRecordSparesPullRequest(t *testing.T, mustRefuse bool, fields func(human int) string) {
	t.Helper()
	w := newParallelWorld(t)
	human := w.fake.AddPullRequest(wRepo, ghfake.PullRequest{Title: "by hand", Author: "maintainer", Head: "feature/y"})
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	w.agent.failTask("T1", "not now")
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile}, func(s string) string {
		return strings.Replace(s, "{", "{"+fields(human), 1)
	}))
	_, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)))
	switch {
	case mustRefuse && err == nil:
		t.Error("the forged record was read")
	case err != nil:
		t.Logf("approve: %v", err)
	}
	if cs := w.fake.Comments(wRepo, human); len(cs) != 0 {
		t.Errorf("planex commented on someone's pull request #%d:\n%s", human, cs[0].Body)
	}
	for _, pr := range w.fake.PullRequests(wRepo) {
		if pr.Number == human && len(pr.Labels) != 0 {
			t.Errorf("planex labelled someone's pull request #%d: %v", human, pr.Labels)
		}
	}
}

// TestRedTeamForgedStateStatusCommentID: planex edits its status comment
// in place, by the id the thread's record keeps. A forged state ref puts
// there the id of someone else's comment (on another issue: the ids are
// the repository's): planex overwrote that comment with its status,
// erasing what a person wrote. A comment is edited as the status only
// when it is planex's status comment on the thread; otherwise a new one
// is posted.
func TestRedTeamForgedStateStatusCommentID(t *testing.T) {
	w := newParallelWorld(t)
	other := w.fake.AddIssue(wRepo, "reporter", "Security report", "Details.")
	theirs := w.fake.AddComment(wRepo, other, "maintainer", "Confirmed; the fix is tracked privately.")
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	idRe := regexp.MustCompile(`"status_comment_id": \d+`)
	forgeState(t, w, n, rewriteStateFiles([]string{recordFile}, func(s string) string {
		if idRe.MatchString(s) {
			return idRe.ReplaceAllString(s, `"status_comment_id": `+strconv.FormatInt(theirs, 10))
		}
		return strings.Replace(s, "{", "{\n  \"status_comment_id\": "+strconv.FormatInt(theirs, 10)+",", 1)
	}))
	if _, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n))); err != nil {
		t.Logf("approve: %v", err)
	}
	for _, c := range w.fake.Comments(wRepo, other) {
		if c.ID == theirs && c.Body != "Confirmed; the fix is tracked privately." {
			t.Errorf("planex overwrote someone's comment on #%d:\n%s", other, c.Body)
		}
	}
}
