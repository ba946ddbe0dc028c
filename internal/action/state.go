package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/safefile"
	"github.com/planexhq/planex/internal/session"
)

// Record is what the Action remembers about a thread's plan, beside the
// session files, in refs/planex/state/<thread>.
type Record struct {
	Thread        int    `json:"thread"`
	Issue         int    `json:"issue"` // the issue the pull request closes
	SessionID     string `json:"session_id"`
	Branch        string `json:"branch"`
	Base          string `json:"base"`
	BaseBranch    string `json:"base_branch"`
	PlanID        string `json:"plan_id"`
	PlanHash      string `json:"plan_hash"`
	PlanCommentID int64  `json:"plan_comment_id"`
	// PlanBodyHash is the sha256 of the exact plan comment planex posted:
	// an approval of a comment whose text changed since is refused (what
	// the approver read is not what was posted).
	PlanBodyHash    string   `json:"plan_body_sha256,omitempty"`
	StatusCommentID int64    `json:"status_comment_id,omitempty"`
	State           State    `json:"state"`
	Superseded      []string `json:"superseded,omitempty"`
	RequestedBy     string   `json:"requested_by,omitempty"`
	ApprovedBy      string   `json:"approved_by,omitempty"`
	PRNumber        int      `json:"pr_number,omitempty"`
	PRURL           string   `json:"pr_url,omitempty"`
	FollowUp        bool     `json:"follow_up,omitempty"`
	Note            string   `json:"note,omitempty"`
	// Self is the account planex's comments on the thread were posted
	// as, learned from GitHub's answers (identity in self.go); a
	// bot-login input or the job token outranks it.
	Self string `json:"self,omitempty"`

	// ApprovedVia is how the plan was approved (see approval.go), and
	// ApprovalCommentID the command that approved it, a comment of
	// ApprovalCommentKind (an event.CommentKind): /planex retry checks
	// them on GitHub again.
	ApprovedVia         ApprovalVia       `json:"approved_via,omitempty"`
	ApprovalCommentID   int64             `json:"approval_comment_id,omitempty"`
	ApprovalCommentKind event.CommentKind `json:"approval_comment_kind,omitempty"`

	// Owner is the workflow run that runs the plan while it is running,
	// and Heartbeat when it last showed it was alive (see owner.go).
	Owner     *Owner    `json:"owner,omitempty"`
	Heartbeat time.Time `json:"heartbeat,omitempty"`
	// RequestKey names the event that asked for the plan (its comment, or
	// the workflow run of a label, dispatch or schedule), so that the same
	// event, redelivered or re-run, never plans twice.
	RequestKey string `json:"request_key,omitempty"`

	// Matrix is the wave a matrix-mode run is working on.
	Matrix *MatrixWave `json:"matrix,omitempty"`
	// Answers link follow-up tasks to the review comments (and review
	// findings) they answer; planex replies there when a task is done.
	Answers []Answer  `json:"answers,omitempty"`
	Updated time.Time `json:"updated"`

	// CIFix is the CI failure this plan answers (see cifix.go).
	// CIFixRuns are the CI-fix plans of this thread that ran, oldest
	// first, carried from plan to plan for the ci-fix-attempts limit;
	// CIStopNoted is how many there were when planex said it stopped.
	CIFix       *CIFailure `json:"ci_fix,omitempty"`
	CIFixRuns   []string   `json:"ci_fix_runs,omitempty"`
	CIStopNoted int        `json:"ci_stop_noted,omitempty"`

	// remote is the state ref's commit (and its tree) when loaded, or
	// as last pushed: the lease for saving, and the parent of the next
	// state.
	remote gitrepo.Saved
	// attempted are the states this run pushed whose push failed (at
	// most maxAttempted, newest last): one may have reached the remote
	// all the same (git was stopped after the remote took it, a job's
	// cancel), and then leads the next save (adoptOwnPush).
	attempted []gitrepo.Saved
	// repo is where the session lives (a worktree for follow-ups).
	repo *gitrepo.Repo
	// fresh: the thread had no record before this one, so it has no plan
	// or status comment of planex's to look for. prOpened: this run
	// opened the pull request, which has no review yet.
	fresh, prOpened bool
}

// State is where a thread's plan stands in its record: a closed set.
// recordStatus maps it to the `status` output; a value planex does not
// know (a record someone else wrote) reads as failed there.
type State string

// Record states.
const (
	StatePlanned   State = "planned"   // posted, waiting for approval
	StateRunning   State = "running"   // approved and running (see Record.Owner)
	StateDone      State = "done"      // every task completed
	StateFailed    State = "failed"    // a task failed or was skipped, or the run stopped
	StateCancelled State = "cancelled" // cancelled before it ran
)

const recordFile = "github.json"

func stateRef(thread int) string { return "refs/planex/state/" + strconv.Itoa(thread) }

// fetchRecord fetches a thread's state and reads its record alone,
// refused when it is not that thread's (recordOfThread); found is false
// when the thread has no state.
func (r *stateStore) fetchRecord(ctx context.Context, thread int) (*Record, bool, error) {
	rec, _, found, err := r.fetchRecordListing(ctx, thread, false, refListing{})
	return rec, found, err
}

// fetchRecordListing is fetchRecord; with listAll it lists the state's
// whole tree once (gitrepo.ListState) and reads the record from that
// listing, for restoring the session folder from the same listing.
// listed is the remote's refs as the caller listed them (the zero
// refListing when it did not).
func (r *stateStore) fetchRecordListing(ctx context.Context, thread int, listAll bool, listed refListing) (*Record, *gitrepo.StateTree, bool, error) {
	ref := stateRef(thread)
	found, err := r.fetchListed(ctx, ref, listed)
	if err != nil {
		return nil, nil, false, fmt.Errorf("fetching planex state: %w", err)
	}
	if !found {
		return nil, nil, false, nil
	}
	// The lease for saving is the commit just fetched, the state read
	// below: asking the remote again could name a newer state another job
	// pushed meanwhile, which this one never read (nor has).
	remote, err := gitrepo.StateAt(r.Repo, ref).Read(ctx)
	if err != nil {
		return nil, nil, false, fmt.Errorf("reading the fetched state: %w", err)
	}
	var tree *gitrepo.StateTree
	var b []byte
	if listAll {
		if tree, err = gitrepo.ListState(ctx, r.Repo, remote.Commit); err != nil {
			return nil, nil, false, err
		}
		b, err = r.readListedRecord(ctx, ref, tree)
	} else {
		b, err = r.readRecordFile(ctx, ref, remote.Commit)
	}
	if err != nil {
		return nil, nil, false, err
	}
	rec := &Record{}
	if err := json.Unmarshal(b, rec); err != nil {
		return nil, nil, false, fmt.Errorf("state %s: %s: %w", ref, recordFile, err)
	}
	isID := func(s string) bool { return gitrepo.IsObjectID(r.Repo, s) }
	if err := recordOfThread(rec, thread, isID); err != nil {
		return nil, nil, false, fmt.Errorf("state %s: %w", ref, err)
	}
	rec.remote = remote
	return rec, tree, true, nil
}

// fetchListed fetches ref from the remote: the commit listed names for
// it when the caller's listing asked for ref (absent there means the
// remote has none), else after a listing of its own. It reports whether
// the remote has ref.
func (r *stateStore) fetchListed(ctx context.Context, ref string, listed refListing) (bool, error) {
	sha, asked := listed.tip(ref)
	if !asked {
		return r.Repo.FetchRef(ctx, r.Cfg.Remote, ref)
	}
	sha, err := gitrepo.FetchListed(ctx, r.Repo, r.Cfg.Remote, ref, sha)
	return sha != "", err
}

// loadRecord fetches a thread's state and restores its session folder.
// The state's tree is listed once, for the record and the restore.
func (r *stateStore) loadRecord(ctx context.Context, thread int) (*Record, bool, error) {
	return r.loadListedRecord(ctx, thread, refListing{})
}

// loadListedRecord is loadRecord reading the state ref's commit from
// listed, the remote's refs as the caller listed them (the zero
// refListing: loadRecord lists it itself). The run branch is taken from
// listed too when listed asked for it.
func (r *stateStore) loadListedRecord(ctx context.Context, thread int, listed refListing) (*Record, bool, error) {
	// The record says where the session folder goes (a follow-up's is in
	// its own worktree): read it first, then restore the folder.
	rec, tree, found, err := r.fetchRecordListing(ctx, thread, true, listed)
	if err != nil || !found {
		return nil, false, err
	}
	ref := stateRef(thread)
	rec.repo = r.Repo
	r.self.fromRecord(rec)
	if rec.FollowUp {
		if rec.repo, err = r.followUpRepo(ctx, rec.SessionID, rec.Base); err != nil {
			return nil, false, err
		}
	}
	store := session.StoreFor(rec.repo.Root, rec.repo.CommonDir)
	dir, err := store.Folder(rec.SessionID)
	if err != nil {
		return nil, false, fmt.Errorf("state %s: %w", ref, err)
	}
	if err := tree.Restore(ctx, rec.repo, dir); err != nil {
		return nil, false, err
	}
	// planex posts the review it finds in the session as its own: only
	// one this job's reviewer writes, never the state's, which whoever
	// can push may have written (a run without reviews posted it).
	if err := os.Remove(filepath.Join(dir, session.ReviewFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("state %s: dropping its %s: %w", ref, session.ReviewFile, err)
	}
	// The state ref is the bot's own record; what it approves is checked
	// against GitHub again before anything runs (checkApproval), so the
	// session it holds is sealed as this runner's.
	if err := session.Adopt(store, rec.SessionID); err != nil {
		return nil, false, fmt.Errorf("state %s: %w", ref, err)
	}
	// The run branch holds the commits; a fresh runner needs it to resume.
	if _, err := r.fetchListed(ctx, "refs/heads/"+rec.Branch, listed); err != nil {
		return nil, false, err
	}
	return rec, true, nil
}

// recordOfThread refuses a record that names another thread than the one
// it was read for, or another issue than its thread (a plan on an issue)
// or its run branch (a follow-up, planex/<issue>-…): the pull request
// says "Closes #<issue>", and a forged state ref named an issue nobody
// asked planex about, which merging the pull request closed. Its plan id
// and pull request address must be of the forms planex writes.
func recordOfThread(rec *Record, thread int, isID func(string) bool) error {
	issue := thread
	if rec.FollowUp {
		m := runBranchRe.FindStringSubmatch(rec.Branch)
		if m == nil {
			return fmt.Errorf("%s: the follow-up's branch %q is no planex run branch", recordFile, rec.Branch)
		}
		issue, _ = strconv.Atoi(m[1])
	}
	if rec.Thread != thread || rec.Issue != issue {
		return fmt.Errorf("%s names thread #%d and issue #%d, not #%d and #%d", recordFile, rec.Thread, rec.Issue, thread, issue)
	}
	// A plan on an issue runs on planex/<session> alone: the branch a
	// record names is fetched into the job's checkout under that name
	// before the approval is judged.
	if !rec.FollowUp && rec.Branch != "" && rec.Branch != "planex/"+rec.SessionID {
		return fmt.Errorf("%s: the plan's run branch %q is not planex's branch for its session", recordFile, abbrev.Truncate(rec.Branch, 80))
	}
	// planex answers findings, and labels, on the pull request the record
	// names: a follow-up's is its own thread, and a plan on an issue
	// answers no findings (its pull request is looked up by its branch).
	if rec.FollowUp && rec.PRNumber != 0 && rec.PRNumber != thread {
		return fmt.Errorf("%s: a follow-up on #%d names pull request #%d", recordFile, thread, rec.PRNumber)
	}
	if !rec.FollowUp && len(rec.Answers) > 0 {
		return fmt.Errorf("%s: a plan on an issue lists review findings it answers", recordFile)
	}
	// What planex shows and hands the workflow as outputs (plan-id,
	// pull-request-url) is of the form planex writes, nothing else.
	return recordForms(rec, isID)
}

// recordForms refuses a record whose values planex shows (in replies, the
// status comment, the pull request, step outputs) are not of the forms
// planex writes: whoever can push may have written them. isID says
// whether a string is a full object id of the repository's format.
func recordForms(rec *Record, isID func(string) bool) error {
	// The session id is the session-id output too, and names a folder:
	// a line break in it would set outputs of the writer's.
	if !sessionIDForm.MatchString(rec.SessionID) {
		return fmt.Errorf("%s: the session id %q is not one planex makes", recordFile, abbrev.Truncate(rec.SessionID, 60))
	}
	// The approver is named, "@" and all, in replies and the status.
	if rec.ApprovedBy != "" && !loginForm.MatchString(rec.ApprovedBy) {
		return fmt.Errorf("%s: the approver %q is no GitHub login", recordFile, abbrev.Truncate(rec.ApprovedBy, 60))
	}
	if rec.PlanID != "" && !planIDForm.MatchString(rec.PlanID) {
		return fmt.Errorf("%s: the plan id %q is not one planex makes", recordFile, abbrev.Truncate(rec.PlanID, 40))
	}
	// The base and a wave's base are handed to git: one of the forger's
	// ("--output=<file>") was an option to git diff-tree, which wrote the
	// file it named, and a short id names whichever object has it.
	if rec.Base != "" && !isID(rec.Base) {
		return fmt.Errorf("%s: the base %q is not a commit id", recordFile, abbrev.Truncate(rec.Base, 80))
	}
	if m := rec.Matrix; m != nil && !isID(m.Base) {
		return fmt.Errorf("%s: the wave's base %q is not a commit id", recordFile, abbrev.Truncate(m.Base, 80))
	}
	switch rec.State {
	case StatePlanned, StateRunning, StateDone, StateFailed, StateCancelled:
	default:
		return fmt.Errorf("%s: the state %q is not one planex writes", recordFile, abbrev.Truncate(string(rec.State), 40))
	}
	if rec.PRURL != "" && !render.PlainURL(rec.PRURL) {
		return fmt.Errorf("%s: the pull request's address %q is not a plain web address", recordFile, abbrev.Truncate(rec.PRURL, 80))
	}
	// A CI fix's runs and jobs are linked in the pull request's body and
	// the plan comment, their addresses as written.
	return rec.CIFix.plainURLs()
}

// sessionIDForm is the form of the session ids planex makes (an issue's
// number and a slug of its title, a follow-up's "-f<n>"), with room for
// the dots and capitals of an id a person gave.
var sessionIDForm = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$`)

// loginForm is the form of a GitHub login (an App's with "[bot]"), and of
// "auto-approve", the approver of a plan the setting approved.
var loginForm = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$`)

// planIDForm is the form of a plan id (plan.ID): ten hex digits.
var planIDForm = regexp.MustCompile(`^[0-9a-f]{10}$`)

// maxRecordBytes bounds the github.json planex reads from a state ref
// (whoever can push may have written it); planex's own are a few KiB.
const maxRecordBytes = 1 << 20

// readRecordFile reads github.json from the state commit when it is a
// regular file of at most maxRecordBytes, never holding a larger one.
func (r *stateStore) readRecordFile(ctx context.Context, ref, commit string) ([]byte, error) {
	files, err := r.Repo.FilesAt(ctx, commit, []string{recordFile})
	if err != nil {
		return nil, fmt.Errorf("reading state %s: %w", ref, err)
	}
	f, ok := files[recordFile]
	switch {
	case !ok:
		return nil, fmt.Errorf("state %s has no %s", ref, recordFile)
	case f.Type != "blob" || (f.Mode != "100644" && f.Mode != "100755"):
		return nil, fmt.Errorf("state %s: %s is not a regular file", ref, recordFile)
	case f.Size > maxRecordBytes:
		return nil, fmt.Errorf("state %s: %s holds %d bytes, more than %d", ref, recordFile, f.Size, maxRecordBytes)
	}
	return r.Repo.ReadBlob(ctx, f.Object)
}

// readListedRecord is readRecordFile from a listing of the state's whole
// tree: a record that is no regular file is not among its files, and a
// tree refused before the record was listed gives the refusal.
func (r *stateStore) readListedRecord(ctx context.Context, ref string, tree *gitrepo.StateTree) ([]byte, error) {
	f, ok := tree.Files[recordFile]
	switch {
	case !ok && tree.Refusal() != nil:
		return nil, tree.Refusal()
	case !ok:
		return nil, fmt.Errorf("state %s has no %s (as a regular file)", ref, recordFile)
	case f.Size > maxRecordBytes:
		return nil, fmt.Errorf("state %s: %s holds %d bytes, more than %d", ref, recordFile, f.Size, maxRecordBytes)
	}
	return r.Repo.ReadBlob(ctx, f.Object)
}

// saveRecord writes the record into the session folder, commits the folder
// to the thread's state ref and pushes it with a lease, so two jobs can
// never both believe they own the plan.
func (r *stateStore) saveRecord(ctx context.Context, rec *Record) error {
	saved, err := r.commitRecord(ctx, rec)
	if err != nil {
		return err
	}
	return r.pushRecord(ctx, rec, saved)
}

// commitRecord writes the record into the session folder and commits the
// folder to the thread's state ref, on top of the remote value so history
// stays linear (the local ref is only where it is committed from). An
// unchanged folder gives rec.remote back.
func (r *stateStore) commitRecord(ctx context.Context, rec *Record) (gitrepo.Saved, error) {
	rec.Updated = r.Now().UTC()
	if self := r.self.login(); self != "" {
		rec.Self = self
	}
	if rec.State == StateRunning {
		rec.Heartbeat = rec.Updated
	}
	dir, err := session.StoreFor(rec.repo.Root, rec.repo.CommonDir).Folder(rec.SessionID)
	if err != nil {
		return gitrepo.Saved{}, fmt.Errorf("saving planex state: %w", err)
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return gitrepo.Saved{}, fmt.Errorf("encoding %s: %w", recordFile, err)
	}
	if err := safefile.Write(filepath.Join(dir, recordFile), append(b, '\n'), 0o644); err != nil {
		return gitrepo.Saved{}, err
	}
	return gitrepo.StateAt(r.Repo, stateRef(rec.Thread)).SaveOn(ctx, rec.remote, dir, fmt.Sprintf("planex: %s %s (%s)", rec.SessionID, rec.State, rec.PlanID))
}

// pushRecord pushes the committed state with a lease on the remote value.
// When the lease fails because the remote holds a state this run pushed
// before without hearing that it landed (adoptOwnPush), the record is
// committed again on that state and pushed once more.
func (r *stateStore) pushRecord(ctx context.Context, rec *Record, saved gitrepo.Saved) error {
	if saved.Commit == rec.remote.Commit {
		return nil
	}
	err := r.Repo.PushRef(ctx, r.Cfg.Remote, stateRef(rec.Thread), true, rec.remote.Commit)
	if err == nil {
		rec.remote = saved
		return nil
	}
	rec.noteAttempt(saved)
	if !r.adoptOwnPush(ctx, rec) {
		return fmt.Errorf("%w: %v", errStateMoved, err)
	}
	if saved.Commit == rec.remote.Commit {
		return nil
	}
	if saved, err = r.commitRecord(ctx, rec); err != nil {
		return err
	}
	if saved.Commit == rec.remote.Commit {
		return nil
	}
	if err := r.Repo.PushRef(ctx, r.Cfg.Remote, stateRef(rec.Thread), true, rec.remote.Commit); err != nil {
		rec.noteAttempt(saved)
		return fmt.Errorf("%w: %v", errStateMoved, err)
	}
	rec.remote = saved
	return nil
}

// maxAttempted bounds the failed pushes a record remembers.
const maxAttempted = 8

// noteAttempt remembers a state whose push failed (see Record.attempted).
func (rec *Record) noteAttempt(saved gitrepo.Saved) {
	if saved.Commit == "" {
		return
	}
	if len(rec.attempted) == maxAttempted {
		rec.attempted = rec.attempted[1:]
	}
	rec.attempted = append(rec.attempted, saved)
}

// adoptOwnPush reports whether the remote's state ref is a state this
// run pushed itself whose push it took for failed (rec.attempted): a git
// stopped by a job's cancel after the remote took its push, or a push
// whose answer was lost. That state becomes rec.remote, the lease and
// the parent of the next save. A state another run wrote is never
// adopted: only a commit this run made has one of these names.
func (r *stateStore) adoptOwnPush(ctx context.Context, rec *Record) bool {
	if len(rec.attempted) == 0 {
		return false
	}
	tip, err := r.Repo.RemoteRef(ctx, r.Cfg.Remote, stateRef(rec.Thread))
	if err != nil || tip == "" {
		return false
	}
	for i, a := range rec.attempted {
		if a.Commit == tip {
			rec.remote = a
			rec.attempted = rec.attempted[i+1:]
			return true
		}
	}
	return false
}

// saveWithBranch is saveRecord and then, unless the state moved, pushBranch:
// what a run publishes after each task. When both go to the remote by git
// they go in one atomic push, the state with its lease and the branch
// fast-forward; if that push is refused, each is pushed on its own as
// before, so which failed, and why, is told as before.
func (r *stateStore) saveWithBranch(ctx context.Context, rec *Record) (stateErr, branchErr error) {
	saved, err := r.commitRecord(ctx, rec)
	if err == nil && !r.apiCommits() && saved.Commit != rec.remote.Commit {
		err = r.Repo.PushRefs(ctx, r.Cfg.Remote, []gitrepo.RefPush{
			{Ref: stateRef(rec.Thread), Lease: true, Expected: rec.remote.Commit},
			{Ref: "refs/heads/" + rec.Branch},
		})
		if err == nil {
			rec.remote = saved
			return nil, nil
		}
		rec.noteAttempt(saved)
		err = r.pushRecord(ctx, rec, saved)
	} else if err == nil {
		err = r.pushRecord(ctx, rec, saved)
	}
	if errors.Is(err, errStateMoved) {
		return err, nil
	}
	return err, r.pushBranch(ctx, rec)
}

// errStateMoved means another job changed the thread's state first.
var errStateMoved = errors.New("another planex run changed this plan's state first")

// pushBranch pushes the run branch (fast-forward only). When GitHub makes
// the commits (commit-signing: api) nothing is pushed: the branch on
// GitHub must already be the local one.
func (r *stateStore) pushBranch(ctx context.Context, rec *Record) error {
	if r.apiCommits() {
		return r.checkBranchOnGitHub(ctx, rec)
	}
	return r.Repo.PushRef(ctx, r.Cfg.Remote, "refs/heads/"+rec.Branch, false, "")
}

// followUpRepo prepares a worktree at base for a follow-up session, so
// exploration sees the pull request's code rather than the default branch.
func (r *stateStore) followUpRepo(ctx context.Context, sessionID, base string) (*gitrepo.Repo, error) {
	if err := r.Repo.EnsureCommit(ctx, r.Cfg.Remote, base); err != nil {
		return nil, err
	}
	dir := r.Repo.WorktreeDir("followup", sessionID)
	if err := r.Repo.AddWorktree(ctx, dir, base); err != nil {
		return nil, err
	}
	wt, err := gitrepo.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	wt.TempDir = r.Repo.TempDir
	return wt, nil
}

// plainURLs refuses run and job addresses that are not plain web
// addresses (render.PlainURL); a nil f has none.
func (f *CIFailure) plainURLs() error {
	if f == nil {
		return nil
	}
	for _, run := range f.Runs {
		urls := []string{run.URL}
		for _, j := range run.Jobs {
			urls = append(urls, j.URL)
		}
		for _, u := range urls {
			if u != "" && !render.PlainURL(u) {
				return fmt.Errorf("%s: the CI run's address %q is not a plain web address", recordFile, abbrev.Truncate(u, 80))
			}
		}
	}
	return nil
}
