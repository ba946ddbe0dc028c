package review

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/guidance"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/prompt"
	"github.com/planexhq/planex/internal/session"
)

// DefaultMaxDiffBytes caps the diff text put in one review prompt.
const DefaultMaxDiffBytes = 120_000

// Reviewer reviews a run's completed tasks with an agent, one task (one
// commit) per step, and writes review.json into the session. A step's
// file tools are read-only, but its commands may write the worktree (a
// build, the tests), which is reset to the run's head before the next
// task's step. It satisfies the engine's Reviewer hook.
type Reviewer struct {
	Agent agent.Agent
	Repo  *gitrepo.Repo
	// Timeout bounds one task's review step; zero leaves it to the agent.
	Timeout      time.Duration
	MaxDiffBytes int
	Out          io.Writer
	Log          *slog.Logger
	Now          func() time.Time
}

func (r *Reviewer) defaults() {
	if r.Out == nil {
		r.Out = io.Discard
	}
	if r.Log == nil {
		r.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.MaxDiffBytes <= 0 {
		r.MaxDiffBytes = DefaultMaxDiffBytes
	}
}

// Review reviews every completed task of s. A task whose review fails is
// recorded as not reviewed; the error returned says that no task could be
// reviewed at all (or that review.json could not be written). limit, when
// not nil, says what the session's budget leaves a review step as it
// starts (after the reviews before it were recorded in s), which the
// step's agent holds its model calls to (agent.Step.Limit).
func (r *Reviewer) Review(ctx context.Context, s *session.Session, tasks []plan.Task, limit func() agent.Limit) error {
	r.defaults()
	if r.Agent == nil || r.Repo == nil {
		return errors.New("the reviewer has no agent or repository")
	}
	path := s.File(session.ReviewFile)
	res := &Result{Kind: KindRun, Status: StatusRunning, Session: s.Meta.ID, Started: r.Now().UTC(), Tasks: []TaskReview{}}
	// Replace any earlier review at once, so a crash never leaves a stale one.
	if err := Save(path, res); err != nil {
		return err
	}
	ps, err := prompt.Load()
	if err != nil {
		return err
	}
	todo := committedTasks(tasks)
	if len(todo) == 0 {
		fmt.Fprintln(r.Out, "review: no completed task to review")
		res.Status, res.Finished = StatusCompleted, r.Now().UTC()
		res.Conclude()
		return Save(path, res)
	}
	head, err := r.runHead(ctx, s.Meta.Branch)
	if err != nil {
		return err
	}
	res.Head = head
	// The agent reads the branch as the run left it, in a worktree of its
	// own; the user's checkout stays untouched.
	dir := r.Repo.WorktreeDir(s.Meta.ID, "review")
	if err := r.Repo.AddWorktree(ctx, dir, head); err != nil {
		return fmt.Errorf("review: %w", err)
	}
	defer func() {
		if err := r.Repo.RemoveWorktree(context.WithoutCancel(ctx), dir); err != nil {
			r.Log.Warn("removing the review worktree", "err", err)
		}
	}()
	// The repository's guidance as the run started from it: a task that
	// rewrote AGENTS.md does not get to brief its own reviewer.
	docs, err := guidance.Load(ctx, r.Repo, s.Meta.Base)
	if err != nil {
		r.Log.Warn("reading the repository's guidance for agents", "err", err)
	}
	common := prompt.Common{Requirement: s.Meta.Requirement, Guidance: guidance.Text(docs)}
	failed := 0
	for i, t := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		if i > 0 {
			if err := r.resetWorktree(ctx, dir, head); err != nil {
				return err
			}
		}
		fmt.Fprintf(r.Out, "review %s: started\n", t.ID)
		tr := r.reviewTask(ctx, ps, common, s, t, dir, stepLimit(limit))
		if tr.Error != "" {
			failed++
			fmt.Fprintf(r.Out, "review %s: not reviewed: %s\n", t.ID, tr.Error)
		} else {
			fmt.Fprintf(r.Out, "review %s: %s, %s\n", t.ID, tr.Verdict, plural.Count(len(tr.Findings), "finding", "findings"))
		}
		s.AddUsage("review "+t.ID, tr.Usage)
		res.Tasks = append(res.Tasks, tr)
		if err := Save(path, res); err != nil {
			return err
		}
	}
	if err := s.SaveMeta(); err != nil {
		return err
	}
	res.Conclude()
	res.Status, res.Finished = StatusCompleted, r.Now().UTC()
	if err := Save(path, res); err != nil {
		return err
	}
	fmt.Fprintf(r.Out, "review: %s (%s)\n", res.Verdict, plural.Count(len(res.Findings()), "finding", "findings"))
	if failed == len(todo) {
		return fmt.Errorf("no task could be reviewed (first error: %s)", res.Tasks[0].Error)
	}
	return nil
}

// committedTasks are the tasks a review reads: completed, with a commit.
func committedTasks(tasks []plan.Task) []plan.Task {
	var out []plan.Task
	for _, t := range tasks {
		if t.Status == plan.StatusCompleted && t.Commit != "" {
			out = append(out, t)
		}
	}
	return out
}

// resetWorktree puts the review worktree back at head before the next
// task's review. A review step may write its worktree (it may build and
// run the tests), so what one task's reviewer left there (a file telling
// the next reviewer to approve, a rewritten source file, a CLAUDE.md)
// would otherwise be what the next task's reviewer reads. A worktree
// that cannot be reset is made anew.
func (r *Reviewer) resetWorktree(ctx context.Context, dir, head string) error {
	err := r.Repo.ResetWorktree(ctx, dir, head)
	if err == nil {
		return nil
	}
	r.Log.Warn("replacing the review worktree", "err", err)
	if err := r.Repo.RemoveWorktree(ctx, dir); err != nil {
		return fmt.Errorf("review: replacing the worktree: %w", err)
	}
	if err := r.Repo.AddWorktree(ctx, dir, head); err != nil {
		return fmt.Errorf("review: replacing the worktree: %w", err)
	}
	return nil
}

// runHead is the commit the run branch is at; a branch that is not there
// is an error naming it, not an empty commit for git to refuse later.
func (r *Reviewer) runHead(ctx context.Context, branch string) (string, error) {
	head, err := r.Repo.ResolveBranch(ctx, branch)
	if err != nil {
		return "", fmt.Errorf("review: reading %s: %w", branch, err)
	}
	if head == "" {
		return "", fmt.Errorf("review: the run branch %s does not exist", branch)
	}
	return head, nil
}

// stepLimit is what limit says the budget leaves a step starting now;
// none when limit is nil.
func stepLimit(limit func() agent.Limit) agent.Limit {
	if limit == nil {
		return agent.Limit{}
	}
	return limit()
}

func (r *Reviewer) reviewTask(ctx context.Context, ps *prompt.Set, common prompt.Common, s *session.Session, t plan.Task, dir string, limit agent.Limit) TaskReview {
	tr := TaskReview{Task: t.ID, Title: t.Title, Commit: t.Commit}
	diff, err := r.Repo.ShowCommit(ctx, t.Commit)
	if err != nil {
		tr.Error = abbrev.OneLine(fmt.Sprintf("reading commit %s: %v", abbrev.SHA(t.Commit), err))
		return tr
	}
	diff, cut := clip(diff, r.MaxDiffBytes)
	p, err := ps.Review(common, prompt.ReviewTask{Task: t, Approach: s.Meta.Approach, Summary: s.Meta.Summary, Diff: diff, Truncated: cut})
	if err != nil {
		tr.Error = abbrev.OneLine(err.Error())
		return tr
	}
	out, err := agent.RunStep(ctx, r.Agent, agent.Step{Phase: agent.PhaseReview, ID: t.ID, Prompt: p, Dir: dir, Timeout: r.Timeout, Limit: limit},
		s.File(session.DiscoveriesFile), r.Log)
	tr.Usage = out.Usage
	var ar AgentResult
	if err == nil {
		err = agent.Decode(agent.PhaseReview, out.Raw, &ar)
	}
	if err == nil && ar.ID != t.ID {
		err = fmt.Errorf("the review answers for %s, not %s", ar.ID, t.ID)
	}
	if err != nil {
		tr.Error = abbrev.Truncate(abbrev.OneLine(err.Error()), 500)
		return tr
	}
	got := ar.TaskReview(t.ID, t.Title, t.Commit)
	got.Usage = out.Usage
	return got
}

// PullRequest is what a pull request review reads: text from the API only.
type PullRequest struct {
	Number      int
	Title, Body string
	Head        string // head commit
	Diff        string
}

// ReviewPullRequest reviews a pull request from its diff alone. The agent
// runs read-only in an empty scratch folder that holds nothing but the
// diff and the description as text files: the pull request's code is never
// checked out, built or run.
func ReviewPullRequest(ctx context.Context, ag agent.Agent, pr PullRequest, timeout time.Duration, maxDiff int, now time.Time) (*Result, error) {
	if maxDiff <= 0 {
		maxDiff = DefaultMaxDiffBytes
	}
	ps, err := prompt.Load()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "planex-review-")
	if err != nil {
		return nil, fmt.Errorf("making the review's scratch folder: %w", err)
	}
	defer os.RemoveAll(dir)
	const diffFile, descFile = "pr.diff", "pr.md"
	if err := os.WriteFile(filepath.Join(dir, diffFile), []byte(pr.Diff), 0o444); err != nil {
		return nil, fmt.Errorf("writing the diff: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, descFile), []byte(pr.Title+"\n\n"+pr.Body), 0o444); err != nil {
		return nil, fmt.Errorf("writing the description: %w", err)
	}
	diff, cut := clip(pr.Diff, maxDiff)
	p, err := ps.PullRequestReview(prompt.ReviewPR{Number: pr.Number, Title: pr.Title, Body: pr.Body, Diff: diff, Truncated: cut, DiffFile: diffFile})
	if err != nil {
		return nil, err
	}
	res := &Result{Kind: KindPullRequest, PR: pr.Number, Title: pr.Title, Head: pr.Head, Started: now.UTC()}
	// The agent's step files live in a folder of their own, so the working
	// directory holds exactly the two text files; there is no session, so
	// no discovery board.
	out, err := agent.RunStep(ctx, ag, agent.Step{Phase: agent.PhaseReview, ID: "PR", Prompt: p, Dir: dir, Timeout: timeout}, "", nil)
	var ar AgentResult
	if err == nil {
		err = agent.Decode(agent.PhaseReview, out.Raw, &ar)
	}
	if err != nil {
		return nil, fmt.Errorf("reviewing #%d: %w", pr.Number, err)
	}
	tr := ar.TaskReview("PR", pr.Title, pr.Head)
	tr.Usage = out.Usage
	res.Tasks = []TaskReview{tr}
	res.Conclude()
	res.Status = StatusCompleted
	return res, nil
}

// clip cuts text to at most n bytes at a line boundary.
func clip(text string, n int) (string, bool) {
	if len(text) <= n {
		return text, false
	}
	cut := text[:n]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i+1]
	}
	return cut + "… (diff cut short)\n", true
}
