package action

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/session"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestHeartbeatKeepsTheStateFreshAndStopsOnTakeover runs the heartbeat
// of a running plan against a real origin: it saves the state again and
// again, and when another run moves the state ref it cancels its run with
// errTakenOver.
func TestHeartbeatKeepsTheStateFreshAndStopsOnTakeover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	origin, repo := sessionClone(t)
	r := &Runner{Cfg: Config{RunID: "42", RunAttempt: "1", HeartbeatInterval: 20 * time.Millisecond}, Repo: repo,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	f := r.flows()
	rec := &Record{Thread: 1, SessionID: "s1", State: StateRunning, repo: repo}
	f.runs.claim(rec)
	if err := f.store.saveRecord(ctx, rec); err != nil {
		t.Fatal(err)
	}
	stateAt := func() string { return git(t, origin, "rev-parse", stateRef(1)) }
	first := stateAt()

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := f.engines.heartbeat(runCtx, cancel, rec)
	defer stop()
	for deadline := time.Now().Add(30 * time.Second); stateAt() == first; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the heartbeat never saved the state")
		}
	}
	if runCtx.Err() != nil {
		t.Fatalf("the run was cancelled while it owned the plan: %v", context.Cause(runCtx))
	}
	// Another run takes the plan over: the state ref moves under it.
	other := filepath.Join(t.TempDir(), "other")
	git(t, t.TempDir(), "clone", "-q", origin, other)
	// The heartbeat keeps pushing meanwhile, so the takeover's push may lose
	// a race for the ref's lock now and then: try again, as a real run would.
	var taken string
	for attempt := 0; ; attempt++ {
		git(t, other, "fetch", "-q", "origin", "+"+stateRef(1)+":"+stateRef(1))
		tree := git(t, other, "rev-parse", stateRef(1)+"^{tree}")
		taken = git(t, other, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit-tree", tree, "-p", stateRef(1), "-m", "taken over by run 43")
		push := exec.Command("git", "push", "-q", "--force", "origin", taken+":"+stateRef(1))
		push.Dir = other
		out, err := push.CombinedOutput()
		if err == nil {
			break
		}
		if attempt == 50 {
			t.Fatalf("the takeover could not push: %v\n%s", err, out)
		}
	}
	select {
	case <-runCtx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the heartbeat did not notice the takeover")
	}
	if cause := context.Cause(runCtx); !errors.Is(cause, errTakenOver) {
		t.Errorf("cause = %v", cause)
	}
	if got := stateAt(); got != taken {
		t.Errorf("the heartbeat overwrote the new owner's state: %s, want %s", got, taken)
	}
}

// sessionClone makes an origin with one commit and a clone of it holding
// session s1's folder, as a job's checkout has: the origin's path and the
// clone.
func sessionClone(t *testing.T) (string, *gitrepo.Repo) {
	t.Helper()
	src := t.TempDir()
	git(t, src, "init", "-q", "-b", "main")
	git(t, src, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "initial")
	origin := filepath.Join(t.TempDir(), "origin.git")
	git(t, src, "clone", "-q", "--bare", src, origin)
	ws := filepath.Join(t.TempDir(), "ws")
	git(t, src, "clone", "-q", origin, ws)
	repo, err := gitrepo.Open(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo.CommonDir, session.SessionDir, "s1"), 0o700); err != nil {
		t.Fatal(err)
	}
	return origin, repo
}

// TestStateSaveAfterItsOwnInterruptedPush: a job cancelled while it
// pushed its state (SIGTERM, as GitHub cancels a job) stops git after the
// remote took the push but before git said so. The failure it then
// records was committed on the state before that push and refused as
// "another planex run changed this plan's state first", so the plan's
// state kept saying running though the thread was told it failed, and a
// retry refused to take it over while its heartbeat looked fresh. The
// remote's state is now recognised as the run's own and the failure is
// saved on top of it.
func TestStateSaveAfterItsOwnInterruptedPush(t *testing.T) {
	t.Parallel()
	origin, repo := sessionClone(t)
	r := &Runner{Cfg: Config{RunID: "42", RunAttempt: "1"}, Repo: repo, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	f := r.flows()
	rec := &Record{Thread: 1, SessionID: "s1", State: StateRunning, repo: repo}
	f.runs.claim(rec)
	if err := f.store.saveRecord(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	stateAt := func() string { return git(t, origin, "rev-parse", stateRef(1)) }
	first := stateAt()
	// The remote takes the next push, then keeps git waiting: its
	// post-receive hook runs after the ref moved.
	marker := filepath.Join(t.TempDir(), "received")
	hook := filepath.Join(origin, "hooks", "post-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch '"+marker+"'\nsleep 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(marker); err == nil {
				break
			}
		}
		cancel()
	}()
	rec.Note = "T1 committed"
	if err := f.store.saveRecord(ctx, rec); err == nil {
		t.Fatal("the push was not interrupted: the test shows nothing")
	}
	if stateAt() == first {
		t.Fatal("the interrupted push did not reach the remote: the test shows nothing")
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	rec.State = StateFailed
	if err := f.store.saveRecord(context.Background(), rec); err != nil {
		t.Fatalf("saving the failure after the run's own interrupted push: %v", err)
	}
	if got := git(t, origin, "show", stateRef(1)+":"+recordFile); !strings.Contains(got, `"state": "failed"`) {
		t.Errorf("the remote's record after the failure was saved:\n%s", got)
	}
	// A state another run wrote is still refused.
	other := filepath.Join(t.TempDir(), "other")
	git(t, t.TempDir(), "clone", "-q", origin, other)
	git(t, other, "fetch", "-q", "origin", "+"+stateRef(1)+":"+stateRef(1))
	taken := git(t, other, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit-tree", stateRef(1)+"^{tree}", "-p", stateRef(1), "-m", "taken over by run 43")
	git(t, other, "push", "-q", "--force", "origin", taken+":"+stateRef(1))
	rec.Note = "later"
	if err := f.store.saveRecord(context.Background(), rec); !errors.Is(err, errStateMoved) {
		t.Errorf("saving over another run's state: %v, want errStateMoved", err)
	}
}

// TestRedTeamStateReplayOfOwnOlderPush: a run adopts, as its own, only a
// state it pushed and took for failed (adoptOwnPush). Whoever can push
// sets the thread's state ref back to an older state the run pushed and
// heard land (its claim, say, from before a cancel another run saved):
// the run's next save must not take that for its own and write over
// what came after; it finds the state moved.
func TestRedTeamStateReplayOfOwnOlderPush(t *testing.T) {
	t.Parallel()
	origin, repo := sessionClone(t)
	r := &Runner{Cfg: Config{RunID: "42", RunAttempt: "1"}, Repo: repo, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	f := r.flows()
	rec := &Record{Thread: 1, SessionID: "s1", State: StateRunning, repo: repo}
	f.runs.claim(rec)
	ctx := context.Background()
	if err := f.store.saveRecord(ctx, rec); err != nil {
		t.Fatal(err)
	}
	claimed := git(t, origin, "rev-parse", stateRef(1))
	rec.Note = "T1 committed"
	if err := f.store.saveRecord(ctx, rec); err != nil {
		t.Fatal(err)
	}
	git(t, origin, "update-ref", stateRef(1), claimed)
	rec.Note = "T2 committed"
	if err := f.store.saveRecord(ctx, rec); !errors.Is(err, errStateMoved) {
		t.Errorf("saving over a replayed older state of the run's own: %v, want errStateMoved", err)
	}
	if got := git(t, origin, "rev-parse", stateRef(1)); got != claimed {
		t.Errorf("the state ref moved to %s; the replayed %s should stand", got, claimed)
	}
}
