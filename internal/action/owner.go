package action

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/gh"
)

// A running plan has an owner: the workflow run (and its attempt) that
// runs it, recorded in the state with a heartbeat the owner refreshes
// while it works. A run that dies without its finalize step (runner lost,
// job cancelled, SIGKILL) leaves the plan "running"; `/planex retry` (or
// an approval) takes it over once the owner is known to be gone: its
// workflow run has completed (or was re-run), as the Actions API says,
// or, when the API cannot be asked (no run recorded, no `actions: read`),
// it has been silent for longer than Config.StaleAfter. A live owner that loses the
// state ref to a takeover finds out at its next save (the push's lease
// fails) and stops.

// Owner is the workflow run that holds a running plan.
type Owner struct {
	RunID      string `json:"run_id,omitempty"`
	RunAttempt string `json:"run_attempt,omitempty"`
}

// Defaults for Config.HeartbeatInterval and Config.StaleAfter.
const (
	DefaultHeartbeatInterval = 5 * time.Minute
	DefaultStaleAfter        = 15 * time.Minute
)

// errTakenOver is the cause of a run's cancellation when another run took
// its plan over.
var errTakenOver = errors.New("another planex run took this plan over")

// claim records this workflow run as the owner of rec.
func (r *env) claim(rec *Record) {
	rec.Owner = &Owner{RunID: r.Cfg.RunID, RunAttempt: r.Cfg.RunAttempt}
}

// holder is the owner a running record names: the run working on an
// outstanding matrix wave, or the one that claimed the plan.
// A run id or attempt that is not a number (a forged record's) counts as
// unknown: both reach replies on the thread, where Markdown of a forger's
// (a mention, a link) has no place.
func holder(rec *Record) Owner {
	o := Owner{}
	switch m := rec.Matrix; {
	case m != nil && !m.Collected && m.RunID != "":
		o.RunID = m.RunID
		if rec.Owner != nil && rec.Owner.RunID == m.RunID {
			o.RunAttempt = rec.Owner.RunAttempt
		}
	case rec.Owner != nil:
		o = *rec.Owner
	}
	return Owner{RunID: number(o.RunID), RunAttempt: number(o.RunAttempt)}
}

// number is s when it is a decimal number of at most 20 digits, else "".
func number(s string) string {
	if len(s) == 0 || len(s) > 20 || strings.Trim(s, "0123456789") != "" {
		return ""
	}
	return s
}

// ownerGone decides whether a running plan's owner is gone. run is the
// owner's workflow run as the Actions API reports it (nil when unknown:
// no run recorded, or the API could not be asked). It returns why, for
// the people on the thread, or "" with false when the owner may be alive.
func ownerGone(rec *Record, self Owner, run *gh.WorkflowRun, now time.Time, staleAfter time.Duration) (bool, string) {
	o := holder(rec)
	if o.RunID != "" && o.RunID == self.RunID {
		if o.RunAttempt != self.RunAttempt {
			return true, fmt.Sprintf("attempt %s of this workflow run ended before the plan finished", orUnknown(o.RunAttempt))
		}
		return false, ""
	}
	if run != nil {
		if run.Status == "completed" {
			why := fmt.Sprintf("its workflow run %s ended", o.RunID)
			if run.Conclusion != "" {
				why += " (" + run.Conclusion + ")"
			}
			return true, why + " before the plan finished"
		}
		if a, err := strconv.Atoi(o.RunAttempt); err == nil && run.Attempt > a {
			return true, fmt.Sprintf("its workflow run %s was re-run (attempt %d) after attempt %d stopped", o.RunID, run.Attempt, a)
		}
		// GitHub says the run still goes on. Its heartbeat would not tell
		// more: a matrix wave's task jobs do not beat, and a hung job's
		// heartbeat goes on; the run's own timeout ends it.
		return false, ""
	}
	beat := rec.Heartbeat
	if beat.IsZero() {
		beat = rec.Updated
	}
	if !beat.IsZero() && now.Sub(beat) > staleAfter {
		return true, fmt.Sprintf("it has given no sign of life since %s (more than %s)", beat.UTC().Format("2006-01-02 15:04 UTC"), staleAfter)
	}
	return false, ""
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// checkOwner asks GitHub about a running plan's owner and says whether it
// is gone, and why (see ownerGone). When the Actions API cannot be asked
// (the token lacks `actions: read`), the heartbeat alone decides.
func (r *engines) checkOwner(ctx context.Context, rec *Record) (bool, string) {
	o := holder(rec)
	var run *gh.WorkflowRun
	if id, err := strconv.ParseInt(o.RunID, 10, 64); err == nil && o.RunID != r.Cfg.RunID {
		got, err := r.GH.Workflows.GetWorkflowRun(ctx, r.Cfg.Owner, r.Cfg.Repo, id)
		if err != nil {
			r.Log.Warn("reading the owner's workflow run; going by the heartbeat alone", "run", id, "err", err)
		} else {
			run = &got
		}
	}
	return ownerGone(rec, Owner{RunID: r.Cfg.RunID, RunAttempt: r.Cfg.RunAttempt}, run, r.Now(), r.Cfg.StaleAfter)
}

// ownerText names a running plan's owner for a reply.
func (r *engines) ownerText(rec *Record) string {
	o := holder(rec)
	if o.RunID == "" {
		return "another run"
	}
	base := r.Cfg.ServerURL
	if base == "" {
		base = "https://github.com"
	}
	return fmt.Sprintf("[workflow run %s](%s/%s/%s/actions/runs/%s)", o.RunID, base, r.Cfg.Owner, r.Cfg.Repo, o.RunID)
}

// heartbeat saves rec every Config.HeartbeatInterval while a run works,
// under r.runMu (which the progress callback holds too). When the save
// finds the state moved by another run, the run is cancelled with
// errTakenOver. stop ends it and waits for it.
func (r *engines) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, rec *Record) (stop func()) {
	return r.everyBeat(ctx, func() bool {
		r.runMu.Lock()
		err := r.store.saveRecord(ctx, rec)
		// A task may work for an hour: its approver's access is read
		// while it does, not only when it lands.
		lapsed := r.recheckApprover(ctx, rec)
		r.runMu.Unlock()
		if errors.Is(err, errStateMoved) {
			cancel(errTakenOver)
			return false
		}
		if lapsed != nil {
			cancel(lapsed)
			return false
		}
		if err != nil {
			// Logged; the next beat tries again. A plan whose beats
			// all fail looks silent, and retry then says so on its
			// thread before it takes the plan over.
			r.Log.Warn("saving the heartbeat", "err", err)
		}
		return true
	})
}
