package ghfake

import (
	"sort"
	"strings"
	"time"
)

// User is an account known to the fake.
type User struct {
	Login string
	ID    int64
	Type  string // "User" or "Bot"
}

// Repo describes a repository to seed with AddRepo.
type Repo struct {
	DefaultBranch string // "main" when empty
	Private       bool
	Fork          bool
	// ActionsCannotCreatePRs mirrors the repository setting "Allow GitHub
	// Actions to create and approve pull requests" being off: bots get 403
	// when they open a pull request and 422 when they approve one.
	ActionsCannotCreatePRs bool
}

// Issue is a snapshot of an issue or pull request (IsPR) in the fake.
type Issue struct {
	Number    int
	ID        int64
	Title     string
	Body      string
	State     string // "open" or "closed"
	Author    string
	Labels    []string
	IsPR      bool
	Locked    bool
	Reactions []Reaction
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Comment is a snapshot of an issue (or pull request conversation) comment.
type Comment struct {
	ID        int64
	Issue     int
	Author    string
	Body      string
	Reactions []Reaction
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Reaction is one emoji reaction.
type Reaction struct {
	ID      int64
	User    string
	Content string // "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"
}

// PullRequest is a snapshot of a pull request; seed one with AddPullRequest.
type PullRequest struct {
	Number             int
	Title              string
	Body               string
	State              string // "open" or "closed"
	Author             string
	Head               string // branch name
	HeadRepo           string // "owner/name"; the base repository when empty
	HeadSHA            string
	Base               string // branch name; the default branch when empty
	Draft              bool
	Labels             []string
	RequestedReviewers []string
	// Files and Diff back GET .../pulls/{n}/files and the diff media type.
	// Review comments are checked against Files' patches when Files is set.
	Files []PRFile
	Diff  string
}

// PRFile is one changed file of a pull request.
type PRFile struct {
	Filename  string
	Status    string // "added", "modified", "removed", "renamed"
	Additions int
	Deletions int
	Patch     string // unified diff hunks, starting at "@@"
	// PreviousFilename is a renamed or copied file's old name.
	PreviousFilename string
}

// Review is a snapshot of a pull request review.
type Review struct {
	ID       int64
	PR       int
	Author   string
	Body     string
	State    string // PENDING, COMMENTED, APPROVED, CHANGES_REQUESTED
	CommitID string
}

// ReviewComment is a snapshot of an inline pull request review comment.
type ReviewComment struct {
	ID        int64
	PR        int
	ReviewID  int64
	InReplyTo int64
	Author    string
	Path      string
	Line      int
	StartLine int
	Side      string
	Position  int
	Body      string
	Reactions []Reaction
	CreatedAt time.Time
}

// WorkflowRun is a GitHub Actions workflow run the fake reports through
// GET /repos/{owner}/{repo}/actions/runs (and /{run_id}, /{run_id}/jobs,
// and each job's log); seed one with SetWorkflowRun.
type WorkflowRun struct {
	ID         int64
	Attempt    int    // run_attempt; 1 when zero
	Status     string // queued, in_progress, completed, …
	Conclusion string // success, failure, cancelled, … once completed
	Name       string // the workflow's name; "planex" when empty
	Path       string // the workflow file; from Name when empty
	Event      string // what started it; "issue_comment" when empty
	HeadBranch string // the default branch when empty
	HeadSHA    string
	// HeadRepo is "owner/name" of the head repository; the repository
	// itself when empty (a fork's name makes it a fork's run).
	HeadRepo string
	// PullRequests are the numbers of the run's pull requests (GitHub
	// lists only pull requests from the repository itself).
	PullRequests []int
	Jobs         []WorkflowJob
	Created      time.Time // the fake's clock when zero; newest first in lists
	// Actor started the run and TriggeringActor its latest attempt
	// (logins); DefaultActor when empty, as for a push with the job's
	// token.
	Actor, TriggeringActor string
}

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string // as received, without the /api/v3 prefix
	Route  string // "METHOD /template" when the description knows it
	Query  string
	Body   string
	Actor  string
	Status int
	// Lost is set when the request was served but its answer was
	// replaced by an injected fault (Fault.Applied).
	Lost bool
}

// Fault is a scripted answer, see Fake.InjectFault.
//
// By default the request is not served: GitHub refused it (a rate limit,
// a 5xx from the front end). With Applied it is served first, its writes
// take effect, and then the answer is lost on the way back: replaced by
// Status (a 502 from a proxy), by a closed connection (Disconnect) or by
// no answer at all until the client gives up (Stall). Applied with
// Status 0 and neither of those delivers the real answer with Header
// added, for example rate-limit headers on a success.
type Fault struct {
	Status int
	Header map[string]string
	Body   string // JSON; {"message": <status text>} when empty

	Applied    bool
	Disconnect bool
	Stall      bool
}

// Internal state.

type repoState struct {
	owner, name   string
	id            int64
	defaultBranch string
	private, fork bool
	noActionsPRs  bool
	perms         map[string]string // login -> role name
	issues        map[int]*issueState
	nextNumber    int
	comments      map[int64]*commentState
	labels        map[string]*labelState // by lower-case name
	reviews       map[int64]*reviewState
	reviewCmts    map[int64]*reviewCommentState
	files         map[string]map[string][]byte // ref -> path -> content
	runs          map[int64]WorkflowRun
	// gitDir backs the Git Data API (SetGitDir); verified holds what
	// GitHub says of the signatures of commits made through it.
	gitDir   string
	verified map[string]CommitVerification
	// dispatches are the workflow_dispatch requests accepted, with the
	// ref each would run resolved (Dispatches).
	dispatches []Dispatch
}

// Dispatch is one accepted workflow_dispatch request: the workflow file,
// the ref as asked and the full ref GitHub would run it on (a short name
// resolved tags first, as git does: refs/tags/<name> when the repository
// has such a tag in SetFile's contents, refs/heads/<name> otherwise).
type Dispatch struct {
	Workflow, AskedRef, Ref string
	Inputs                  map[string]string
}

func (r *repoState) fullName() string { return r.owner + "/" + r.name }

type issueState struct {
	id        int64
	number    int
	title     string
	body      string
	state     string
	author    string
	labels    []string // names in the order added
	locked    bool
	reactions []*reactionState
	created   time.Time
	updated   time.Time
	closed    time.Time
	pr        *prState
	// events are the issue's labeled and unlabeled events, oldest first.
	events []*issueEventState
}

// issueEventState is one entry of an issue's events: who added or
// removed which label, when.
type issueEventState struct {
	id      int64
	event   string // "labeled" or "unlabeled"
	label   string
	actor   string
	created time.Time
}

type prState struct {
	head, headRepo, headSHA, base string
	draft                         bool
	merged                        bool
	maintainerCanModify           bool
	requested                     []string
	files                         []PRFile
	diff                          string
}

type commentState struct {
	id        int64
	issue     int
	author    string
	body      string
	created   time.Time
	updated   time.Time
	reactions []*reactionState
}

type reactionState struct {
	id      int64
	user    string
	content string
	created time.Time
}

type labelState struct {
	id          int64
	name        string
	color       string
	description string
}

type reviewState struct {
	id        int64
	pr        int
	author    string
	body      string
	state     string
	commitID  string
	submitted time.Time
}

type reviewCommentState struct {
	id        int64
	pr        int
	reviewID  int64
	inReplyTo int64
	author    string
	path      string
	line      int
	startLine int
	side      string
	position  int
	body      string
	commitID  string
	diffHunk  string
	created   time.Time
	updated   time.Time
	reactions []*reactionState
}

func (i *issueState) hasLabel(name string) bool {
	for _, l := range i.labels {
		if strings.EqualFold(l, name) {
			return true
		}
	}
	return false
}

func snapshotReactions(in []*reactionState) []Reaction {
	out := make([]Reaction, 0, len(in))
	for _, r := range in {
		out = append(out, Reaction{ID: r.id, User: r.user, Content: r.content})
	}
	return out
}

func (i *issueState) snapshot() Issue {
	return Issue{
		Number: i.number, ID: i.id, Title: i.title, Body: i.body, State: i.state,
		Author: i.author, Labels: append([]string(nil), i.labels...), IsPR: i.pr != nil,
		Locked: i.locked, Reactions: snapshotReactions(i.reactions),
		CreatedAt: i.created, UpdatedAt: i.updated,
	}
}

func (c *commentState) snapshot() Comment {
	return Comment{ID: c.id, Issue: c.issue, Author: c.author, Body: c.body,
		Reactions: snapshotReactions(c.reactions), CreatedAt: c.created, UpdatedAt: c.updated}
}

func sortedComments(m map[int64]*commentState, keep func(*commentState) bool) []*commentState {
	var out []*commentState
	for _, c := range m {
		if keep(c) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].id < out[b].id })
	return out
}

// permissionOf maps a role name to the legacy permission the collaborator
// API reports: maintain counts as write and triage as read.
func permissionOf(role string) string {
	switch role {
	case "admin":
		return "admin"
	case "maintain", "write":
		return "write"
	case "triage", "read":
		return "read"
	}
	return "none"
}
