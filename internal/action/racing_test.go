package action

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/event"
)

// Two workflow runs handling one thread at once (issue 34's races, were
// internal/cli's TestRedTeamActionRace* with a planex process per job).
// Each race runs raceRounds times, each job started first once.

const (
	raceRounds = 2
	lostRace   = "Another planex run handled this thread's plan at the same time"
)

// raced is one job of a race: its outputs and the error it returned.
type raced struct {
	out Outputs
	err error
}

// together handles two events as two workflow runs (run ids 501 and
// 502) at once, b started first on odd rounds so either may win, and
// waits for both. Both clones are made before either starts.
func (w *world) together(round int, a, b *event.Event) (raced, raced) {
	w.t.Helper()
	ja, _ := w.job(func(c *Config) { c.RunID = "501" })
	jb, _ := w.job(func(c *Config) { c.RunID = "502" })
	var ra, rb raced
	var wg sync.WaitGroup
	handle := func(r *Runner, ev *event.Event, into *raced) {
		defer wg.Done()
		ctx := context.Background()
		into.err = r.LoadSettings(ctx)
		if into.err == nil {
			into.err = r.Handle(ctx, ev)
		}
		into.out = r.Outputs
	}
	wg.Add(2)
	if round%2 == 1 {
		go handle(jb, b, &rb)
		go handle(ja, a, &ra)
	} else {
		go handle(ja, a, &ra)
		go handle(jb, b, &rb)
	}
	wg.Wait()
	w.t.Logf("together: %s / %s", ra.out.Status, rb.out.Status)
	if ra.err != nil || rb.err != nil {
		w.t.Fatalf("round %d: errors %v / %v", round, ra.err, rb.err)
	}
	return ra, rb
}

// raceWorld is a world with an admin, "owner", besides the maintainer.
func raceWorld(t *testing.T) *world {
	w := newParallelWorld(t)
	w.fake.AddUser("owner", "User")
	w.fake.SetPermission(wRepo, "owner", "admin")
	return w
}

// statusSays is the thread's one status comment; the test fails when
// there is not exactly one.
func (w *world) statusSays(n int) string {
	w.t.Helper()
	s := w.commentsWith(n, "<!-- planex:status -->")
	if len(s) != 1 {
		w.t.Fatalf("%d status comments on #%d", len(s), n)
	}
	return s[0]
}

func countWith(bodies []string, part string) int {
	k := 0
	for _, b := range bodies {
		if strings.Contains(b, part) {
			k++
		}
	}
	return k
}

func lostToOther(s Status) bool { return s == StatusSuperseded || s == StatusRefused }

// TestRedTeamRaceApproveCancel: an approve and a cancel handled at once.
// Exactly one wins; the thread, labels, reactions and outputs say what
// happened and nothing else.
func TestRedTeamRaceApproveCancel(t *testing.T) {
	w := raceWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	for round := 0; round < raceRounds; round++ {
		n, id := w.plannedOne("Add a file")
		w.agent.takeCalls()
		approve := w.comment(n, "maintainer", "/planex approve "+id)
		pa, pc := w.together(round, approve, w.comment(n, "owner", "/planex cancel"))
		bots := w.botComments(n)
		rocket := slices.Contains(w.reactionsOn(approve.Comment.ID), "rocket")
		status, ran := w.statusSays(n), w.agent.executed("T1")
		switch {
		case pa.out.Status == StatusDone:
			if !ran || !rocket || !slices.Contains(w.labels(n), LabelDone) || !strings.Contains(status, "**done**") {
				t.Errorf("round %d: approval won, but ran %v, rocket %v, labels %v\n%s", round, ran, rocket, w.labels(n), status)
			}
			if !lostToOther(pc.out.Status) || countWith(bots, "is cancelled") != 0 {
				t.Errorf("round %d: cancel after the run won: %+v\n%s", round, pc.out, strings.Join(bots, "\n---\n"))
			}
		case pc.out.Status == StatusCancelled:
			if ran || rocket || len(w.labels(n)) != 0 || !strings.Contains(status, "cancelled") {
				t.Errorf("round %d: cancel won, but ran %v, rocket %v, labels %v\n%s", round, ran, rocket, w.labels(n), status)
			}
			if !lostToOther(pa.out.Status) || countWith(bots, "is cancelled") != 1 {
				t.Errorf("round %d: approval after the cancel won: %+v\n%s", round, pa.out, strings.Join(bots, "\n---\n"))
			}
			if sid := pc.out.SessionID; sid == "" || w.branch("planex/"+sid) != nil {
				t.Errorf("round %d: session %q: its run branch reached origin", round, sid)
			}
		default:
			t.Fatalf("round %d: neither won: approve %+v, cancel %+v", round, pa.out, pc.out)
		}
		if k := countWith(bots, lostRace); k > 1 || countWith(bots, "already being handled") > 0 {
			t.Errorf("round %d: %d lost-race replies\n%s", round, k, strings.Join(bots, "\n---\n"))
		}
		w.noInternalErrors(n)
	}
}

// TestRedTeamRaceApproveRevise: an approve and a revise handled at once.
// Either the approved plan runs and no second plan invites an approval,
// or the revised plan waits and nothing ran.
func TestRedTeamRaceApproveRevise(t *testing.T) {
	w := raceWorld(t)
	for round := 0; round < raceRounds; round++ {
		w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
		n, id := w.plannedOne("Add a file")
		w.agent.takeCalls()
		// What the revise plans, if it runs.
		w.agent.setPlan(wTask{ID: "T1", Title: "one, smaller", Scope: "a/**"})
		approve := w.comment(n, "maintainer", "/planex approve "+id)
		pa, pr := w.together(round, approve, w.comment(n, "owner", "/planex revise smaller please"))
		bots := w.botComments(n)
		plans := countWith(bots, "<!-- planex:plan ")
		rocket := slices.Contains(w.reactionsOn(approve.Comment.ID), "rocket")
		ran := w.agent.executed("T1")
		switch {
		case pa.out.Status == StatusDone:
			if plans != 1 || !ran || !rocket || !slices.Contains(w.labels(n), LabelDone) {
				t.Errorf("round %d: approval won, but %d plan comments, ran %v, rocket %v, labels %v", round, plans, ran, rocket, w.labels(n))
			}
			if !lostToOther(pr.out.Status) {
				t.Errorf("round %d: revise after the run won: %+v", round, pr.out)
			}
		case pr.out.Status == StatusPlanned:
			revised := w.planID(n)
			if plans != 2 || revised == id || ran || rocket || !slices.Contains(w.labels(n), LabelPlanned) ||
				!strings.Contains(w.statusSays(n), "approve "+revised) {
				t.Errorf("round %d: revise won, but %d plan comments, ran %v, rocket %v, labels %v\n%s", round, plans, ran, rocket, w.labels(n), w.statusSays(n))
			}
			if !lostToOther(pa.out.Status) {
				t.Errorf("round %d: approval after the revise won: %+v", round, pa.out)
			}
		default:
			t.Fatalf("round %d: neither won: approve %+v, revise %+v", round, pa.out, pr.out)
		}
		if k := countWith(bots, lostRace); k > 1 {
			t.Errorf("round %d: %d lost-race replies", round, k)
		}
		w.noInternalErrors(n)
	}
}

// TestRedTeamRaceTwoApprovals: two approvals handled at once run the
// plan once, with one 🚀.
func TestRedTeamRaceTwoApprovals(t *testing.T) {
	w := raceWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	for round := 0; round < raceRounds; round++ {
		n, id := w.plannedOne("Add a file")
		a := w.comment(n, "maintainer", "/planex approve "+id)
		b := w.comment(n, "owner", "/planex approve "+id)
		pa, pb := w.together(round, a, b)
		done, rockets := 0, 0
		for _, p := range []raced{pa, pb} {
			if p.out.Status == StatusDone {
				done++
			}
		}
		for _, ev := range []*event.Event{a, b} {
			if slices.Contains(w.reactionsOn(ev.Comment.ID), "rocket") {
				rockets++
			}
		}
		if got := strings.Join(w.branch("planex/"+pa.out.SessionID), " | "); done != 1 || rockets != 1 || got != "T1:_one" {
			t.Errorf("round %d: %d runs done, %d rockets, branch %q; outputs %+v %+v", round, done, rockets, got, pa.out, pb.out)
		}
		if prs := w.fake.PullRequests(wRepo); len(prs) != round+1 {
			t.Errorf("round %d: %d pull requests", round, len(prs))
		}
		if !strings.Contains(w.statusSays(n), "**done**") || !slices.Contains(w.labels(n), LabelDone) {
			t.Errorf("round %d: status or labels disagree: %v", round, w.labels(n))
		}
		w.noInternalErrors(n)
	}
}

// TestRedTeamRaceTwoPlans: two planning requests on a fresh issue
// handled at once leave one plan, one plan comment, one status comment.
func TestRedTeamRaceTwoPlans(t *testing.T) {
	w := raceWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	for round := 0; round < raceRounds; round++ {
		n := w.fake.AddIssue(wRepo, "maintainer", "Add a file", "")
		pa, pb := w.together(round, w.comment(n, "maintainer", "/planex add a file"), w.comment(n, "owner", "/planex add one file"))
		bots := w.botComments(n)
		won := 0
		for _, p := range []raced{pa, pb} {
			if p.out.Status == StatusPlanned {
				won++
			}
		}
		if won == 2 {
			// One ran after the other had finished: two plans in turn,
			// the first superseded by the second.
			if countWith(bots, "<!-- planex:plan ") != 2 {
				t.Errorf("round %d: both planned, %d plan comments", round, countWith(bots, "<!-- planex:plan "))
			}
		} else if won != 1 || countWith(bots, "<!-- planex:plan ") != 1 || countWith(bots, lostRace) != 1 {
			t.Errorf("round %d: %d won; comments:\n%s", round, won, strings.Join(bots, "\n---\n"))
		}
		w.statusSays(n)
		if !slices.Contains(w.labels(n), LabelPlanned) {
			t.Errorf("round %d: labels %v", round, w.labels(n))
		}
		w.noInternalErrors(n)
	}
}

// TestRedTeamRaceTwoRetries: two /planex retry of a failed plan handled
// at once re-run it once.
func TestRedTeamRaceTwoRetries(t *testing.T) {
	w := raceWorld(t)
	w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"})
	for round := 0; round < raceRounds; round++ {
		w.agent.failTask("T1", "not yet")
		n, id := w.plannedOne("Add a file")
		if r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+id)); err != nil || r.Outputs.Status != StatusFailed {
			t.Fatalf("round %d: approve: %v %+v", round, err, r.Outputs)
		}
		w.agent.failTask("T1", "")
		w.agent.takeCalls()
		pa, pb := w.together(round, w.comment(n, "maintainer", "/planex retry"), w.comment(n, "owner", "/planex retry"))
		done := 0
		for _, p := range []raced{pa, pb} {
			if p.out.Status == StatusDone {
				done++
			}
		}
		if calls := countWith(w.agent.takeCalls(), "execute T1"); done != 1 || calls != 1 {
			t.Errorf("round %d: %d retries done, T1 ran %d times; %+v %+v", round, done, calls, pa.out, pb.out)
		}
		if l := w.labels(n); !strings.Contains(w.statusSays(n), "**done**") || !slices.Contains(l, LabelDone) || slices.Contains(l, LabelRunning) {
			t.Errorf("round %d: status or labels disagree: %v", round, l)
		}
		w.noInternalErrors(n)
	}
}
