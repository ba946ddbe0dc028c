// Package event reads the GitHub Actions event that started planex
// (GITHUB_EVENT_NAME and the JSON file at GITHUB_EVENT_PATH) into one
// domain type.
//
// Events that exist but must not act (an edited comment, an issue that
// was opened rather than labelled, ...) load successfully with Ignored set
// and a reason, so the caller can log why nothing happened. Which label
// plans an issue is configuration (the Action's label input), so the
// caller decides that from Label. Unreadable or malformed files
// are errors that name the file and the problem.
package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Event names planex handles.
const (
	IssueComment             = "issue_comment"
	Issues                   = "issues"
	WorkflowDispatch         = "workflow_dispatch"
	Schedule                 = "schedule"
	PullRequestReviewComment = "pull_request_review_comment"
	PullRequestReview        = "pull_request_review"
	WorkflowRun              = "workflow_run"
)

// TriggerLabel is the label whose addition to an issue plans it, unless
// configured otherwise.
const TriggerLabel = "planex"

// User is an account as the payload names it.
type User struct {
	Login string `json:"login"`
	Type  string `json:"type"` // "User", "Bot", "Organization"
}

// IsBot reports whether the account is a bot.
func (u User) IsBot() bool { return IsBot(u.Login, u.Type) }

// IsBot reports whether an account is a bot: type "Bot" in GitHub's
// payloads, or an app login ending in "[bot]".
func IsBot(login, userType string) bool {
	return strings.EqualFold(userType, "Bot") || strings.HasSuffix(strings.ToLower(login), "[bot]")
}

// CommentKind tells where a comment was written.
type CommentKind string

const (
	KindIssueComment  CommentKind = "issue_comment"  // conversation of an issue or pull request
	KindReviewComment CommentKind = "review_comment" // inline, on a line of a pull request's diff
	KindReview        CommentKind = "review"         // the body of a submitted pull request review
)

// Comment is the text that may carry a command.
type Comment struct {
	Kind      CommentKind
	ID        int64
	Body      string
	Author    User
	InReplyTo int64  // review comments: the thread's first comment
	Path      string // review comments: file
	Line      int    // review comments: line in the new file (0 when outdated)
	CommitID  string // review comments and reviews
	HTMLURL   string
}

// Issue is the issue (or pull request conversation) the event is about.
type Issue struct {
	Number int
	Title  string
	Body   string
	State  string
	Labels []string
	Author User
	IsPR   bool
}

// PullRequest is the pull request of a review (comment) event.
type PullRequest struct {
	Number   int
	Title    string
	Body     string
	State    string
	Draft    bool
	Author   User
	HeadRef  string
	HeadSHA  string
	HeadRepo string // "owner/name"; empty when the fork was deleted
	HeadFork bool
	BaseRef  string
	BaseRepo string
}

// FromFork reports whether the pull request's head lives outside the base
// repository; such code is never checked out or executed.
func (p *PullRequest) FromFork() bool {
	return p.HeadRepo == "" || p.HeadFork || !strings.EqualFold(p.HeadRepo, p.BaseRepo)
}

// Inputs are workflow_dispatch inputs planex reads.
type Inputs struct {
	Issue       int    // "issue"; 0 when not given
	Requirement string // "requirement"
	AutoApprove bool   // "auto-approve"
	// Raw has every input as a string.
	Raw map[string]string
}

// Run is the workflow run of a workflow_run event: another workflow
// (the repository's CI) that completed.
type Run struct {
	ID         int64
	Attempt    int
	Name       string // the workflow's name
	Path       string // its file, .github/workflows/…
	Event      string // what started it: push, pull_request, …
	Status     string
	Conclusion string // success, failure, cancelled, …
	HeadBranch string
	HeadSHA    string
	HeadRepo   string // "owner/name"; empty when unknown
	HeadFork   bool
	HTMLURL    string
	// Actor started the run's first attempt; TriggeringActor started
	// this attempt (a re-run's is whoever re-ran it). Empty when the
	// payload does not say.
	Actor           User
	TriggeringActor User
	// PullRequests are the run's pull requests in this repository
	// (GitHub lists none for a fork's).
	PullRequests []int
}

// FromFork reports whether the run's code came from another repository.
func (r *Run) FromFork(repo string) bool {
	return r.HeadFork || (r.HeadRepo != "" && !strings.EqualFold(r.HeadRepo, repo))
}

// Event is what started this run.
type Event struct {
	Name   string // GITHUB_EVENT_NAME
	Action string // payload "action", when the event has one

	// Ignored events must not act; IgnoreReason says why.
	Ignored      bool
	IgnoreReason string

	Owner         string
	Repo          string
	DefaultBranch string
	Private       bool

	// Number is the issue or pull request concerned (0 for schedule, and
	// for workflow_dispatch without an issue input).
	Number int
	IsPR   bool

	Sender  User
	Comment *Comment     // issue_comment, pull_request_review_comment, pull_request_review (the review body)
	Issue   *Issue       // issue_comment, issues
	PR      *PullRequest // pull_request_review_comment, pull_request_review
	Label   string       // issues: the label added
	Inputs  Inputs       // workflow_dispatch
	Ref     string       // workflow_dispatch: the ref the workflow ran on
	Cron    string       // schedule: the cron expression
	Run     *Run         // workflow_run
}

// FullName is "owner/repo".
func (e *Event) FullName() string { return e.Owner + "/" + e.Repo }

// SetRepository fills Owner and Repo from "owner/name" (GITHUB_REPOSITORY)
// when the payload did not carry a repository, as for schedule.
func (e *Event) SetRepository(full string) error {
	owner, name, ok := strings.Cut(full, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("repository %q is not owner/name", full)
	}
	if e.Owner == "" {
		e.Owner, e.Repo = owner, name
	}
	return nil
}

// Load reads the event file at path for event name.
func Load(name, path string) (*Event, error) {
	if path == "" {
		return nil, fmt.Errorf("event %q: no event file (GITHUB_EVENT_PATH is empty)", name)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading event file: %w", err)
	}
	e, err := Parse(name, data)
	if err != nil {
		return nil, fmt.Errorf("event file %s: %w", path, err)
	}
	return e, nil
}

// payload mirrors the parts of GitHub's webhook payloads planex reads.
type payload struct {
	Action     *string                `json:"action"`
	Repository *repoJSON              `json:"repository"`
	Sender     *User                  `json:"sender"`
	Comment    *commentJSON           `json:"comment"`
	Issue      *issueJSON             `json:"issue"`
	PR         *prJSON                `json:"pull_request"`
	Review     *reviewJSON            `json:"review"`
	Label      *struct{ Name string } `json:"label"`
	Inputs     map[string]any         `json:"inputs"`
	Ref        string                 `json:"ref"`
	Schedule   string                 `json:"schedule"`
	Run        *runJSON               `json:"workflow_run"`
	Workflow   json.RawMessage        `json:"workflow"` // an object in workflow_run, a path in workflow_dispatch
}

type runJSON struct {
	ID           int64     `json:"id"`
	Attempt      int       `json:"run_attempt"`
	Name         string    `json:"name"`
	Path         string    `json:"path"`
	Event        string    `json:"event"`
	Status       string    `json:"status"`
	Conclusion   *string   `json:"conclusion"`
	HeadBranch   string    `json:"head_branch"`
	HeadSHA      string    `json:"head_sha"`
	HTMLURL      string    `json:"html_url"`
	HeadRepo     *repoJSON `json:"head_repository"`
	Actor        *User     `json:"actor"`
	Triggering   *User     `json:"triggering_actor"`
	PullRequests []struct {
		Number int `json:"number"`
	} `json:"pull_requests"`
}

type repoJSON struct {
	Name          string `json:"name"`
	FullName      string `json:"full_name"`
	Owner         User   `json:"owner"`
	DefaultBranch string `json:"default_branch"`
	Private       bool   `json:"private"`
	Fork          bool   `json:"fork"`
}

type commentJSON struct {
	ID        int64  `json:"id"`
	Body      string `json:"body"`
	User      *User  `json:"user"`
	InReplyTo int64  `json:"in_reply_to_id"`
	Path      string `json:"path"`
	Line      int    `json:"line"`
	CommitID  string `json:"commit_id"`
	HTMLURL   string `json:"html_url"`
}

type issueJSON struct {
	Number      int                     `json:"number"`
	Title       string                  `json:"title"`
	Body        *string                 `json:"body"`
	State       string                  `json:"state"`
	User        *User                   `json:"user"`
	Labels      []struct{ Name string } `json:"labels"`
	PullRequest json.RawMessage         `json:"pull_request"`
}

type prJSON struct {
	Number int     `json:"number"`
	Title  string  `json:"title"`
	Body   *string `json:"body"`
	State  string  `json:"state"`
	Draft  bool    `json:"draft"`
	User   *User   `json:"user"`
	Head   struct {
		Ref  string    `json:"ref"`
		SHA  string    `json:"sha"`
		Repo *repoJSON `json:"repo"`
	} `json:"head"`
	Base struct {
		Ref  string    `json:"ref"`
		Repo *repoJSON `json:"repo"`
	} `json:"base"`
}

type reviewJSON struct {
	ID       int64   `json:"id"`
	Body     *string `json:"body"`
	State    string  `json:"state"`
	User     *User   `json:"user"`
	CommitID string  `json:"commit_id"`
	HTMLURL  string  `json:"html_url"`
}

// Parse decodes a payload for event name.
func Parse(name string, data []byte) (*Event, error) {
	var p payload
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s payload is not valid JSON: %w", name, err)
	}
	e := &Event{Name: name}
	if p.Action != nil {
		e.Action = *p.Action
	}
	if p.Sender != nil {
		e.Sender = *p.Sender
	}
	if p.Repository != nil {
		owner, repo, ok := strings.Cut(p.Repository.FullName, "/")
		if !ok {
			owner, repo = p.Repository.Owner.Login, p.Repository.Name
		}
		if owner == "" || repo == "" {
			return nil, fmt.Errorf("%s payload: repository has no full_name", name)
		}
		e.Owner, e.Repo = owner, repo
		e.DefaultBranch = p.Repository.DefaultBranch
		e.Private = p.Repository.Private
	}

	var err error
	switch name {
	case IssueComment:
		err = e.fromIssueComment(&p)
	case Issues:
		err = e.fromIssues(&p)
	case WorkflowDispatch:
		err = e.fromDispatch(&p)
	case Schedule:
		e.Cron = p.Schedule
	case PullRequestReviewComment:
		err = e.fromReviewComment(&p)
	case PullRequestReview:
		err = e.fromReview(&p)
	case WorkflowRun:
		err = e.fromWorkflowRun(&p)
	case "":
		return nil, errors.New("no event name (GITHUB_EVENT_NAME is empty)")
	default:
		// A workflow may run planex on more events than it handles; those
		// end quietly, and the step stays green.
		e.ignore("planex does not handle the %s event (it handles issue_comment, issues, workflow_dispatch, schedule, pull_request_review_comment, pull_request_review and workflow_run)", name)
		return e, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s payload: %w", name, err)
	}
	if e.Owner == "" && name != Schedule {
		return nil, fmt.Errorf("%s payload has no repository", name)
	}
	return e, nil
}

func (e *Event) ignore(format string, args ...any) {
	e.Ignored = true
	e.IgnoreReason = fmt.Sprintf(format, args...)
}

func userOf(u *User) User {
	if u == nil {
		return User{Login: "ghost", Type: "User"}
	}
	return *u
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (e *Event) fromIssueComment(p *payload) error {
	if p.Issue == nil {
		return errors.New("no issue object")
	}
	if p.Comment == nil {
		return errors.New("no comment object")
	}
	e.setIssue(p.Issue)
	e.Comment = &Comment{Kind: KindIssueComment, ID: p.Comment.ID, Body: p.Comment.Body, Author: userOf(p.Comment.User), HTMLURL: p.Comment.HTMLURL}
	if p.Comment.ID == 0 {
		return errors.New("comment has no id")
	}
	if e.Action != "created" {
		e.ignore("comment was %s; only new comments are read as commands", e.Action)
	}
	return nil
}

func (e *Event) setIssue(is *issueJSON) {
	var labels []string
	for _, l := range is.Labels {
		labels = append(labels, l.Name)
	}
	isPR := len(is.PullRequest) > 0 && string(is.PullRequest) != "null"
	e.Issue = &Issue{Number: is.Number, Title: is.Title, Body: str(is.Body), State: is.State,
		Labels: labels, Author: userOf(is.User), IsPR: isPR}
	e.Number, e.IsPR = is.Number, isPR
}

func (e *Event) fromIssues(p *payload) error {
	if p.Issue == nil {
		return errors.New("no issue object")
	}
	e.setIssue(p.Issue)
	if p.Label != nil {
		e.Label = p.Label.Name
	}
	if e.Action != "labeled" {
		e.ignore("issue was %s; only adding a label plans an issue", e.Action)
	}
	return nil
}

func (e *Event) fromDispatch(p *payload) error {
	e.Ref = p.Ref
	e.Inputs.Raw = map[string]string{}
	for k, v := range p.Inputs {
		switch t := v.(type) {
		case string:
			e.Inputs.Raw[k] = t
		case bool:
			e.Inputs.Raw[k] = strconv.FormatBool(t)
		case float64:
			e.Inputs.Raw[k] = strconv.FormatFloat(t, 'f', -1, 64)
		case nil:
		default:
			return fmt.Errorf("input %q has unexpected type %T", k, v)
		}
	}
	if s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(e.Inputs.Raw["issue"]), "#")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return fmt.Errorf("input \"issue\" must be an issue number, got %q", e.Inputs.Raw["issue"])
		}
		e.Inputs.Issue, e.Number = n, n
	}
	e.Inputs.Requirement = strings.TrimSpace(e.Inputs.Raw["requirement"])
	if s := strings.TrimSpace(e.Inputs.Raw["auto-approve"]); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("input \"auto-approve\" must be true or false, got %q", s)
		}
		e.Inputs.AutoApprove = b
	}
	return nil
}

func (e *Event) setPR(pr *prJSON) error {
	if pr == nil {
		return errors.New("no pull_request object")
	}
	out := &PullRequest{Number: pr.Number, Title: pr.Title, Body: str(pr.Body), State: pr.State, Draft: pr.Draft,
		Author: userOf(pr.User), HeadRef: pr.Head.Ref, HeadSHA: pr.Head.SHA, BaseRef: pr.Base.Ref}
	if pr.Head.Repo != nil {
		out.HeadRepo, out.HeadFork = pr.Head.Repo.FullName, pr.Head.Repo.Fork
	}
	if pr.Base.Repo != nil {
		out.BaseRepo = pr.Base.Repo.FullName
	} else {
		out.BaseRepo = e.FullName()
	}
	e.PR, e.Number, e.IsPR = out, pr.Number, true
	return nil
}

func (e *Event) fromReviewComment(p *payload) error {
	if err := e.setPR(p.PR); err != nil {
		return err
	}
	if p.Comment == nil {
		return errors.New("no comment object")
	}
	c := p.Comment
	e.Comment = &Comment{Kind: KindReviewComment, ID: c.ID, Body: c.Body, Author: userOf(c.User), InReplyTo: c.InReplyTo,
		Path: c.Path, Line: c.Line, CommitID: c.CommitID, HTMLURL: c.HTMLURL}
	if e.Action != "created" {
		e.ignore("review comment was %s; only new comments are read as commands", e.Action)
	}
	return nil
}

func (e *Event) fromReview(p *payload) error {
	if err := e.setPR(p.PR); err != nil {
		return err
	}
	if p.Review == nil {
		return errors.New("no review object")
	}
	r := p.Review
	e.Comment = &Comment{Kind: KindReview, ID: r.ID, Body: str(r.Body), Author: userOf(r.User), CommitID: r.CommitID, HTMLURL: r.HTMLURL}
	switch {
	case e.Action != "submitted":
		e.ignore("review was %s; only submitted reviews are read as commands", e.Action)
	case strings.TrimSpace(e.Comment.Body) == "":
		e.ignore("review has no body")
	}
	return nil
}

func (e *Event) fromWorkflowRun(p *payload) error {
	w := p.Run
	if w == nil {
		return errors.New("no workflow_run object")
	}
	if w.ID == 0 {
		return errors.New("workflow_run has no id")
	}
	run := &Run{ID: w.ID, Attempt: w.Attempt, Name: w.Name, Path: w.Path, Event: w.Event, Status: w.Status,
		Conclusion: str(w.Conclusion), HeadBranch: w.HeadBranch, HeadSHA: w.HeadSHA, HTMLURL: w.HTMLURL}
	if w.Actor != nil {
		run.Actor = *w.Actor
	}
	if w.Triggering != nil {
		run.TriggeringActor = *w.Triggering
	}
	var wf struct{ Path string }
	if run.Path == "" && json.Unmarshal(p.Workflow, &wf) == nil {
		run.Path = wf.Path
	}
	if w.HeadRepo != nil {
		run.HeadRepo, run.HeadFork = w.HeadRepo.FullName, w.HeadRepo.Fork
	}
	for _, pr := range w.PullRequests {
		run.PullRequests = append(run.PullRequests, pr.Number)
	}
	e.Run = run
	if len(run.PullRequests) > 0 {
		e.Number, e.IsPR = run.PullRequests[0], true
	}
	switch {
	case e.Action != "completed":
		e.ignore("workflow run %d was %s; only completed runs are read", run.ID, e.Action)
	case run.Conclusion != "failure":
		e.ignore("workflow run %d ended with %q; only failed runs are fixed", run.ID, run.Conclusion)
	case run.FromFork(e.FullName()):
		e.ignore("workflow run %d ran code from %s, a fork; planex never works on it", run.ID, run.HeadRepo)
	}
	return nil
}
