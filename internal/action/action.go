// Package action is planex as a GitHub Action: it turns an event (a
// comment command, a label, a dispatch, a schedule) into the engine's
// phases, keeps the session's state in git, and talks to the issue and
// the pull request. Every run rebuilds its state from the repository and
// the issue, so a redelivered or repeated event never runs a plan twice.
package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/authz"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/gfm"
	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/review"
	"github.com/planexhq/planex/internal/slash"
)

// intakeAPI is what finding the issue to plan needs: a dispatched
// requirement's issue, the issues a schedule plans.
type intakeAPI interface {
	GetIssue(ctx context.Context, owner, repo string, number int) (*github.Issue, error)
	CreateIssue(ctx context.Context, owner, repo, title, body string, labels ...string) (*github.Issue, error)
	ListIssuesByLabel(ctx context.Context, owner, repo, label, state string) ([]*github.Issue, error)
	RecentIssues(ctx context.Context, owner, repo string) ([]*github.Issue, error)
	LabelEvents(ctx context.Context, owner, repo string, number int, label string) ([]gh.LabelEvent, error)
}

// Config is the Action's configuration after inputs and settings.
type Config struct {
	Owner, Repo string
	ServerURL   string
	RunURL      string
	Remote      string // "origin"
	Trigger     string
	BaseBranch  string // "" = the repository's default branch
	// DefaultBranch is the repository's default branch as the event
	// names it; "" = ask GitHub.
	DefaultBranch string
	Draft         bool
	AutoApprove   bool
	Concurrency   int
	MaxCostUSD    float64
	MaxIssues     int    // schedule: issues planned per run
	AutoLabel     string // schedule: "planex:auto"
	Label         string // issues labeled with this are planned: "planex"
	// Review is review.ModeAgent (the agent reviews each run; the default,
	// also when empty) or review.ModeSkip.
	Review review.Mode
	// Mode is ModeSingle (every wave in one job) or ModeMatrix (one job
	// per task, see matrix.go).
	Mode Mode
	// MatrixWorkflow is the workflow file dispatched for each wave in
	// matrix mode (default planex-matrix.yml), on DispatchRef (a full ref,
	// refs/heads/… or refs/tags/…; a short name is taken as a branch;
	// default: the repository's default branch, as refs/heads/<name>).
	MatrixWorkflow string
	DispatchRef    string
	RunID          string // GITHUB_RUN_ID
	// DefaultToken: the token is the workflow's own GITHUB_TOKEN, whose
	// pushes and pull requests start no workflow; the pull request body
	// then says its CI will not run (docs/action.md).
	DefaultToken bool
	// BotLogin is the account the token acts as (the bot-login input,
	// "<app>[bot]" for a GitHub App): planex takes only that account's
	// comments, reviews and pull requests as its own. Empty: the Actions
	// bot with the job token, else learned from what planex posts.
	BotLogin string
	// TrustedBots are the bots (the trusted-bots input) that may start
	// planex if they have write access; no other bot may (authz.Policy).
	TrustedBots []string
	RunAttempt  string // GITHUB_RUN_ATTEMPT
	// HeartbeatInterval is how often a running plan's state is saved to
	// show its owner is alive (DefaultHeartbeatInterval when zero);
	// StaleAfter is how long an owner may be silent before its plan can
	// be taken over (DefaultStaleAfter when zero). See owner.go.
	HeartbeatInterval time.Duration
	StaleAfter        time.Duration
	// AccessRecheck is how long a run in one job goes on its approver's
	// access before it reads it again, after a task lands
	// (DefaultAccessRecheck when zero; see approvalLapsed).
	AccessRecheck time.Duration
	// CommitSigning is apicommit.ModeGit (task commits pushed with git)
	// or apicommit.ModeAPI: GitHub makes them through its API (the
	// engine's Publisher, set by the caller) and the run branch is never
	// pushed.
	CommitSigning string
	// CIFix is what a failed CI run on planex's pull request does:
	// CIFixPlan (the default), CIFixAuto or CIFixOff; CIFixAttempts
	// bounds the fix runs of one pull request (DefaultCIFixAttempts when
	// zero). See cifix.go.
	CIFix         CIFixMode
	CIFixAttempts int
}

// Outputs are the step outputs.
type Outputs struct {
	SessionID, PlanID, PullRequestURL string
	// Status is the `status` output, one of Statuses().
	Status Status
	// Summary is Markdown for the job summary.
	Summary string
	// Matrix mode, from --prepare: the matrix JSON, its max-parallel and
	// whether there is anything to run ("true"/"false").
	Matrix, MaxParallel, HasTasks string
	// PlannedIssues is, for a schedule run, how many issues it planned
	// (the status says planned when there was at least one).
	PlannedIssues string
	// Failure says why this run failed (a failed task, a budget stop, an
	// error reported on the thread); empty when it did not. The step
	// exits non-zero when it is set.
	Failure string
	// Notice is one line saying why planex did nothing with the event
	// (shown as a notice; the step stays green).
	Notice string
}

// Runner handles one event: its entry points (Handle, Finalize, Prepare,
// RunTask, Collect) hand the event to a flow (see flowset.go) and write
// the outputs the flow returns.
type Runner struct {
	Cfg  Config
	GH   GitHub
	Repo *gitrepo.Repo // the checkout, authenticated for pushes
	// Engine is the base configuration of every engine the runner makes
	// (agent, mapper, timeouts, logging).
	Engine engine.Options
	Out    io.Writer
	Log    *slog.Logger
	Now    func() time.Time
	// AgentErr is why no agent could be configured; flows that need one
	// report it to the user.
	AgentErr error

	// Outputs are the step outputs, written by step alone.
	Outputs Outputs

	parts *flowSet // the run's flows, made on first use
}

// flows is the run's flows, wired on first use (LoadSettings or an entry
// point) to what the runner holds then: the fields above but Cfg (which
// the flows share with the runner) are set before that and not changed
// after.
func (r *Runner) flows() *flowSet {
	r.defaults()
	if r.parts == nil {
		self := newIdentity(&r.Cfg)
		if self.pinned == "" {
			r.Log.Warn("github-token is not the job's token and bot-login is not set: planex learns its account from what it posts; set bot-login (\"<app-slug>[bot]\" for an App) so that it knows it from the start")
		}
		r.parts = newFlowSet(&env{Cfg: &r.Cfg, GH: r.GH, Repo: r.Repo, Engine: r.Engine, Out: r.Out, Log: r.Log, Now: r.Now, AgentErr: r.AgentErr, self: self})
	}
	return r.parts
}

// access is r.GH.Access, asked at most once per person in a run within
// Config.AccessRecheck.
func (r *env) access() authz.PermissionGetter { return runAccess{r} }

// policy is who may start planex beyond GitHub's permissions.
func (r *env) policy() authz.Policy { return authz.Policy{TrustedBots: r.Cfg.TrustedBots} }

type runAccess struct{ r *env }

// heardPermission is a permission GitHub answered, and when.
type heardPermission struct {
	p  gh.Permission
	at time.Time
}

func (a runAccess) Permission(ctx context.Context, owner, repo, login string) (gh.Permission, error) {
	key := strings.ToLower(owner + "/" + repo + "@" + login)
	// An answer holds for Config.AccessRecheck: a schedule job runs one
	// plan after another for hours, and a maintainer removed during the
	// first must not have the next run in their name.
	if h, ok := a.r.permissions[key]; ok && a.r.Now().Sub(h.at) < a.r.Cfg.AccessRecheck {
		return h.p, nil
	}
	if a.r.GH.Access == nil {
		return gh.Permission{}, errors.New("no permission client")
	}
	p, err := a.r.GH.Access.Permission(ctx, owner, repo, login)
	if err != nil {
		return p, err
	}
	if a.r.permissions == nil {
		a.r.permissions = map[string]heardPermission{}
	}
	a.r.permissions[key] = heardPermission{p: p, at: a.r.Now()}
	return p, nil
}

// Labels planex puts on issues and pull requests.
const (
	LabelPlanned = "planex:planned"
	LabelRunning = "planex:running"
	LabelDone    = "planex:done"
	LabelFailed  = "planex:failed"
)

// userError is a reason shown to people as is; any other error is
// reported as an internal failure with a link to the run's log. A
// refusal is a command that does not apply here (nothing to cancel, a
// fork): the user is told, and the run did not fail.
type userError struct {
	msg     string
	refused bool
}

func (e *userError) Error() string { return e.msg }

func userf(format string, args ...any) error { return &userError{msg: fmt.Sprintf(format, args...)} }

func refusef(format string, args ...any) error {
	return &userError{msg: fmt.Sprintf(format, args...), refused: true}
}

// Handle acts on an event.
func (r *Runner) Handle(ctx context.Context, ev *event.Event) error {
	if err := r.sameRepository(ev); err != nil {
		return r.step(Outputs{}, err)
	}
	o, err := r.flows().intake.handle(ctx, ev)
	return r.step(handleOutputs(o, err), err)
}

// ErrOtherRepository is the error of an event whose payload names another
// repository than the one the workflow runs in.
var ErrOtherRepository = errors.New("the event is about another repository")

// sameRepository refuses an event whose payload names a repository other
// than the workflow's (GITHUB_REPOSITORY, Cfg.Owner/Repo): who may act is
// read on one repository, so an event of another, where its sender may
// hold any access, decides nothing here. Names are compared as GitHub
// does, without regard to case.
func (r *Runner) sameRepository(ev *event.Event) error {
	if ev == nil || ev.Owner == "" || r.Cfg.Owner == "" {
		return nil
	}
	here := r.Cfg.Owner + "/" + r.Cfg.Repo
	if !strings.EqualFold(ev.FullName(), here) {
		return fmt.Errorf("%w: the %s event names %s, the workflow runs in %s; nothing was done", ErrOtherRepository, ev.Name, ev.FullName(), here)
	}
	return nil
}

// step ends an entry point: it writes the outputs the flow returned, the
// one place Runner.Outputs is written, and passes its error on.
func (r *Runner) step(o Outputs, err error) error {
	r.Outputs = o
	return err
}

func (r *intake) handle(ctx context.Context, ev *event.Event) (Outputs, error) {
	if ev.Owner == "" && !ev.Ignored {
		return Outputs{}, errors.New("the event names no repository (GITHUB_REPOSITORY is empty)")
	}
	s := decide(ev, *r.Cfg)
	switch s.Kind {
	case stepReply, stepCommand:
		return r.onComment(ctx, ev, s)
	case stepLabel:
		return r.onLabeled(ctx, ev)
	case stepDispatch:
		return r.onDispatch(ctx, ev)
	case stepSchedule:
		return r.onSchedule(ctx, ev)
	case stepWorkflowRun:
		return r.ci.onWorkflowRun(ctx, ev)
	}
	return r.talk.ignore(ev, "%s", s.Reason)
}

func (r *Runner) defaults() {
	if r.Log == nil {
		r.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if r.Out == nil {
		r.Out = io.Discard
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Cfg.Remote == "" {
		r.Cfg.Remote = "origin"
	}
	if r.Cfg.Trigger == "" {
		r.Cfg.Trigger = slash.DefaultTrigger
	}
	if r.Cfg.Label == "" {
		r.Cfg.Label = event.TriggerLabel
	}
	if r.Cfg.AutoLabel == "" {
		r.Cfg.AutoLabel = "planex:auto"
	}
	if r.Cfg.MaxIssues <= 0 {
		r.Cfg.MaxIssues = 3
	}
	if r.Cfg.Concurrency <= 0 {
		r.Cfg.Concurrency = 4
	}
	if r.Cfg.HeartbeatInterval <= 0 {
		r.Cfg.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if r.Cfg.StaleAfter <= 0 {
		r.Cfg.StaleAfter = DefaultStaleAfter
	}
	if r.Cfg.AccessRecheck <= 0 {
		r.Cfg.AccessRecheck = DefaultAccessRecheck
	}
}

// thread is where a conversation with planex happens: an issue or a pull
// request, and the comment that spoke (if any).
type thread struct {
	Number  int
	IsPR    bool
	Comment *event.Comment
	Actor   event.User
}

// onComment answers a comment addressed to planex, or runs its command
// when its author may.
func (r *intake) onComment(ctx context.Context, ev *event.Event, s step) (Outputs, error) {
	c := ev.Comment
	th := thread{Number: ev.Number, IsPR: ev.IsPR || ev.PR != nil, Comment: c, Actor: c.Author}
	r.talk.react(ctx, th, gh.ReactionEyes)
	need := s.Need
	if s.Kind == stepReply {
		// Answers go to people who may use planex: anyone else is told
		// once (refuseOnce), not answered at every comment.
		need = authz.Trigger
	}
	dec, err := r.policy().Check(ctx, r.access(), ev.Owner, ev.Repo, c.Author.Login, c.Author.Type, need)
	if err != nil {
		return r.talk.fail(ctx, th, nil, fmt.Errorf("checking @%s's permission: %w", c.Author.Login, err))
	}
	if !dec.Allowed {
		r.talk.react(ctx, th, gh.ReactionRefused)
		return r.talk.refuseOnce(ctx, th, c.Author.Login, dec.Reason)
	}
	if s.Kind == stepReply {
		o := Outputs{Status: StatusReplied}
		if s.Refused {
			r.talk.react(ctx, th, gh.ReactionConfused)
			o.Status = StatusRefused
		}
		return o, r.talk.reply(ctx, th, s.Reply)
	}
	o, err := r.dispatch(ctx, ev, th, s.Command)
	return r.talk.failAfter(ctx, th, nil, o, err)
}

func (r *intake) dispatch(ctx context.Context, ev *event.Event, th thread, cmd *slash.Command) (Outputs, error) {
	switch cmd.Name {
	case slash.Help:
		return Outputs{Status: StatusReplied}, r.talk.reply(ctx, th, slash.HelpText(r.Cfg.Trigger))
	case slash.Plan:
		if th.IsPR {
			return r.plans.followUp(ctx, ev, th, cmd)
		}
		return r.planOnIssue(ctx, ev, th, cmd)
	case slash.Approve:
		return r.runs.approve(ctx, th, cmd.PlanID, th.Actor.Login, cmd.Concurrency)
	case slash.Revise:
		return r.plans.revise(ctx, th, cmd.Text)
	case slash.Cancel:
		return r.plans.cancel(ctx, th)
	case slash.Retry:
		return r.runs.retry(ctx, th, th.Actor.Login)
	case slash.Status:
		return r.plans.status(ctx, th)
	case slash.Fix:
		return r.reviews.fix(ctx, ev, th, cmd)
	case slash.Review:
		return r.reviews.reviewPR(ctx, ev, th)
	case slash.FixCI:
		return r.ci.fixCI(ctx, ev, th, cmd)
	}
	return Outputs{}, r.talk.reply(ctx, th, slash.HelpText(r.Cfg.Trigger))
}

// planOnIssue plans a command's requirement on an issue, or without one
// the issue's own text, which waits for an approval under auto-approve
// or -y when a non-writer wrote it (writtenByOther): its author may edit
// it in the seconds between a maintainer's reading and commenting, and
// the event carries the text as it is when the comment is made.
func (r *intake) planOnIssue(ctx context.Context, ev *event.Event, th thread, cmd *slash.Command) (Outputs, error) {
	req, manual := cmd.Requirement, ""
	if strings.TrimSpace(req) == "" {
		if ev.Issue == nil {
			return Outputs{}, refusef("give a requirement: `%s <what to do>`", r.Cfg.Trigger)
		}
		req = issueRequirement(ev.Issue.Title, ev.Issue.Body)
		var err error
		if manual, err = r.writtenByOther(ctx, ev.Issue.Author, th.Actor.Login, r.Cfg.AutoApprove || cmd.Yes); err != nil {
			return Outputs{}, err
		}
	}
	return r.plans.plan(ctx, th, planRequest{Requirement: req, Issue: th.Number, Yes: cmd.Yes && manual == "", Concurrency: cmd.Concurrency, RequestedBy: th.Actor.Login, Manual: manual})
}

// onLabeled plans an issue that was given the planex label.
func (r *intake) onLabeled(ctx context.Context, ev *event.Event) (Outputs, error) {
	th := thread{Number: ev.Number, Actor: ev.Sender}
	need := authz.Trigger
	if r.Cfg.AutoApprove {
		// The label then runs the plan: the labeller approves it.
		need = authz.Approve
	}
	dec, err := r.policy().Check(ctx, r.access(), ev.Owner, ev.Repo, ev.Sender.Login, ev.Sender.Type, need)
	if err != nil {
		return r.talk.fail(ctx, th, nil, err)
	}
	if !dec.Allowed {
		return r.talk.refuseOnce(ctx, th, ev.Sender.Login, dec.Reason)
	}
	if ev.Issue == nil {
		return Outputs{}, errors.New("the issues event carries no issue")
	}
	manual, err := r.writtenByOther(ctx, ev.Issue.Author, ev.Sender.Login, r.Cfg.AutoApprove)
	if err != nil {
		return r.talk.fail(ctx, th, nil, err)
	}
	o, err := r.plans.plan(ctx, th, planRequest{Requirement: issueRequirement(ev.Issue.Title, ev.Issue.Body), Issue: ev.Number, RequestedBy: ev.Sender.Login, Manual: manual})
	return r.talk.failAfter(ctx, th, nil, o, err)
}

// writtenByOther says, when plans are approved automatically (auto: the
// setting, -y or the dispatch form's input), why
// an issue's plan must wait for an approval all the same: its text is the
// requirement, and its author, who is not the one who asked for the plan
// (by), has no write access. They may edit the text after a maintainer
// read it and added the label (a schedule plans it hours later) or
// dispatched the workflow naming it, so what would run is text nobody
// with write access approved. An issue whose author GitHub does not name
// (its REST description lets the user be null) waits too: nobody can say
// who may have edited it. "" when the plan may run at once.
func (r *intake) writtenByOther(ctx context.Context, author event.User, by string, auto bool) (string, error) {
	if !auto {
		return "", nil
	}
	if author.Login == "" {
		return fmt.Sprintf("this plan would run at once (auto-approve or `-y`), but GitHub names no author for this issue, so nobody can tell who may have edited it since it was read, labelled or named: read the plan above and approve it with `%s approve <plan-id>`.",
			r.Cfg.Trigger), nil
	}
	if strings.EqualFold(author.Login, by) {
		return "", nil
	}
	dec, err := r.policy().Check(ctx, r.access(), r.Cfg.Owner, r.Cfg.Repo, author.Login, author.Type, authz.Approve)
	if err != nil {
		return "", fmt.Errorf("checking the permission of @%s, who wrote the issue: %w", author.Login, err)
	}
	if dec.Allowed {
		return "", nil
	}
	return fmt.Sprintf("this plan would run at once (auto-approve or `-y`), but this issue was written by `%s`, who cannot approve plans, and may have been edited since it was read, labelled or named: read the plan above and approve it with `%s approve <plan-id>`.",
		author.Login, r.Cfg.Trigger), nil
}

// onDispatch plans an issue (or a requirement) named in the inputs.
func (r *intake) onDispatch(ctx context.Context, ev *event.Event) (Outputs, error) {
	in := ev.Inputs
	number := in.Issue
	req := gfm.Visible(in.Requirement)
	if number == 0 && req == "" {
		return Outputs{}, userf("workflow_dispatch needs the input `issue` or `requirement`")
	}
	if o, refused, err := r.dispatchRefused(ctx, ev, number); refused || err != nil {
		return o, err
	}
	if number == 0 {
		var err error
		if number, err = r.dispatchIssue(ctx, ev, req); err != nil {
			return Outputs{}, err
		}
	}
	th := thread{Number: number, Actor: ev.Sender}
	manual := ""
	if req == "" {
		is, err := r.GH.Intake.GetIssue(ctx, ev.Owner, ev.Repo, number)
		if err != nil {
			return Outputs{}, fmt.Errorf("reading issue #%d: %w", number, err)
		}
		req = issueRequirement(is.GetTitle(), is.GetBody())
		// The form names the issue, not its text: approving it at once,
		// by the setting or the form, approves what its author wrote by
		// the time the job reads it.
		if in.AutoApprove || r.Cfg.AutoApprove {
			author := event.User{Login: is.GetUser().GetLogin(), Type: is.GetUser().GetType()}
			if manual, err = r.writtenByOther(ctx, author, ev.Sender.Login, true); err != nil {
				return r.talk.fail(ctx, th, nil, err)
			}
		}
	}
	o, err := r.plans.plan(ctx, th, planRequest{Requirement: req, Issue: number, Yes: in.AutoApprove && manual == "", RequestedBy: ev.Sender.Login, Manual: manual})
	return r.talk.failAfter(ctx, th, nil, o, err)
}

// dispatchRefused checks that the dispatch's sender may run planex: have
// write access, and when the plan would be approved automatically (the
// form's input or the setting), be allowed to approve plans. GitHub lets
// only write users dispatch from its form, but any workflow's token (the
// shared Actions bot, in a workflow a reader's comment started) or an
// App may dispatch too, and a change in who may must not let anyone else
// start a plan. A refusal is told on the issue (if any) and in a notice;
// nothing is planned.
func (r *intake) dispatchRefused(ctx context.Context, ev *event.Event, number int) (Outputs, bool, error) {
	auto := ev.Inputs.AutoApprove || r.Cfg.AutoApprove
	need := authz.Trigger
	if auto {
		need = authz.Approve
	}
	dec, err := r.policy().Check(ctx, r.access(), ev.Owner, ev.Repo, ev.Sender.Login, ev.Sender.Type, need)
	if err != nil {
		return Outputs{}, true, fmt.Errorf("checking the permission of @%s, who dispatched the workflow: %w", ev.Sender.Login, err)
	}
	if dec.Allowed {
		return Outputs{}, false, nil
	}
	what, why := "workflow_dispatch", ""
	if auto {
		what, why = "workflow_dispatch with auto-approve", " (a dispatch with auto-approve runs the plan, so its sender must be allowed to approve it.)"
	}
	reason := dec.Reason
	o := Outputs{Status: StatusRefused, Notice: what + " refused: " + reason}
	if number == 0 {
		fmt.Fprintln(r.Out, o.Notice)
		return o, true, nil
	}
	return o, true, r.talk.reply(ctx, thread{Number: number}, "@"+ev.Sender.Login+" "+reason+why)
}

// dispatchIssue opens the issue a requirement given to workflow_dispatch
// is planned on. The issue carries the workflow run's id, so a re-run of
// that run finds it instead of opening another.
func (r *intake) dispatchIssue(ctx context.Context, ev *event.Event, req string) (int, error) {
	marker := ""
	if r.Cfg.RunID != "" {
		marker = "<!-- planex:dispatch " + r.Cfg.RunID + " -->"
		recent, err := r.GH.Intake.RecentIssues(ctx, ev.Owner, ev.Repo)
		if err != nil {
			return 0, fmt.Errorf("looking for the issue of an earlier attempt: %w", err)
		}
		for _, is := range recent {
			if !is.IsPullRequest() && strings.Contains(is.GetBody(), marker) && r.self.is(is.GetUser()) {
				return is.GetNumber(), nil
			}
		}
	}
	body := req
	if marker != "" {
		body += "\n\n" + marker
	}
	is, err := r.GH.Intake.CreateIssue(ctx, ev.Owner, ev.Repo, "planex: "+abbrev.Truncate(abbrev.FirstLine(req), 80), body)
	if err != nil {
		return 0, fmt.Errorf("opening an issue for the requirement: %w", err)
	}
	r.self.note(is.GetUser())
	return is.GetNumber(), nil
}

// onSchedule plans up to MaxIssues open issues labelled for automatic
// planning that have no plan yet, each only when whoever last added the
// label may (see scheduleLabeller); the others are skipped with a line
// in the job summary.
func (r *intake) onSchedule(ctx context.Context, ev *event.Event) (Outputs, error) {
	issues, err := r.GH.Intake.ListIssuesByLabel(ctx, ev.Owner, ev.Repo, r.Cfg.AutoLabel, "open")
	if err != nil {
		return Outputs{}, err
	}
	var o Outputs
	planned := 0
	var errs []error
	var skipped []string
	for _, is := range issues {
		if planned == r.Cfg.MaxIssues {
			break
		}
		if hasAnyLabel(is, LabelPlanned, LabelRunning, LabelDone, LabelFailed) {
			continue
		}
		n := is.GetNumber()
		by, why, err := r.schedulable(ctx, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if why != "" {
			if why != hasPlan {
				skipped = append(skipped, fmt.Sprintf("- #%d: %s", n, why))
			}
			continue
		}
		th := thread{Number: n, Actor: event.User{Login: by}}
		manual, err := r.writtenByOther(ctx, event.User{Login: is.GetUser().GetLogin(), Type: is.GetUser().GetType()}, by, r.Cfg.AutoApprove)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// The listing holds no body (gh.Client.ListIssuesByLabel): the
		// issue is read as it is now.
		full, err := r.GH.Intake.GetIssue(ctx, ev.Owner, ev.Repo, n)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading issue #%d: %w", n, err))
			continue
		}
		po, err := r.plans.plan(ctx, th, planRequest{Requirement: issueRequirement(full.GetTitle(), full.GetBody()), Issue: n, RequestedBy: by, Manual: manual})
		o = o.with(po)
		if err != nil {
			fo, ferr := r.talk.fail(ctx, th, nil, err)
			o = o.with(fo)
			errs = append(errs, ferr) // nil when the issue was told why
			continue
		}
		planned++
	}
	return r.scheduleOutputs(o, len(issues), planned, len(errs), skipped), errors.Join(errs...)
}

// hasPlan is schedulable's reason for an issue that has a plan already:
// it is passed over without a line in the summary.
const hasPlan = "it has a plan"

// schedulable says whether the schedule may plan issue n: it returns who
// asked for it (see scheduleLabeller), or why not. An issue whose state
// cannot be read is skipped with the reason in the job summary (and the
// log), never planned over a state planex could not see.
func (r *intake) schedulable(ctx context.Context, n int) (string, string, error) {
	_, found, err := r.store.loadRecord(ctx, n)
	if err != nil {
		r.Log.Error("reading an issue's planex state for the schedule", "issue", n, "err", err)
		return "", "its planex state could not be read (" + abbrev.OneLine(err.Error()) + ")", nil
	}
	if found {
		return "", hasPlan, nil
	}
	return r.scheduleLabeller(ctx, n)
}

// scheduleOutputs are a schedule run's outputs: the last plan's, the
// count of planned issues, and the skipped issues ahead of the summary.
func (r *intake) scheduleOutputs(o Outputs, open, planned, failed int, skipped []string) Outputs {
	fmt.Fprintf(r.Out, "schedule: planned %s\n", plural.Count(planned, "issue", "issues"))
	if len(skipped) > 0 {
		fmt.Fprintf(r.Out, "schedule: skipped %s\n%s\n", plural.Count(len(skipped), "issue", "issues"), strings.Join(skipped, "\n"))
		note := fmt.Sprintf("### planex schedule: skipped %s\n\n%s", plural.Count(len(skipped), "issue", "issues"), strings.Join(skipped, "\n"))
		o.Summary = strings.TrimSpace(note + "\n\n" + o.Summary)
	}
	o.PlannedIssues = strconv.Itoa(planned)
	switch {
	case planned > 0:
		o.Status = StatusPlanned
	case failed == 0:
		o.Status = StatusIgnored
		o.Notice = fmt.Sprintf("schedule: no issue planned (open issues labelled %s without a plan: %d, skipped: %d)", r.Cfg.AutoLabel, open, len(skipped))
	}
	return o
}

// scheduleLabeller finds who last added the auto label to issue n and
// whether they may have it planned: the same rule as the label path
// (write access), and, when plans are approved automatically, the rule
// for approving (no bots). It returns their login, or why the issue is
// skipped.
func (r *intake) scheduleLabeller(ctx context.Context, n int) (string, string, error) {
	evs, err := r.GH.Intake.LabelEvents(ctx, r.Cfg.Owner, r.Cfg.Repo, n, r.Cfg.AutoLabel)
	if errors.Is(err, gh.ErrListTooLong) {
		// Skipped, not failed: one issue's flood of events (mentions
		// make them) stops no other issue's plan.
		return "", fmt.Sprintf("its events are too many to tell who added `%s` (%s)", r.Cfg.AutoLabel, abbrev.OneLine(err.Error())), nil
	}
	if err != nil {
		return "", "", err
	}
	last, ok := lastLabeller(evs)
	if !ok {
		return "", fmt.Sprintf("its events do not show who added `%s`", r.Cfg.AutoLabel), nil
	}
	need := authz.Trigger
	if r.Cfg.AutoApprove {
		need = authz.Approve
	}
	dec, err := r.policy().Check(ctx, r.access(), r.Cfg.Owner, r.Cfg.Repo, last.Actor, last.ActorType, need)
	if err != nil {
		return "", "", fmt.Errorf("checking who labelled #%d: %w", n, err)
	}
	if !dec.Allowed {
		return "", fmt.Sprintf("`%s` was last added by @%s, who may not have it planned (%s)", r.Cfg.AutoLabel, last.Actor, accessOf(dec)), nil
	}
	return last.Actor, "", nil
}

// lastLabeller is the newest addition of a label among its additions and
// removals (oldest first); false when there is none, or the label was
// removed after it (the events and the issue disagree: nobody is
// trusted).
func lastLabeller(evs []gh.LabelEvent) (gh.LabelEvent, bool) {
	if len(evs) == 0 || !evs[len(evs)-1].Labeled || evs[len(evs)-1].Actor == "" {
		return gh.LabelEvent{}, false
	}
	return evs[len(evs)-1], true
}

// accessOf names the access a refused user has, for the job summary and
// replies: a bot refused before GitHub was asked, or the access as the
// refusal names it (authz.Decision.Access).
func accessOf(dec authz.Decision) string {
	if dec.Permission == "" && dec.Role == "" {
		return "a bot"
	}
	return dec.Access() + " access"
}

func hasAnyLabel(is *github.Issue, names ...string) bool {
	for _, l := range is.Labels {
		for _, n := range names {
			if l.GetName() == n {
				return true
			}
		}
	}
	return false
}

// issueRequirement is the requirement of an issue: its title and what
// GitHub displays of its body. This, slash.Parse (comments) and
// pullRequestText are the doors through which text people wrote on GitHub
// reaches agents; each lets through only what a reader of the issue sees
// (gfm.Visible).
func issueRequirement(title, body string) string {
	return strings.TrimSpace(gfm.StripInvisible(title) + "\n\n" + gfm.Visible(body))
}

// pullRequestText is the title and the displayed description of a pull
// request, for its review.
func pullRequestText(title, body string) (string, string) {
	return strings.TrimSpace(gfm.StripInvisible(title)), gfm.Visible(body)
}
