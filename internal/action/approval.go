package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/authz"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/event"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/render"
	"github.com/planexhq/planex/internal/scope"
	"github.com/planexhq/planex/internal/slash"
)

// Whatever can push to the repository can rewrite a thread's state ref,
// session folder included. What runs is therefore pinned twice: by the
// plan comment planex posted (its hidden marker holds the plan's id and
// sha256) and by the approval, a command on the thread from someone with
// write access. Both live on GitHub, out of reach of a forged state ref;
// checkApproval reads them again before a plan is resumed, and the engine
// checks that the session still holds exactly the plan with that sha256.

// ApprovalVia is how a plan was approved (Record.ApprovedVia): a closed
// set; a value planex does not know is no approval (judgeApproval).
type ApprovalVia string

// Ways a plan is approved.
const (
	viaComment     ApprovalVia = "comment"      // `/planex approve <id>`
	viaYes         ApprovalVia = "yes"          // -y on the planning command
	viaAutoApprove ApprovalVia = "auto-approve" // the auto-approve setting
	viaDispatch    ApprovalVia = "dispatch"     // the auto-approve input of workflow_dispatch
	viaCIFix       ApprovalVia = "ci-fix"       // ci-fix: auto, for a failed CI run
)

// approval says who approved a plan, how, and with which comment.
type approval struct {
	By      string
	Via     ApprovalVia
	Comment *event.Comment // nil for auto-approve and dispatch
	// seen are the thread's comments as the approving flow just read
	// them (nil: execute reads them).
	seen []*github.IssueComment
}

// record notes an approval in rec.
func (a approval) record(rec *Record) {
	rec.ApprovedBy, rec.ApprovedVia = a.By, a.Via
	rec.ApprovalCommentID, rec.ApprovalCommentKind = 0, ""
	if a.Comment != nil {
		rec.ApprovalCommentID, rec.ApprovalCommentKind = a.Comment.ID, a.Comment.Kind
	}
}

func (a approval) engine(trigger string) engine.Approver {
	how := map[ApprovalVia]string{viaComment: trigger + " approve", viaYes: trigger + " -y", viaAutoApprove: "auto-approve setting",
		viaDispatch: "workflow_dispatch auto-approve", viaCIFix: "ci-fix: auto"}[a.Via]
	return engine.Approver{By: a.By, How: how}
}

// approvalAPI is what checking an approval on GitHub needs: the plan
// comment and the command that approved it, wherever it was written.
type approvalAPI interface {
	GetComment(ctx context.Context, owner, repo string, commentID int64) (*github.IssueComment, error)
	ListComments(ctx context.Context, owner, repo string, number int, since time.Time) ([]*github.IssueComment, error)
	ListReviewComments(ctx context.Context, owner, repo string, number int) ([]*github.PullRequestComment, error)
	ListReviews(ctx context.Context, owner, repo string, number int) ([]*github.PullRequestReview, error)
}

// postedComment is a comment as GitHub has it now.
// Bot: a bot wrote it (no bot approves anything); Self: planex's own
// account wrote it (only then is it planex's plan comment).
type postedComment struct {
	ID    int64
	Login string
	Bot   bool
	Self  bool
	// Recorded: by the account the thread's record alone names as
	// planex's (not Self: whoever can push writes the record).
	Recorded bool
	Body     string
	// Kind is which of GitHub's lists holds it: each numbers its own
	// (issue comments, review comments and reviews have separate ids).
	Kind    event.CommentKind
	Created time.Time
	// Dismissed: a review someone with write access dismissed; what it
	// said approves nothing any more.
	Dismissed bool
	// Edited: GitHub shows it changed after it was written (planex
	// never edits its plan comment).
	Edited bool
}

// approvalProblem is why a recorded approval does not hold.
type approvalProblem struct{ msg string }

func (p *approvalProblem) Error() string { return p.msg }

func problemf(format string, args ...any) error {
	return &approvalProblem{fmt.Sprintf(format, args...)}
}

// checkApproval verifies the approval rec claims against GitHub: the plan
// comment is planex's, on this thread, for exactly rec's plan; the
// approval is a command on this thread by rec.ApprovedBy, for that plan
// (or the -y of the command that asked for it), and rec.ApprovedBy has
// write access. An *approvalProblem says what does not hold; other errors
// are failures to find out.
func (r *gate) checkApproval(ctx context.Context, rec *Record) error {
	return r.checkApprovalIn(ctx, rec, nil)
}

// checkApprovalIn is checkApproval given the thread's comments as this
// job has just read them (nil: read them now).
func (r *gate) checkApprovalIn(ctx context.Context, rec *Record, issueComments []*github.IssueComment) error {
	if rec.PlanHash == "" || plan.ID(rec.PlanHash) != rec.PlanID {
		return problemf("the record names no plan (or a plan id that is not its hash's)")
	}
	if issueComments == nil {
		var err error
		if issueComments, err = r.GH.Approvals.ListComments(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Thread, time.Time{}); err != nil {
			return fmt.Errorf("reading the comments of #%d: %w", rec.Thread, err)
		}
	}
	var err error
	var posted []*postedComment
	for _, c := range issueComments {
		p := r.posted(event.KindIssueComment, c.GetID(), c.GetUser(), c.GetBody(), c.GetCreatedAt().Time)
		p.Edited = c.GetUpdatedAt().After(c.GetCreatedAt().Time)
		posted = append(posted, p)
	}
	var approving *postedComment
	if rec.ApprovedVia == viaComment || rec.ApprovedVia == viaYes {
		if approving, err = r.approvalComment(ctx, rec, issueComments); err != nil {
			return err
		}
	}
	if err := judgeApproval(rec, posted, approving, r.Cfg.Trigger, r.Cfg.AutoApprove, r.ciFixMode() == CIFixAuto); err != nil {
		return err
	}
	if err := r.sessionMatches(ctx, rec); err != nil {
		return err
	}
	if err := r.inputsMatch(rec, posted); err != nil {
		return err
	}
	// The setting runs a plan in the name of whoever asked for it (the
	// labeller, the commenter), who must still be allowed to approve, as
	// a commenting approver must. A CI fix of a run planex's own push
	// started names planex, which no permission describes: only a CI
	// fix, whose plan comment planex posted with the failure it read.
	if (rec.ApprovedVia == viaAutoApprove || rec.ApprovedVia == viaCIFix) && r.self.isLogin(rec.ApprovedBy) && ciFixComment(rec, posted) {
		if !r.self.vouched(rec.ApprovedBy) {
			return problemf("it was approved in planex's own name, and planex knows its account (@%s) only from this thread's record, which whoever can push writes: set the bot-login input", rec.ApprovedBy)
		}
		return nil
	}
	dec, err := r.policy().Check(ctx, r.access(), r.Cfg.Owner, r.Cfg.Repo, rec.ApprovedBy, "User", authz.Approve)
	if err != nil {
		return err
	}
	if !dec.Allowed {
		return problemf("@%s, who approved it, cannot approve plans (any more)", rec.ApprovedBy)
	}
	return nil
}

// ciFixComment says whether rec is a CI fix whose plan comment (among
// posted, judged planex's already) shows the CI failure planex read: an
// approval in planex's own name holds for nothing else.
func ciFixComment(rec *Record, posted []*postedComment) bool {
	if rec.CIFix == nil {
		return false
	}
	i := slices.IndexFunc(posted, func(c *postedComment) bool { return c.ID == rec.PlanCommentID })
	return i >= 0 && strings.Contains(posted[i].Body, ciSectionMark)
}

// sessionMatches checks that the session rec restored runs where the
// record (whose base the plan comment shows) says: the same base commit
// and run branch; for a plan on an issue the branch planex names after
// its session, for a follow-up the head of the pull request it was asked
// on. Both files come from a state ref whoever can push may have written.
func (r *gate) sessionMatches(ctx context.Context, rec *Record) error {
	s, err := r.store.session(rec)
	if err != nil {
		return err
	}
	if rec.FollowUp {
		pr, err := r.GH.Pulls.GetPR(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Thread)
		if err != nil {
			return fmt.Errorf("reading pull request #%d: %w", rec.Thread, err)
		}
		head := pr.GetHead()
		if head.GetRef() != rec.Branch || !strings.EqualFold(head.GetRepo().GetFullName(), r.Cfg.Owner+"/"+r.Cfg.Repo) {
			return problemf("it runs on the branch %s, which is not the head of pull request #%d (%s)",
				render.Code(rec.Branch), rec.Thread, render.Code(head.GetRef()))
		}
	}
	if err := r.baseBranchHolds(ctx, rec); err != nil {
		return err
	}
	switch {
	case s.Meta.Base != rec.Base:
		return problemf("its session starts from %s, not from the base %s it was planned on", abbrev.SHA(s.Meta.Base), abbrev.SHA(rec.Base))
	case s.Meta.Branch != rec.Branch:
		return problemf("its session runs on the branch %s, not %s", render.Code(s.Meta.Branch), render.Code(rec.Branch))
	case !rec.FollowUp && rec.Branch != "planex/"+rec.SessionID:
		return problemf("its run branch %s is not planex's branch for session %s", render.Code(rec.Branch), render.Code(rec.SessionID))
	}
	return nil
}

// inputsMatch checks that the restored session tells its tasks what the
// plan was made from: the requirement and exploration whose hash the
// plan comment (found and judged planex's already) carries. Both come
// from a state ref whoever can push may have rewritten after the
// approval, and every task's prompt quotes them. A comment without the
// hash holds no approval (planCommentHolds), so none is skipped here.
func (r *gate) inputsMatch(rec *Record, thread []*postedComment) error {
	i := slices.IndexFunc(thread, func(c *postedComment) bool { return c.ID == rec.PlanCommentID })
	if i < 0 {
		return problemf("its plan comment is not on #%d", rec.Thread)
	}
	m, _ := render.ParsePlanMarker(thread[i].Body)
	if m.Inputs == "" {
		return problemf("the plan comment of plan `%s` does not show the hash of the requirement and exploration it was made from", rec.PlanID)
	}
	s, err := r.store.session(rec)
	if err != nil {
		return err
	}
	explore, err := r.store.exploreOf(s)
	if err != nil {
		return err
	}
	if plan.InputsHash(s.Meta.Requirement, explore) != m.Inputs {
		return problemf("its session's requirement or exploration is not what plan `%s` was made from", rec.PlanID)
	}
	return nil
}

// baseBranchHolds checks the branch rec's pull request goes to (and its
// base is checked against): for a follow-up its own run branch, the head
// of the pull request it was asked on; for a plan on an issue the branch
// planex plans from (the base-branch setting, else the default branch),
// not one a forged github.json names, where merging would bring in every
// commit of the plan's base the branch lacks.
func (r *gate) baseBranchHolds(ctx context.Context, rec *Record) error {
	want := rec.Branch
	if !rec.FollowUp {
		want = r.Cfg.BaseBranch
		if want == "" {
			var err error
			if want, err = r.defaultBranch(ctx); err != nil {
				return err
			}
		}
	}
	if rec.BaseBranch != want {
		// Branch names may hold backticks: render.Code makes a span they
		// cannot end (text escapes inside a hand-made span could).
		return problemf("its pull request would go to %s, not to %s, the branch it was planned from", render.Code(rec.BaseBranch), render.Code(want))
	}
	return nil
}

// planCommentHolds checks that c (nil: not on the thread) is planex's
// plan comment for exactly rec's plan: planex's account's, its marker naming rec's
// plan id, sha256, session and (the base is part of what was approved)
// base commit.
func planCommentHolds(rec *Record, c *postedComment) error {
	if c == nil {
		return problemf("its plan comment is not on #%d", rec.Thread)
	}
	if c.Recorded {
		return problemf("the plan comment on #%d is planex's only by the word of the thread's state ref, which whoever can push writes: "+
			"set the bot-login input so that planex knows its own account", rec.Thread)
	}
	m, ok := render.ParsePlanMarker(c.Body)
	if !c.Self || !ok || m.ID != rec.PlanID || m.SHA256 != rec.PlanHash || m.Session != rec.SessionID {
		return problemf("the plan comment on #%d is not planex's comment for plan `%s`", rec.Thread, rec.PlanID)
	}
	if m.Base == "" {
		// An older planex's comment: what its state ref says the base
		// is cannot be checked against what was approved.
		return problemf("the plan comment on #%d does not show the base plan `%s` was made on (an older planex posted it): start the plan again", rec.Thread, rec.PlanID)
	}
	if m.Base != rec.Base {
		return problemf("the plan comment on #%d shows plan `%s` on %s, not on %s", rec.Thread, rec.PlanID, abbrev.SHA(m.Base), abbrev.SHA(rec.Base))
	}
	if m.Inputs == "" {
		// An older planex's comment, or one whose hash someone who may
		// edit comments stripped: what the tasks' prompts quote could
		// not be checked, so it approves nothing.
		return problemf("the plan comment on #%d does not show the hash of the requirement and exploration plan `%s` was made from (an older planex posted it, or it was edited): start the plan again", rec.Thread, rec.PlanID)
	}
	if c.Edited {
		// Whoever may edit comments may not approve (an App with issues
		// write): what its marker says (posted to run at once, for whom)
		// is planex's only as planex posted it.
		return problemf("the plan comment on #%d was edited after planex posted it, so it no longer shows what was approved: start the plan again", rec.Thread)
	}
	return nil
}

// judgeApproval decides, from the thread's comments as GitHub has them
// and the approving comment (nil when there is none), whether the
// approval rec claims holds; the approver's permission is checked apart.
func judgeApproval(rec *Record, thread []*postedComment, approving *postedComment, trigger string, autoApprove, ciFixAuto bool) error {
	var planComment *postedComment
	for _, c := range thread {
		if c.ID == rec.PlanCommentID {
			planComment = c
		}
	}
	if err := planCommentHolds(rec, planComment); err != nil {
		return err
	}
	// A setting or a -y approves only a plan planex posted to run at
	// once: one posted to wait (an issue a non-writer wrote, a revision)
	// has its approval on GitHub or none, whatever a forged state ref
	// says.
	posted, _ := render.ParsePlanMarker(planComment.Body)
	switch rec.ApprovedVia {
	case viaAutoApprove, viaCIFix:
		return settingApproves(rec, posted, autoApprove, ciFixAuto)
	case viaDispatch:
		return problemf("it was approved through workflow_dispatch, which planex cannot check again")
	case viaYes:
		// A -y approves only the plan it asked to run at once: on an
		// issue whose author may edit it, the plan was posted to wait.
		if !posted.Auto {
			return problemf("it was approved by a %s -y, but plan `%s` was posted to wait for an approval", trigger, rec.PlanID)
		}
	case viaComment:
	default:
		return problemf("no approval is on record for it")
	}
	if approving == nil {
		return problemf("the approving comment is not on #%d", rec.Thread)
	}
	if approving.Bot || approving.Login != rec.ApprovedBy {
		return problemf("the approving comment is not @%s's", rec.ApprovedBy)
	}
	if approving.Dismissed {
		return problemf("@%s's approving review was dismissed", rec.ApprovedBy)
	}
	if approving.Edited {
		// What it says now may be what someone who may edit comments
		// (but not approve) made of it.
		return problemf("@%s's approving comment was edited after it was written", rec.ApprovedBy)
	}
	if rec.ApprovedVia == viaComment {
		return commentApproves(rec, approving, planComment, trigger)
	}
	if err := yesApproves(rec, approving, planComment, thread, trigger); err != nil {
		return err
	}
	return postedFor(rec, posted)
}

// settingApproves checks an approval by a setting (auto-approve, ci-fix
// auto): the setting is on, and the plan comment's marker says the plan
// was posted to run at once, for the approver on record.
func settingApproves(rec *Record, posted render.PlanMarker, autoApprove, ciFixAuto bool) error {
	if rec.ApprovedVia == viaCIFix {
		if rec.CIFix == nil || !ciFixAuto {
			return problemf("it was approved automatically as a CI fix, and ci-fix is not auto")
		}
		if !posted.Auto {
			return problemf("it was approved automatically as a CI fix, but plan `%s` was posted to wait for an approval", rec.PlanID)
		}
		return postedFor(rec, posted)
	}
	if !autoApprove {
		return problemf("it was approved automatically, and the auto-approve setting is off")
	}
	if !posted.Auto {
		return problemf("it was approved automatically, but plan `%s` was posted to wait for an approval", rec.PlanID)
	}
	return postedFor(rec, posted)
}

// postedFor checks that a plan approved as it was posted (a setting, a
// -y) runs for whom its comment says: the approver a state ref names is
// whoever can push's to write, and a setting's approver is the one whose
// access is checked again (planex's own, for a CI fix, not at all).
func postedFor(rec *Record, m render.PlanMarker) error {
	if !strings.EqualFold(m.For, rec.ApprovedBy) {
		if m.For == "" {
			return problemf("plan `%s` was posted to run at once by an older planex, whose comment does not say whom for: start the plan again", rec.PlanID)
		}
		return problemf("plan `%s` was posted to run at once for @%s, not for @%s", rec.PlanID, m.For, rec.ApprovedBy)
	}
	return nil
}

// commentApproves checks an approve command: for this plan, written
// after the plan was posted.
func commentApproves(rec *Record, c, planComment *postedComment, trigger string) error {
	res := slash.Parse(c.Body, trigger)
	if res.Kind != slash.Run || res.Command.Name != slash.Approve || res.Command.PlanID != rec.PlanID {
		return problemf("@%s's comment does not approve plan `%s`", rec.ApprovedBy, rec.PlanID)
	}
	if !after(c, planComment) {
		return problemf("@%s's approval was written before plan `%s` was posted", rec.ApprovedBy, rec.PlanID)
	}
	return nil
}

// yesApproves checks a -y planning command: it approves the plan it
// asked for, the first plan planex posted after it, not a later one.
func yesApproves(rec *Record, c, planComment *postedComment, thread []*postedComment, trigger string) error {
	res := slash.Parse(c.Body, trigger)
	if n := res.Command; res.Kind != slash.Run || (n.Name != slash.Plan && n.Name != slash.Fix && n.Name != slash.FixCI) || !n.Yes {
		return problemf("@%s's comment is not a %s -y command", rec.ApprovedBy, trigger)
	}
	if !after(planComment, c) {
		return problemf("plan `%s` was posted before @%s's %s -y", rec.PlanID, rec.ApprovedBy, trigger)
	}
	for _, pc := range thread {
		if _, isPlan := render.ParsePlanMarker(pc.Body); isPlan && pc.Self && pc.ID != planComment.ID && mayBeAfter(pc, c) && after(planComment, pc) {
			return problemf("@%s's %s -y approved an earlier plan, not `%s`", rec.ApprovedBy, trigger, rec.PlanID)
		}
	}
	return nil
}

// approvalComment finds the comment that approved rec's plan: an issue
// comment, a review comment or a review body on the thread.
func (r *gate) approvalComment(ctx context.Context, rec *Record, issueComments []*github.IssueComment) (*postedComment, error) {
	switch rec.ApprovalCommentKind {
	case event.KindIssueComment, "":
		for _, c := range issueComments {
			if c.GetID() == rec.ApprovalCommentID {
				p := r.posted(event.KindIssueComment, c.GetID(), c.GetUser(), c.GetBody(), c.GetCreatedAt().Time)
				p.Edited = c.GetUpdatedAt().After(c.GetCreatedAt().Time)
				return p, nil
			}
		}
	case event.KindReviewComment:
		cs, err := r.GH.Approvals.ListReviewComments(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Thread)
		if err != nil {
			return nil, fmt.Errorf("reading the review comments of #%d: %w", rec.Thread, err)
		}
		for _, c := range cs {
			if c.GetID() == rec.ApprovalCommentID {
				// Not judged edited by its updated_at: GitHub may move that
				// as pushes move the comment's place in the diff, and a
				// follow-up's run pushes to that pull request.
				return r.posted(event.KindReviewComment, c.GetID(), c.GetUser(), c.GetBody(), c.GetCreatedAt().Time), nil
			}
		}
	case event.KindReview:
		rs, err := r.GH.Approvals.ListReviews(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Thread)
		if err != nil {
			return nil, fmt.Errorf("reading the reviews of #%d: %w", rec.Thread, err)
		}
		for _, rv := range rs {
			if rv.GetID() == rec.ApprovalCommentID {
				p := r.posted(event.KindReview, rv.GetID(), rv.GetUser(), rv.GetBody(), rv.GetSubmittedAt().Time)
				p.Dismissed = strings.EqualFold(rv.GetState(), "DISMISSED")
				return p, nil
			}
		}
	}
	return nil, nil
}

// posted is a comment (or review) by u as the gate judges it. It is
// planex's own (Self) only by the configuration's word or GitHub's
// answers to planex in this job, never by a thread's record alone: an
// account the record names may be whoever pushed it.
func (r *gate) posted(kind event.CommentKind, id int64, u *github.User, body string, created time.Time) *postedComment {
	return &postedComment{ID: id, Kind: kind, Login: u.GetLogin(), Bot: event.IsBot(u.GetLogin(), u.GetType()), Self: r.self.vouched(u.GetLogin()),
		Recorded: r.self.is(u) && !r.self.vouched(u.GetLogin()), Body: body, Created: created}
}

// order says whether a was written after b, and whether that is known.
// Times order comments; in one second (or without a time) ids order
// comments of one kind (GitHub's ids grow), and comments of two kinds,
// numbered apart, are not ordered at all.
func order(a, b *postedComment) (isAfter, known bool) {
	if !a.Created.Equal(b.Created) && !a.Created.IsZero() && !b.Created.IsZero() {
		return a.Created.After(b.Created), true
	}
	if a.Kind != b.Kind {
		return false, false
	}
	return a.ID > b.ID, true
}

// after says whether a is known to have been written after b.
func after(a, b *postedComment) bool {
	isAfter, known := order(a, b)
	return known && isAfter
}

// mayBeAfter says whether a may have been written after b: not known
// to come first.
func mayBeAfter(a, b *postedComment) bool {
	isAfter, known := order(a, b)
	return !known || isAfter
}

// refuseUnapproved explains why a plan will not run and what to do,
// given why its approval or the plan on record does not hold.
func (r *gate) refuseUnapproved(rec *Record, err error) error {
	var p *approvalProblem
	var changed *engine.ChangedError
	switch {
	case errors.As(err, &p):
		return userf("Plan `%s` will not run: its approval does not check out (%s). Nothing was run. "+
			"If plan `%s` is the plan you want, approve it: `%s approve %s`", rec.PlanID, p.msg, rec.PlanID, r.Cfg.Trigger, rec.PlanID)
	case errors.As(err, &changed):
		// Only where: the values are text anyone may have written.
		var where []string
		for _, c := range changed.Changes {
			where = append(where, c.Where())
		}
		what := strings.Join(where, "; ")
		if what == "" {
			what = fmt.Sprintf("it now holds plan `%s`", changed.Now)
		}
		return userf("Plan `%s` stopped: the stored plan changed after it was approved (tasks.csv changed after approval: %s). "+
			"Nothing from the changed plan was run. Start a new plan with `%s <requirement>`.", rec.PlanID, what, r.Cfg.Trigger)
	case errors.Is(err, engine.ErrPlanChanged):
		return userf("Plan `%s` will not run: the stored plan is not plan `%s` (%s). Nothing was run. "+
			"Start a new plan with `%s <requirement>`.", rec.PlanID, rec.PlanID, abbrev.OneLine(err.Error()), r.Cfg.Trigger)
	case errors.Is(err, engine.ErrForeignTaskCommit):
		return userf("Plan `%s` stopped: %s. No pull request was opened. Start a new plan with `%s <requirement>`.",
			rec.PlanID, render.Text(abbrev.OneLine(err.Error())), r.Cfg.Trigger)
	case errors.Is(err, engine.ErrForeignRunBranch):
		return userf("Plan `%s` will not run: %s. No pull request was opened.", rec.PlanID, render.Text(abbrev.OneLine(err.Error())))
	case errors.Is(err, engine.ErrNotApproved):
		return userf("Plan `%s` was never approved, so nothing was run. To run it: `%s approve %s`",
			rec.PlanID, r.Cfg.Trigger, rec.PlanID)
	}
	return err
}

// isRefusal says whether err means the plan on record may not run.
func isRefusal(err error) bool {
	var p *approvalProblem
	return errors.As(err, &p) || errors.Is(err, engine.ErrPlanChanged) || errors.Is(err, engine.ErrNotApproved) ||
		errors.Is(err, engine.ErrForeignTaskCommit) || errors.Is(err, engine.ErrForeignRunBranch)
}

// verifyRun checks, before anything of rec's plan runs, that its approval
// holds on GitHub and that the session is still the approved plan.
func (r *gate) verifyRun(ctx context.Context, rec *Record, eng *engine.Engine) error {
	if err := r.checkApproval(ctx, rec); err != nil {
		return err
	}
	return eng.CheckApproved(rec.SessionID, rec.PlanHash)
}

// planUnchanged checks that the session's tasks are still the plan whose
// hash the record (and the plan comment) carry, before an approval is
// acknowledged. It returns why not, for the approver, or an internal
// error. The engine checks the hash again before it runs anything.
func (r *gate) planUnchanged(ctx context.Context, rec *Record) (string, error) {
	eng, err := r.engines.bareEngine(rec.repo)
	if err != nil {
		return "", err
	}
	err = eng.PlanMatches(rec.SessionID, rec.PlanHash)
	if errors.Is(err, engine.ErrPlanChanged) {
		return fmt.Sprintf("the stored plan is not plan `%s`, the one that was posted (%v)", rec.PlanID, err), nil
	}
	if err != nil {
		return "", fmt.Errorf("checking plan %s against its hash: %w", rec.PlanID, err)
	}
	return "", nil
}

// approvable says why rec's plan cannot run now ("" when it can): its
// comment must still be planex's for exactly this plan, the base must not
// have moved under its scopes, and the session must still be the plan.
// listed is the job's listing of the remote (the base branch read from it
// when it was asked for).
func (r *gate) approvable(ctx context.Context, th thread, rec *Record, listed refListing) (string, []*github.IssueComment, error) {
	cs, err := r.GH.Approvals.ListComments(ctx, r.Cfg.Owner, r.Cfg.Repo, rec.Thread, time.Time{})
	if err != nil {
		return "", nil, fmt.Errorf("reading the comments of #%d: %w", rec.Thread, err)
	}
	i := slices.IndexFunc(cs, func(c *github.IssueComment) bool { return c.GetID() == rec.PlanCommentID })
	if i < 0 {
		return fmt.Sprintf("The comment of plan `%s` was deleted, so nobody can read what would run. Re-plan with `%s revise <feedback>`, or start a new plan with `%s <requirement>`.",
			rec.PlanID, r.Cfg.Trigger, r.Cfg.Trigger), nil, nil
	}
	c := cs[i]
	m, ok := render.ParsePlanMarker(c.GetBody())
	if !ok || m.ID != rec.PlanID || m.SHA256 != rec.PlanHash || !r.self.is(c.GetUser()) {
		return fmt.Sprintf("The plan comment no longer matches plan `%s`; re-plan with `%s revise <feedback>`.", rec.PlanID, r.Cfg.Trigger), nil, nil
	}
	// planex never edits its plan comment: one edited and changed back
	// (its hash matches again) may still have been read as edited, and
	// so may one whose hash a record of an older planex does not hold.
	edited := c.GetUpdatedAt().After(c.GetCreatedAt().Time)
	if edited || (rec.PlanBodyHash != "" && bodyHash(c.GetBody()) != rec.PlanBodyHash) {
		reason, err := r.repostPlan(ctx, th, rec, c.GetBody())
		return reason, nil, err
	}
	reason, err := r.baseMoved(ctx, rec, listed)
	if err == nil && reason == "" {
		reason, err = r.planUnchanged(ctx, rec)
	}
	if err != nil || reason == "" {
		return "", cs, err
	}
	return fmt.Sprintf("Plan `%s` cannot run: %s. Re-plan with `%s revise <feedback>`.", rec.PlanID, reason, r.Cfg.Trigger), nil, nil
}

// approvedBefore checks that rec's plan was approved, that the approval
// holds on GitHub, and that the session is still that plan.
func (r *gate) approvedBefore(ctx context.Context, rec *Record) error {
	eng, err := r.engines.bareEngine(rec.repo)
	if err != nil {
		return err
	}
	return r.verifyRun(ctx, rec, eng)
}

// baseMoved says why a plan no longer fits its base, or "" when it does:
// it does not fit when commits since the plan was made touched files in
// the scope of one of its tasks. The base's commit is listed's when the
// base was among what it asked for.
func (r *gate) baseMoved(ctx context.Context, rec *Record, listed refListing) (string, error) {
	head, ok := listed.tip("refs/heads/" + rec.BaseBranch)
	if !ok {
		var err error
		if head, err = r.Repo.RemoteRef(ctx, r.Cfg.Remote, "refs/heads/"+rec.BaseBranch); err != nil {
			return "", err
		}
	}
	if rec.FollowUp {
		// The pull request branch itself: our own commits are expected.
		return "", nil
	}
	if head == "" {
		return fmt.Sprintf("the base branch %s no longer exists", render.Code(rec.BaseBranch)), nil
	}
	if head == rec.Base {
		return "", nil
	}
	if err := r.Repo.EnsureCommit(ctx, r.Cfg.Remote, head); err != nil {
		return "", err
	}
	changed, err := r.Repo.ChangedPaths(ctx, rec.Base, head)
	if err != nil {
		return "", err
	}
	tasks, err := r.store.sessionTasks(rec)
	if err != nil {
		return "", err
	}
	var hits []string
	for _, p := range changed {
		for _, t := range tasks {
			if scope.Match(t.Scope, p) {
				hits = append(hits, fmt.Sprintf("%s (%s)", render.Code(p), t.ID))
				break
			}
		}
	}
	if len(hits) == 0 {
		return "", nil
	}
	if len(hits) > 10 {
		hits = append(hits[:10], fmt.Sprintf("and %d more", len(hits)-10))
	}
	// Paths are repository content (a contributor's file name, or one an
	// agent made in a merged pull request): a hand-made code span would
	// let a backtick in one end it.
	return fmt.Sprintf("%s moved since the plan was made and changed files in its tasks' scopes: %s", render.Code(rec.BaseBranch), strings.Join(hits, ", ")), nil
}
