package action

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"
)

// TestIdentity: planex's account is the bot-login input, else the Actions
// bot with the job token, else what GitHub answered when planex posted,
// else the thread's record; a record never outranks a pinned account,
// and an unknown account is nobody (no bot is planex for being a bot).
func TestIdentity(t *testing.T) {
	t.Parallel()
	user := func(login, typ string) *github.User { return &github.User{Login: &login, Type: &typ} }
	cases := []struct {
		name    string
		cfg     Config
		posted  *github.User // what a create answered in this job
		record  string       // the record's self
		who     *github.User
		planexs bool
	}{
		{"job token: the Actions bot", Config{DefaultToken: true}, nil, "", user(ActionsBot, "Bot"), true},
		{"job token: another bot", Config{DefaultToken: true}, nil, "", user("dependabot[bot]", "Bot"), false},
		{"job token: a record naming another bot", Config{DefaultToken: true}, nil, "helper-app[bot]", user("helper-app[bot]", "Bot"), false},
		{"bot-login: the App", Config{BotLogin: "planex-app[bot]"}, nil, "", user("Planex-App[bot]", "Bot"), true},
		{"bot-login: the Actions bot is not the App", Config{BotLogin: "planex-app[bot]", DefaultToken: true}, nil, "", user(ActionsBot, "Bot"), false},
		{"bot-login: what a create answered does not move it", Config{BotLogin: "planex-app[bot]"}, user("helper-app[bot]", "Bot"), "", user("helper-app[bot]", "Bot"), false},
		{"unpinned: learned from a create", Config{}, user("planex-app[bot]", "Bot"), "", user("planex-app[bot]", "Bot"), true},
		{"unpinned: learned, another bot", Config{}, user("planex-app[bot]", "Bot"), "", user("helper-app[bot]", "Bot"), false},
		{"unpinned: a create outranks the record", Config{}, user("planex-app[bot]", "Bot"), "helper-app[bot]", user("helper-app[bot]", "Bot"), false},
		{"unpinned: from the record", Config{}, nil, "planex-app[bot]", user("planex-app[bot]", "Bot"), true},
		{"unpinned, nothing known: no bot is planex", Config{}, nil, "", user(ActionsBot, "Bot"), false},
		{"unpinned: a record whose self is no login", Config{}, nil, "x y", user("x y", "User"), false},
		{"a person with a bot's name but for case", Config{BotLogin: "me"}, nil, "", user("ME", "User"), true},
		// A person may register the App's slug as a login: it is not the App.
		{"bot-login: a person named as the App's slug", Config{BotLogin: "planex-app[bot]"}, nil, "", user("planex-app", "User"), false},
		{"job token: a person named github-actions", Config{DefaultToken: true}, nil, "", user("github-actions", "User"), false},
		{"unpinned: a person named as the learned App's slug", Config{}, user("planex-app[bot]", "Bot"), "", user("planex-app", "User"), false},
		{"no user", Config{DefaultToken: true}, nil, "", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			id := newIdentity(&c.cfg)
			if c.posted != nil {
				id.note(c.posted)
			}
			id.fromRecord(&Record{Self: c.record})
			if got := id.is(c.who); got != c.planexs {
				t.Errorf("is(%v) = %v, want %v (planex is %q)", c.who.GetLogin(), got, c.planexs, id.login())
			}
			if got := id.isLogin(c.who.GetLogin()); got != c.planexs {
				t.Errorf("isLogin(%q) = %v, want %v", c.who.GetLogin(), got, c.planexs)
			}
		})
	}
}

// TestIdentityLearnedAcrossJobs: with a token other than the job's and no
// bot-login, planex learns its account from the plan comment it posts,
// keeps it in the thread's record, and the approving job (a fresh
// runner) recognises its plan comment by it; a follow-up on the pull
// request learns it from the record of the issue its branch names.
func TestIdentityLearnedAcrossJobs(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	unpinned := func(c *Config) { c.BotLogin, c.DefaultToken = "", false }
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "One file.")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex add a file"), unpinned); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("plan: %v %+v", err, r.Outputs)
	}
	if rec := run(t, w.origin, "show", stateRef(n)+":"+recordFile); !strings.Contains(rec, `"self": "`+ActionsBot+`"`) {
		t.Errorf("the record does not keep planex's account:\n%s", rec)
	}
	if r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)), unpinned); err != nil || r.Outputs.Status != StatusDone {
		t.Fatalf("approve: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
	// A follow-up on its pull request, whose thread has no record yet,
	// learns the account from the issue's record.
	pr := w.fake.PullRequests(wRepo)[0]
	if r, err := w.handle(w.comment(pr.Number, "maintainer", "/planex add another file"), unpinned); err != nil || r.Outputs.Status != StatusPlanned {
		t.Errorf("follow-up: %v %+v\n%s", err, r.Outputs, w.lastComment(pr.Number))
	}
}

// TestIdentityOfAnApp: planex acting as a GitHub App (bot-login names
// it) plans, is approved, runs and opens its pull request as the App; a
// copy of its plan comment by the Actions bot (not planex then) on the
// thread changes nothing.
func TestIdentityOfAnApp(t *testing.T) {
	w := newParallelWorld(t)
	w.fake.SetToken("ghs_test", "planex-app[bot]")
	w.fake.SetPermission(wRepo, "planex-app[bot]", "write")
	asApp := func(c *Config) { c.BotLogin = "planex-app[bot]" }
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "")
	if r, err := w.handle(w.comment(n, "maintainer", "/planex add a file"), asApp); err != nil || r.Outputs.Status != StatusPlanned {
		t.Fatalf("plan: %v %+v", err, r.Outputs)
	}
	plans := w.commentsWith(n, "<!-- planex:plan ")
	if len(plans) != 1 {
		t.Fatalf("%d plan comments", len(plans))
	}
	// Another workflow's job token copies the plan comment below.
	w.fake.AddComment(wRepo, n, ActionsBot, plans[0])
	if r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+w.planID(n)), asApp); err != nil || r.Outputs.Status != StatusDone {
		t.Errorf("approve: %v %+v\n%s", err, r.Outputs, w.lastComment(n))
	}
	if got := len(w.fake.PullRequests(wRepo)); got != 1 || w.fake.PullRequests(wRepo)[0].Author != "planex-app[bot]" {
		t.Errorf("pull requests: %+v", w.fake.PullRequests(wRepo))
	}
}

// TestRedTeamOtherThreadsRecordTeachesNoAccount: without bot-login and
// the job token, a pull request's flows learn planex's account from the
// record of the issue its `planex/<n>-…` branch names. Another App that
// can push wrote refs/planex/state/98 holding a record of another
// thread (#7) that names the App as planex, and opened a pull request
// from planex/98-helper: the record was taken unchecked, so planex took
// the App's pull request for its own and planned a follow-up on it. A
// record is read for its account only when it is of the thread it is
// stored under, as every other record is.
func TestRedTeamOtherThreadsRecordTeachesNoAccount(t *testing.T) {
	w := newParallelWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "more", Scope: "a/**"})
	pr := w.helperPR()
	forge := filepath.Join(t.TempDir(), "forge")
	run(t, t.TempDir(), "clone", "-q", w.origin, forge)
	run(t, forge, "checkout", "-q", "--orphan", "forged")
	run(t, forge, "rm", "-rqf", ".")
	rec := `{"thread": 7, "issue": 7, "session_id": "7-other", "branch": "planex/7-other", "state": "done", "self": "` + helperBot + `"}`
	if err := os.WriteFile(filepath.Join(forge, recordFile), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, forge, "add", recordFile)
	run(t, forge, "-c", "user.name=F", "-c", "user.email=f@example.com", "commit", "-q", "-m", "planex: state")
	run(t, forge, "push", "-q", "origin", "HEAD:"+stateRef(98))

	unpinned := func(c *Config) { c.BotLogin, c.DefaultToken = "", false }
	r, err := w.handle(w.comment(pr.Number, "maintainer", "/planex add a readme"), unpinned)
	if err != nil || r.Outputs.Status != StatusRefused || !strings.Contains(w.lastComment(pr.Number), "only on pull requests it opened") {
		t.Errorf("follow-up on the App's pull request: %v, status %q, reply %q", err, r.Outputs.Status, w.lastComment(pr.Number))
	}
	if len(w.commentsWith(pr.Number, "<!-- planex:plan ")) != 0 {
		t.Error("planex took the App for itself from another thread's record and planned on its pull request")
	}
}
