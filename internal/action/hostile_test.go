package action

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/ghfake"
)

// hostileForms wrap a command in every Markdown form GitHub shows as
// code, a quote, HTML or nothing at all: no form holds a command.
var hostileForms = []struct{ name, format string }{
	{"backtick fence", "```\n%s\n```"},
	{"tilde fence", "~~~\n%s\n~~~"},
	{"tilde fence of four holding a line of three", "~~~~\n~~~\n%s\n~~~~"},
	{"backtick fence of four holding a line of three", "````\n```\n%s\n```\n````"},
	{"indented code", "    %s"},
	{"indented code after text", "Here is the command:\n\n    %s"},
	{"block quote", "> %s"},
	{"lazy quote continuation", "> as discussed\n%s"},
	{"html comment", "<!--\n%s\n-->"},
	{"details block", "<details>\n\n%s\n\n</details>"},
	{"html div block", "<div>\n%s\n</div>"},
	{"inline code", "`%s`"},
	{"zero-width space first", "\u200b%s"},
	{"text first", "Looks good.\n\n%s"},
}

// calls is what the scripted agent was asked since the last reset.
func (a *scriptedAgent) takeCalls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.calls
	a.calls = nil
	return c
}

// writesSince lists the mutating requests GitHub received after the
// first n requests.
func (w *world) writesSince(n int) []string {
	var out []string
	for _, r := range w.fake.Requests()[n:] {
		if r.Method != "GET" && r.Method != "HEAD" {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// originRefs is every ref of origin with its object.
func (w *world) originRefs() string {
	w.t.Helper()
	cmd := exec.Command("git", "for-each-ref")
	cmd.Dir = w.origin
	out, err := cmd.Output()
	if err != nil {
		w.t.Fatalf("for-each-ref: %v", err)
	}
	return string(out)
}

// reviewComment posts body as login's review comment on line 1 of path
// in pr and returns its pull_request_review_comment event.
func (w *world) reviewComment(pr ghfake.PullRequest, login, path, body string) *event.Event {
	id := w.fake.AddReviewComment(wRepo, pr.Number, login, path, 1, body)
	author := event.User{Login: login, Type: "User"}
	return &event.Event{Name: event.PullRequestReviewComment, Action: "created", Owner: wOwner, Repo: wName, DefaultBranch: "main",
		Number: pr.Number, IsPR: true, Sender: author,
		Comment: &event.Comment{Kind: event.KindReviewComment, ID: id, Body: body, Author: author, Path: path, Line: 1, CommitID: pr.HeadSHA},
		PR: &event.PullRequest{Number: pr.Number, Title: pr.Title, Body: pr.Body, State: "open", Author: event.User{Login: "github-actions[bot]", Type: "Bot"},
			HeadRef: pr.Head, HeadSHA: pr.HeadSHA, HeadRepo: wRepo, BaseRef: "main", BaseRepo: wRepo}}
}

// TestHostileCommentFormsRunNothing: a command GitHub displays as code, a
// quote, HTML or behind invisible text is no command. Each form, holding
// an approval of a real plan or a self-approving plan request, in an
// issue comment, is ignored and leaves no comment, reaction, label,
// branch or state behind, and no agent runs; the same command written
// plainly (after a quote) still runs. (The end-to-end test of the same
// name in internal/cli keeps two of the forms, read from event files.)
func TestHostileCommentFormsRunNothing(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "base", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "")
	if _, err := w.handle(w.comment(n, "maintainer", "/planex add a file")); err != nil {
		t.Fatal(err)
	}
	id := w.planID(n)
	if calls := w.agent.takeCalls(); !strings.Contains(strings.Join(calls, " "), "plan") {
		t.Fatalf("the scripted agent was asked for no plan: %q", calls)
	}
	refs := w.originRefs()
	for _, form := range hostileForms {
		for _, cmd := range []string{"/planex approve " + id, "/planex -y add a second file"} {
			body := strings.Replace(form.format, "%s", cmd, 1)
			before := len(w.fake.Requests())
			comments := len(w.fake.Comments(wRepo, n))
			ev := w.comment(n, "maintainer", body)
			r, err := w.handle(ev)
			if err != nil || r.Outputs.Status != StatusIgnored {
				t.Errorf("%s (%s): status %q, error %v", form.name, cmd, r.Outputs.Status, err)
			}
			if got := len(w.fake.Comments(wRepo, n)); got != comments+1 {
				t.Errorf("%s (%s): planex commented: %q", form.name, cmd, w.lastComment(n))
			}
			if wr := w.writesSince(before); len(wr) > 0 {
				t.Errorf("%s (%s): planex wrote to GitHub: %v", form.name, cmd, wr)
			}
			if c, _ := w.fake.Comment(wRepo, ev.Comment.ID); len(c.Reactions) > 0 {
				t.Errorf("%s (%s): reactions %v", form.name, cmd, c.Reactions)
			}
			if calls := w.agent.takeCalls(); len(calls) > 0 {
				t.Errorf("%s (%s): the agent ran: %q", form.name, cmd, calls)
			}
		}
	}
	if got := w.originRefs(); got != refs {
		t.Errorf("origin's refs changed:\nbefore %s\nafter %s", refs, got)
	}
	if l := w.labels(n); !slices.Contains(l, LabelPlanned) || slices.Contains(l, LabelRunning) {
		t.Errorf("labels = %v", l)
	}

	r, err := w.handle(w.comment(n, "maintainer", "> ship it?\n\n/planex approve "+id+"\n\nyes"))
	if err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("plain approve: %v %+v", err, r.Outputs)
	}
	if calls := w.agent.takeCalls(); !strings.Contains(strings.Join(calls, "\n"), "execute T1") {
		t.Errorf("agent calls after the plain approval: %q", calls)
	}
	w.noRefusedRequests()
}

// TestHostileReviewCommentFormsRunNothing: review comments on planex's
// pull request go through the same parser: every hostile form of a
// self-approving request is ignored, writes nothing to GitHub, runs no
// agent, and the pull request's branch keeps its one commit.
func TestHostileReviewCommentFormsRunNothing(t *testing.T) {
	w := newParallelWorld(t)
	pr := w.planexPR()
	w.agent.takeCalls()
	for _, form := range hostileForms {
		body := strings.Replace(form.format, "%s", "/planex -y also add docs", 1)
		ev := w.reviewComment(pr, "maintainer", "a/t1.txt", body)
		before := len(w.fake.Requests())
		r, err := w.handle(ev)
		if err != nil || r.Outputs.Status != StatusIgnored {
			t.Errorf("%s: status %q, error %v", form.name, r.Outputs.Status, err)
		}
		if wr := w.writesSince(before); len(wr) > 0 {
			t.Errorf("%s: planex wrote to GitHub: %v", form.name, wr)
		}
		if calls := w.agent.takeCalls(); len(calls) > 0 {
			t.Errorf("%s: the agent ran: %q", form.name, calls)
		}
	}
	if got := strings.Join(w.branch(pr.Head), " | "); got != "T1:_base" {
		t.Errorf("the pull request's branch changed: %s", got)
	}
}
