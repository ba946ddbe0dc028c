// Package gh is planex's GitHub client: a go-github client with the
// transport a bot needs (token auth, GitHub Enterprise Server by URL alone,
// a deadline per attempt, bounded waits for primary and secondary rate
// limits, retries of 5xx, lost answers and post-create 404s with bounded
// backoff) and small, named methods for the calls planex makes. Writes are
// made one at a time, and creates are idempotent: after a lost answer the
// client looks for what it created before creating it again. Errors name what was being done and, when GitHub refuses for
// lack of permission, what to grant (see PermissionError).
//
// Consumers should declare small interfaces with only the methods they use
// and let *Client satisfy them, so they can be tested against ghfake or a
// stub.
package gh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofri/go-github-ratelimit/v2/github_ratelimit"
	"github.com/gofri/go-github-ratelimit/v2/github_ratelimit/github_secondary_ratelimit"
	"github.com/google/go-github/v60/github"
	"golang.org/x/oauth2"
)

// DefaultAPIURL is github.com's REST root.
const DefaultAPIURL = "https://api.github.com"

// Options configures NewClient.
type Options struct {
	// Token authenticates every request (GITHUB_TOKEN or a PAT). Empty means
	// anonymous.
	Token string
	// APIURL is the REST root, GITHUB_API_URL in Actions:
	// https://api.github.com or https://HOST/api/v3 on GitHub Enterprise
	// Server. Empty means github.com.
	APIURL string
	// ServerURL is the web root, GITHUB_SERVER_URL (https://github.com or
	// https://HOST). Used for links and the uploads URL.
	ServerURL string
	// UserAgent is sent with every request ("planex" when empty).
	UserAgent string
	// HTTPClient supplies the base transport (http.DefaultTransport when nil).
	HTTPClient *http.Client
	// Retry bounds retries; zero values take defaults.
	Retry RetryPolicy
	// Logger receives retry and rate-limit notices (slog.Default when nil).
	Logger *slog.Logger
	// Publish filters every text planex publishes through the client:
	// the titles and bodies of issues, comments, pull requests and
	// reviews (the Action redacts secret values with it). Nil publishes
	// text as it is.
	Publish func(string) string
}

// Client talks to one GitHub (github.com or an Enterprise Server).
type Client struct {
	gh        *github.Client
	serverURL string
	log       *slog.Logger
	writeMu   sync.Mutex
	policy    RetryPolicy
	retry     *retryTransport
	// plain fetches URLs the API redirects to (job logs): no token, so
	// it never reaches storage outside the API.
	plain *http.Client
	// publish is Options.Publish.
	publish func(string) string
	// bound bounds every listing (pages.go).
	bound listBound
}

// out is text as planex publishes it (Options.Publish).
func (c *Client) out(s string) string {
	if c.publish == nil {
		return s
	}
	return c.publish(s)
}

// NewClient builds a client. Only the URLs decide between github.com and
// GitHub Enterprise Server.
func NewClient(ctx context.Context, opts Options) (*Client, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	apiURL := strings.TrimSpace(opts.APIURL)
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	base, err := url.Parse(apiURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("github API URL %q is not an absolute URL", apiURL)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	serverURL := strings.TrimSuffix(strings.TrimSpace(opts.ServerURL), "/")
	if serverURL == "" {
		serverURL = "https://github.com"
		if base.Host != "api.github.com" {
			serverURL = base.Scheme + "://" + base.Host
		}
	}
	upload, err := url.Parse(serverURL + "/api/uploads/")
	if err != nil {
		return nil, fmt.Errorf("github server URL %q: %w", serverURL, err)
	}
	if base.Host == "api.github.com" {
		upload, _ = url.Parse("https://uploads.github.com/")
	}

	transport := http.DefaultTransport
	if opts.HTTPClient != nil && opts.HTTPClient.Transport != nil {
		transport = opts.HTTPClient.Transport
	}
	// Bottom to top: fresh body per attempt, a deadline per attempt, auth,
	// secondary rate limits (a shared cool-down for concurrent requests),
	// retries and the primary rate limit. go-github's own primary limiter
	// is not used: it fails every request until the reset instead of
	// waiting for it.
	policy := opts.Retry.withDefaults()
	var rt http.RoundTripper = rewindTransport{base: transport}
	rt = attemptTimeout{base: rt, d: policy.AttemptTimeout}
	if opts.Token != "" {
		rt = &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: opts.Token}), Base: rt}
	}
	rt = github_ratelimit.NewSecondaryLimiter(rt,
		github_secondary_ratelimit.WithSingleSleepLimit(policy.MaxDelay, func(cc *github_secondary_ratelimit.CallbackContext) {
			log.WarnContext(ctx, "github: secondary rate limit wait too long; not waiting", "reset", cc.ResetTime)
		}),
		github_secondary_ratelimit.WithTotalSleepLimit(policy.MaxElapsed, func(cc *github_secondary_ratelimit.CallbackContext) {
			log.WarnContext(ctx, "github: secondary rate limit sleep budget spent", "total", cc.TotalSleepTime)
		}),
		github_secondary_ratelimit.WithLimitDetectedCallback(func(cc *github_secondary_ratelimit.CallbackContext) {
			log.InfoContext(ctx, "github: secondary rate limit; waiting", "until", cc.ResetTime)
		}),
	)
	retry := &retryTransport{base: rt, policy: policy, log: log, sleep: sleepCtx}
	rt = retry

	httpClient := &http.Client{Transport: rt}
	if opts.HTTPClient != nil {
		httpClient.Timeout = opts.HTTPClient.Timeout
		httpClient.Jar = opts.HTTPClient.Jar
	}
	gc := github.NewClient(httpClient)
	gc.BaseURL = base
	gc.UploadURL = upload
	gc.UserAgent = opts.UserAgent
	if gc.UserAgent == "" {
		gc.UserAgent = "planex"
	}
	plain := &http.Client{Transport: attemptTimeout{base: transport, d: policy.AttemptTimeout}}
	return &Client{gh: gc, serverURL: serverURL, log: log, policy: policy, retry: retry, plain: plain, publish: opts.Publish, bound: defaultListBound()}, nil
}

// GitHub exposes the underlying go-github client for calls without a
// helper here. Writes made through it are not serialised.
func (c *Client) GitHub() *github.Client { return c.gh }

// ServerURL is the web root (https://github.com or the Enterprise host).
func (c *Client) ServerURL() string { return c.serverURL }

// write serialises mutating calls.
func (c *Client) write(fn func() error) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return fn()
}

// ---- issues and comments ----

// GetIssue returns an issue (or a pull request's issue view).
func (c *Client) GetIssue(ctx context.Context, owner, repo string, number int) (*github.Issue, error) {
	is, _, err := c.gh.Issues.Get(ctx, owner, repo, number)
	return is, classify(fmt.Sprintf("getting issue %s/%s#%d", owner, repo, number), "issues: read", err)
}

// ListIssuesByLabel returns the issues (not pull requests) carrying label
// in state ("open", "closed" or "all"; "open" when empty), oldest first,
// without their bodies: an issue form may label what anyone opens, so
// the list holds whatever they wrote; GetIssue reads the one to act on.
func (c *Client) ListIssuesByLabel(ctx context.Context, owner, repo, label, state string) ([]*github.Issue, error) {
	if state == "" {
		state = "open"
	}
	opt := &github.IssueListByRepoOptions{Labels: []string{label}, State: state, Sort: "created", Direction: "asc"}
	var out []*github.Issue
	held := 0
	var over error
	err := eachPage(c.bound, func(lo github.ListOptions) ([]*github.Issue, *github.Response, error) {
		opt.ListOptions = lo
		return c.gh.Issues.ListByRepo(ctx, owner, repo, opt)
	}, func(is *github.Issue) bool {
		if is.IsPullRequest() {
			return true
		}
		is.Body = nil
		if held += len(is.GetTitle()); held > c.bound.text {
			over = tooLong(c.bound)
			return false
		}
		out = append(out, is)
		return true
	})
	if err == nil {
		err = over
	}
	if err != nil {
		return nil, classify(fmt.Sprintf("listing %s issues of %s/%s labelled %q", state, owner, repo, label), "issues: read", err)
	}
	return out, nil
}

// RecentIssues returns up to the 100 newest issues and pull requests
// created in the repository, newest first.
func (c *Client) RecentIssues(ctx context.Context, owner, repo string) ([]*github.Issue, error) {
	page, _, err := c.gh.Issues.ListByRepo(ctx, owner, repo, &github.IssueListByRepoOptions{State: "all", Sort: "created", Direction: "desc",
		ListOptions: github.ListOptions{PerPage: 100}})
	return page, classify(fmt.Sprintf("listing the newest issues of %s/%s", owner, repo), "issues: read", err)
}

// CreateIssue opens an issue.
func (c *Client) CreateIssue(ctx context.Context, owner, repo, title, body string, labels ...string) (*github.Issue, error) {
	title, body = c.out(title), c.out(body)
	var out *github.Issue
	marked, marker := withMarker(body)
	req := &github.IssueRequest{Title: github.String(title), Body: github.String(marked)}
	if len(labels) > 0 {
		req.Labels = &labels
	}
	since := time.Now().Add(-lookback)
	err := c.createOnce(ctx, "issue", func() error {
		var err error
		out, _, err = c.gh.Issues.Create(ctx, owner, repo, req)
		return err
	}, func() (bool, error) {
		opt := &github.IssueListByRepoOptions{State: "all", Since: since, Sort: "created", Direction: "desc"}
		found := false
		err := eachPage(c.bound, func(lo github.ListOptions) ([]*github.Issue, *github.Response, error) {
			opt.ListOptions = lo
			return c.gh.Issues.ListByRepo(ctx, owner, repo, opt)
		}, func(is *github.Issue) bool {
			if !is.IsPullRequest() && is.GetTitle() == title && sent(is.GetBody(), marked, marker) {
				out, found = is, true
			}
			return !found
		})
		return found, err
	})
	return out, classify(fmt.Sprintf("opening an issue in %s/%s", owner, repo), "issues: write", err)
}

// CreateComment posts a comment on an issue or pull request.
// A comment whose answer was lost is looked for on the thread before it
// is sent again, so it is never posted twice.
func (c *Client) CreateComment(ctx context.Context, owner, repo string, number int, body string) (*github.IssueComment, error) {
	body = c.out(body)
	var out *github.IssueComment
	marked, marker := withMarker(body)
	since := time.Now().Add(-lookback)
	err := c.createOnce(ctx, "comment", func() error {
		var err error
		out, _, err = c.gh.Issues.CreateComment(ctx, owner, repo, number, &github.IssueComment{Body: github.String(marked)})
		return err
	}, func() (bool, error) {
		cs, err := c.ListComments(ctx, owner, repo, number, since)
		if err != nil {
			return false, err
		}
		for i := len(cs) - 1; i >= 0; i-- {
			if sent(cs[i].GetBody(), marked, marker) {
				out = cs[i]
				return true, nil
			}
		}
		return false, nil
	})
	return out, classify(fmt.Sprintf("commenting on %s/%s#%d", owner, repo, number), "issues: write (pull-requests: write on a pull request)", err)
}

// EditComment replaces a comment's body.
func (c *Client) EditComment(ctx context.Context, owner, repo string, commentID int64, body string) (*github.IssueComment, error) {
	body = c.out(body)
	var out *github.IssueComment
	err := c.write(func() error {
		var err error
		out, _, err = c.gh.Issues.EditComment(ctx, owner, repo, commentID, &github.IssueComment{Body: github.String(body)})
		return err
	})
	return out, classify(fmt.Sprintf("editing comment %d in %s/%s", commentID, owner, repo), "issues: write (pull-requests: write on a pull request)", err)
}

// GetComment returns one issue comment.
func (c *Client) GetComment(ctx context.Context, owner, repo string, commentID int64) (*github.IssueComment, error) {
	out, _, err := c.gh.Issues.GetComment(ctx, owner, repo, commentID)
	return out, classify(fmt.Sprintf("getting comment %d in %s/%s", commentID, owner, repo), "issues: read", err)
}

// DeleteComment deletes an issue comment.
func (c *Client) DeleteComment(ctx context.Context, owner, repo string, commentID int64) error {
	err := c.write(func() error {
		_, err := c.gh.Issues.DeleteComment(ctx, owner, repo, commentID)
		return err
	})
	return classify(fmt.Sprintf("deleting comment %d in %s/%s", commentID, owner, repo), "issues: write", err)
}

// ListComments returns all comments of an issue or pull request in
// creation order; with a non-zero since, only those updated at or after it.
func (c *Client) ListComments(ctx context.Context, owner, repo string, number int, since time.Time) ([]*github.IssueComment, error) {
	return listComments(ctx, c, c.bound, owner, repo, number, since)
}

// ListCommentsUpTo returns the first comments of an issue or pull
// request in creation order, as ListComments does, but fails with
// ErrListTooLong once the thread holds more than maxItems (read in
// pages of 100): a look that anyone's comment starts costs a few
// requests, however long the thread.
func (c *Client) ListCommentsUpTo(ctx context.Context, owner, repo string, number, maxItems int) ([]*github.IssueComment, error) {
	b := c.bound
	b.items = min(b.items, maxItems)
	return listComments(ctx, c, b, owner, repo, number, time.Time{})
}

// listComments lists a thread's comments through c within b.
func listComments(ctx context.Context, c *Client, b listBound, owner, repo string, number int, since time.Time) ([]*github.IssueComment, error) {
	opt := &github.IssueListCommentsOptions{}
	if !since.IsZero() {
		opt.Since = &since
	}
	out, err := allPages(b, func(lo github.ListOptions) ([]*github.IssueComment, *github.Response, error) {
		opt.ListOptions = lo
		return c.gh.Issues.ListComments(ctx, owner, repo, number, opt)
	}, func(cm *github.IssueComment) int {
		cm.Body = readersText(cm.Body, cm.GetUser(), cm.GetAuthorAssociation())
		return len(cm.GetBody())
	})
	return out, classify(fmt.Sprintf("listing comments of %s/%s#%d", owner, repo, number), "issues: read", err)
}

// Reactions planex uses.
const (
	ReactionEyes     = "eyes"
	ReactionRocket   = "rocket"
	ReactionThumbsUp = "+1"
	ReactionRefused  = "-1"
	ReactionConfused = "confused"
)

// AddCommentReaction reacts to an issue comment (idempotent on GitHub)
// and returns the account GitHub says reacted: the token's own.
func (c *Client) AddCommentReaction(ctx context.Context, owner, repo string, commentID int64, content string) (*github.User, error) {
	var out *github.Reaction
	err := c.write(func() error {
		var err error
		out, _, err = c.gh.Reactions.CreateIssueCommentReaction(replayable(ctx), owner, repo, commentID, content)
		return err
	})
	return out.GetUser(), classify(fmt.Sprintf("reacting %q to comment %d in %s/%s", content, commentID, owner, repo), "issues: write (pull-requests: write on a pull request)", err)
}

// AddIssueReaction reacts to an issue or pull request itself.
func (c *Client) AddIssueReaction(ctx context.Context, owner, repo string, number int, content string) error {
	err := c.write(func() error {
		_, _, err := c.gh.Reactions.CreateIssueReaction(replayable(ctx), owner, repo, number, content)
		return err
	})
	return classify(fmt.Sprintf("reacting %q to %s/%s#%d", content, owner, repo, number), "issues: write", err)
}

// AddReviewCommentReaction reacts to an inline pull request review
// comment and returns the account GitHub says reacted.
func (c *Client) AddReviewCommentReaction(ctx context.Context, owner, repo string, commentID int64, content string) (*github.User, error) {
	var out *github.Reaction
	err := c.write(func() error {
		var err error
		out, _, err = c.gh.Reactions.CreatePullRequestCommentReaction(replayable(ctx), owner, repo, commentID, content)
		return err
	})
	return out.GetUser(), classify(fmt.Sprintf("reacting %q to review comment %d in %s/%s", content, commentID, owner, repo), "pull-requests: write", err)
}

// AddLabels adds labels to an issue or pull request; GitHub creates labels
// the repository does not have yet.
func (c *Client) AddLabels(ctx context.Context, owner, repo string, number int, labels ...string) error {
	if len(labels) == 0 {
		return nil
	}
	op := fmt.Sprintf("adding labels %v to %s/%s#%d", labels, owner, repo, number)
	// go-github sends a bare array, which the REST description does not
	// accept; send the documented {"labels": [...]} object.
	req, err := c.gh.NewRequest(http.MethodPost, fmt.Sprintf("repos/%s/%s/issues/%d/labels", owner, repo, number),
		map[string][]string{"labels": labels})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	err = c.write(func() error {
		// Adding a label that is there already changes nothing.
		_, err := c.gh.Do(replayable(ctx), req, nil)
		return err
	})
	return classify(op, "issues: write (pull-requests: write on a pull request)", err)
}

// RemoveLabel removes a label; a label that is not there is not an error.
func (c *Client) RemoveLabel(ctx context.Context, owner, repo string, number int, label string) error {
	err := c.write(func() error {
		_, err := c.gh.Issues.RemoveLabelForIssue(ctx, owner, repo, number, label)
		return err
	})
	err = classify(fmt.Sprintf("removing label %q from %s/%s#%d", label, owner, repo, number), "issues: write (pull-requests: write on a pull request)", err)
	if IsNotFound(err) {
		return nil
	}
	return err
}

// ---- repository ----

// Permission is a collaborator's access as the collaborator permission API
// reports it: Permission is the legacy level (admin, write, read, none;
// maintain shows as write, triage as read) and RoleName the actual role
// (admin, maintain, write, triage, read or a custom role name).
type Permission struct {
	Permission string `json:"permission"`
	RoleName   string `json:"role_name"`
}

// Permission returns login's access to the repository. An account GitHub
// does not know (404) has permission "none".
func (c *Client) Permission(ctx context.Context, owner, repo, login string) (Permission, error) {
	op := fmt.Sprintf("reading %s's permission on %s/%s", login, owner, repo)
	req, err := c.gh.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", owner, repo, url.PathEscape(login)), nil)
	if err != nil {
		return Permission{}, fmt.Errorf("%s: %w", op, err)
	}
	var out Permission
	_, err = c.gh.Do(ctx, req, &out)
	err = classify(op, "metadata: read", err)
	if IsNotFound(err) {
		return Permission{Permission: "none", RoleName: "none"}, nil
	}
	if err != nil {
		return Permission{}, err
	}
	return out, nil
}

// GetRepo returns the repository.
func (c *Client) GetRepo(ctx context.Context, owner, repo string) (*github.Repository, error) {
	r, _, err := c.gh.Repositories.Get(ctx, owner, repo)
	return r, classify(fmt.Sprintf("getting repository %s/%s", owner, repo), "metadata: read", err)
}

// DefaultBranch returns the repository's default branch.
func (c *Client) DefaultBranch(ctx context.Context, owner, repo string) (string, error) {
	r, err := c.GetRepo(ctx, owner, repo)
	if err != nil {
		return "", err
	}
	if r.GetDefaultBranch() == "" {
		return "", fmt.Errorf("repository %s/%s has no default branch (empty repository?)", owner, repo)
	}
	return r.GetDefaultBranch(), nil
}

// GetFileContent returns a file's bytes at ref (a branch, tag or SHA; the
// default branch when empty). A missing file gives an error matching
// ErrNotFound.
func (c *Client) GetFileContent(ctx context.Context, owner, repo, ref, path string) ([]byte, error) {
	op := fmt.Sprintf("reading %s at %q in %s/%s", path, ref, owner, repo)
	var opt *github.RepositoryContentGetOptions
	if ref != "" {
		opt = &github.RepositoryContentGetOptions{Ref: ref}
	}
	file, dir, _, err := c.gh.Repositories.GetContents(ctx, owner, repo, path, opt)
	if err != nil {
		return nil, classify(op, "contents: read", err)
	}
	if file == nil {
		return nil, fmt.Errorf("%s: is a directory (%d entries), not a file", op, len(dir))
	}
	s, err := file.GetContent()
	if err != nil {
		return nil, fmt.Errorf("%s: decoding content: %w", op, err)
	}
	return []byte(s), nil
}

// ---- pull requests ----

// NewPR is a pull request to open.
type NewPR struct {
	Title, Head, Base, Body string
	Draft                   bool
}

// CreatePR opens a pull request. A branch has at most one open pull
// request, so when one exists already (a create whose answer was lost,
// another job) it is returned instead: the caller updates it.
func (c *Client) CreatePR(ctx context.Context, owner, repo string, pr NewPR) (*github.PullRequest, error) {
	pr.Title, pr.Body = c.out(pr.Title), c.out(pr.Body)
	var out *github.PullRequest
	find := func() (bool, error) {
		existing, err := c.FindPRByHead(ctx, owner, repo, pr.Head)
		if existing != nil {
			out = existing
		}
		return existing != nil, err
	}
	err := c.createOnce(ctx, "pull request", func() error {
		var err error
		out, _, err = c.gh.PullRequests.Create(ctx, owner, repo, &github.NewPullRequest{
			Title: github.String(pr.Title), Head: github.String(pr.Head), Base: github.String(pr.Base),
			Body: github.String(pr.Body), Draft: github.Bool(pr.Draft)})
		return err
	}, find)
	if isPRExists(err) {
		if found, ferr := find(); ferr == nil && found {
			c.log.InfoContext(ctx, "github: the branch has a pull request already; using it", "head", pr.Head, "number", out.GetNumber())
			return out, nil
		}
	}
	return out, classify(fmt.Sprintf("opening pull request %s → %s in %s/%s", pr.Head, pr.Base, owner, repo), "pull-requests: write", err)
}

// isPRExists recognises 422 "A pull request already exists for …".
func isPRExists(err error) bool {
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	all := er.Message
	for _, e := range er.Errors {
		all += " " + e.Message
	}
	return strings.Contains(all, "pull request already exists")
}

// PRUpdate lists the fields to change; nil fields stay. GitHub's REST API
// cannot toggle draft status (that is GraphQL only).
type PRUpdate struct {
	Title, Body, State, Base *string
}

// UpdatePR edits a pull request.
func (c *Client) UpdatePR(ctx context.Context, owner, repo string, number int, u PRUpdate) (*github.PullRequest, error) {
	for _, f := range []**string{&u.Title, &u.Body} {
		if *f != nil {
			v := c.out(**f)
			*f = &v
		}
	}
	var out *github.PullRequest
	err := c.write(func() error {
		var err error
		pr := &github.PullRequest{Title: u.Title, Body: u.Body, State: u.State}
		if u.Base != nil {
			pr.Base = &github.PullRequestBranch{Ref: u.Base}
		}
		out, _, err = c.gh.PullRequests.Edit(ctx, owner, repo, number, pr)
		return err
	})
	return out, classify(fmt.Sprintf("updating pull request %s/%s#%d", owner, repo, number), "pull-requests: write", err)
}

// GetPR returns a pull request.
func (c *Client) GetPR(ctx context.Context, owner, repo string, number int) (*github.PullRequest, error) {
	pr, _, err := c.gh.PullRequests.Get(ctx, owner, repo, number)
	return pr, classify(fmt.Sprintf("getting pull request %s/%s#%d", owner, repo, number), "pull-requests: read", err)
}

// FindPRByHead returns the open pull request from branch (in the
// repository itself) or nil when there is none.
func (c *Client) FindPRByHead(ctx context.Context, owner, repo, branch string) (*github.PullRequest, error) {
	prs, _, err := c.gh.PullRequests.List(ctx, owner, repo, &github.PullRequestListOptions{
		State: "open", Head: owner + ":" + branch, ListOptions: github.ListOptions{PerPage: 10}})
	if err != nil {
		return nil, classify(fmt.Sprintf("looking for a pull request from %s in %s/%s", branch, owner, repo), "pull-requests: read", err)
	}
	if len(prs) == 0 {
		return nil, nil
	}
	return prs[0], nil
}

// RequestReviewers asks users to review a pull request.
func (c *Client) RequestReviewers(ctx context.Context, owner, repo string, number int, logins ...string) error {
	if len(logins) == 0 {
		return nil
	}
	err := c.write(func() error {
		_, _, err := c.gh.PullRequests.RequestReviewers(replayable(ctx), owner, repo, number, github.ReviewersRequest{Reviewers: logins})
		return err
	})
	return classify(fmt.Sprintf("requesting reviews from %v on %s/%s#%d", logins, owner, repo, number), "pull-requests: write", err)
}

// PRFiles returns a pull request's changed files (with patches).
func (c *Client) PRFiles(ctx context.Context, owner, repo string, number int) ([]*github.CommitFile, error) {
	out, err := allPages(c.bound, func(lo github.ListOptions) ([]*github.CommitFile, *github.Response, error) {
		return c.gh.PullRequests.ListFiles(ctx, owner, repo, number, &lo)
	}, func(f *github.CommitFile) int { return len(f.GetPatch()) + len(f.GetFilename()) })
	return out, classify(fmt.Sprintf("listing files of %s/%s#%d", owner, repo, number), "pull-requests: read", err)
}

// PRDiff returns a pull request's unified diff.
func (c *Client) PRDiff(ctx context.Context, owner, repo string, number int) (string, error) {
	s, _, err := c.gh.PullRequests.GetRaw(ctx, owner, repo, number, github.RawOptions{Type: github.Diff})
	return s, classify(fmt.Sprintf("getting the diff of %s/%s#%d", owner, repo, number), "pull-requests: read", err)
}

// ---- reviews ----

// ReviewComment is an inline comment of a review, anchored to a line of
// the diff (Side "RIGHT" for the new file, "LEFT" for the old). StartLine
// makes it span several lines.
type ReviewComment struct {
	Path      string
	Line      int
	StartLine int
	Side      string
	Body      string
}

// NewReview is a review to post. Event is "COMMENT", "REQUEST_CHANGES" or
// "APPROVE" (planex uses COMMENT).
type NewReview struct {
	CommitID string
	Body     string
	Event    string
	Comments []ReviewComment
}

// CreateReview posts a pull request review.
func (c *Client) CreateReview(ctx context.Context, owner, repo string, number int, r NewReview) (*github.PullRequestReview, error) {
	r.Body = c.out(r.Body)
	req := &github.PullRequestReviewRequest{Body: github.String(r.Body), Event: github.String(r.Event)}
	if r.CommitID != "" {
		req.CommitID = github.String(r.CommitID)
	}
	for _, rc := range r.Comments {
		side := rc.Side
		if side == "" {
			side = "RIGHT"
		}
		dc := &github.DraftReviewComment{Path: github.String(rc.Path), Body: github.String(c.out(rc.Body)),
			Line: github.Int(rc.Line), Side: github.String(side)}
		if rc.StartLine > 0 && rc.StartLine < rc.Line {
			dc.StartLine = github.Int(rc.StartLine)
			dc.StartSide = github.String(side)
		}
		req.Comments = append(req.Comments, dc)
	}
	var out *github.PullRequestReview
	marked, marker := withMarker(r.Body)
	req.Body = github.String(marked)
	err := c.createOnce(ctx, "review", func() error {
		var err error
		out, _, err = c.gh.PullRequests.CreateReview(ctx, owner, repo, number, req)
		return err
	}, func() (bool, error) {
		if marker == "" {
			// Nothing tells this review from another: assume it was not
			// posted rather than risk posting it twice.
			return false, errors.New("the review carries no marker to look for")
		}
		rs, err := c.ListReviews(ctx, owner, repo, number)
		if err != nil {
			return false, err
		}
		for _, rv := range rs {
			if sent(rv.GetBody(), marked, marker) {
				out = rv
				return true, nil
			}
		}
		return false, nil
	})
	return out, classify(fmt.Sprintf("posting a review on %s/%s#%d", owner, repo, number), "pull-requests: write", err)
}

// ListReviews returns a pull request's reviews in order.
func (c *Client) ListReviews(ctx context.Context, owner, repo string, number int) ([]*github.PullRequestReview, error) {
	out, err := allPages(c.bound, func(lo github.ListOptions) ([]*github.PullRequestReview, *github.Response, error) {
		return c.gh.PullRequests.ListReviews(ctx, owner, repo, number, &lo)
	}, func(rv *github.PullRequestReview) int {
		rv.Body = readersText(rv.Body, rv.GetUser(), rv.GetAuthorAssociation())
		return len(rv.GetBody())
	})
	return out, classify(fmt.Sprintf("listing reviews of %s/%s#%d", owner, repo, number), "pull-requests: read", err)
}

// UpdateReview replaces a review's summary body.
func (c *Client) UpdateReview(ctx context.Context, owner, repo string, number int, reviewID int64, body string) error {
	body = c.out(body)
	err := c.write(func() error {
		_, _, err := c.gh.PullRequests.UpdateReview(ctx, owner, repo, number, reviewID, body)
		return err
	})
	return classify(fmt.Sprintf("updating review %d on %s/%s#%d", reviewID, owner, repo, number), "pull-requests: write", err)
}

// ListReviewComments returns all inline review comments of a pull request.
func (c *Client) ListReviewComments(ctx context.Context, owner, repo string, number int) ([]*github.PullRequestComment, error) {
	opt := &github.PullRequestListCommentsOptions{}
	out, err := allPages(c.bound, func(lo github.ListOptions) ([]*github.PullRequestComment, *github.Response, error) {
		opt.ListOptions = lo
		return c.gh.PullRequests.ListComments(ctx, owner, repo, number, opt)
	}, func(cm *github.PullRequestComment) int {
		cm.Body = readersText(cm.Body, cm.GetUser(), cm.GetAuthorAssociation())
		return len(cm.GetBody()) + len(cm.GetDiffHunk()) + len(cm.GetPath())
	})
	return out, classify(fmt.Sprintf("listing review comments of %s/%s#%d", owner, repo, number), "pull-requests: read", err)
}

// ReplyToReviewComment answers in an inline review thread.
func (c *Client) ReplyToReviewComment(ctx context.Context, owner, repo string, number int, commentID int64, body string) (*github.PullRequestComment, error) {
	op := fmt.Sprintf("replying to review comment %d on %s/%s#%d", commentID, owner, repo, number)
	// go-github's CreateCommentInReplyTo posts without commit_id and path,
	// which the REST description requires; the replies endpoint does not.
	marked, marker := withMarker(c.out(body))
	out := new(github.PullRequestComment)
	err := c.createOnce(ctx, "review reply", func() error {
		req, err := c.gh.NewRequest(http.MethodPost, fmt.Sprintf("repos/%s/%s/pulls/%d/comments/%d/replies", owner, repo, number, commentID),
			map[string]string{"body": marked})
		if err != nil {
			return err
		}
		_, err = c.gh.Do(ctx, req, out)
		return err
	}, func() (bool, error) {
		cs, err := c.ListReviewComments(ctx, owner, repo, number)
		if err != nil {
			return false, err
		}
		for _, rc := range cs {
			if rc.GetInReplyTo() == commentID && sent(rc.GetBody(), marked, marker) {
				*out = *rc
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, classify(op, "pull-requests: write", err)
	}
	return out, nil
}

// CreateWorkflowDispatch starts a run of a workflow (by its file name, for
// example "planex-matrix.yml") on ref with the given inputs. Unlike pushes
// made with GITHUB_TOKEN, a dispatch does start a workflow run.
func (c *Client) CreateWorkflowDispatch(ctx context.Context, owner, repo, workflow, ref string, inputs map[string]string) error {
	in := make(map[string]any, len(inputs))
	for k, v := range inputs {
		in[k] = v
	}
	err := c.write(func() error {
		// A repeated dispatch starts a second run, which finds the wave
		// prepared and leaves (see action/matrix.go).
		_, err := c.gh.Actions.CreateWorkflowDispatchEventByFileName(replayable(ctx), owner, repo, workflow, github.CreateWorkflowDispatchEventRequest{Ref: ref, Inputs: in})
		return err
	})
	return classify(fmt.Sprintf("dispatching workflow %s on %s in %s/%s", workflow, ref, owner, repo), "actions: write", err)
}

// WorkflowRun is what planex needs to know of an Actions workflow run.
type WorkflowRun struct {
	ID         int64
	Attempt    int
	Status     string // queued, in_progress, completed, …
	Conclusion string
	// The rest is filled by ListWorkflowRuns (see actions.go).
	Name, Event, HTMLURL string
	Path                 string // the workflow file, .github/workflows/…
	HeadBranch, HeadSHA  string
	HeadRepo             string // "owner/name"
	HeadFork             bool
	PullRequests         []int
	// Actor started the run, TriggeringActor its latest attempt (a
	// re-run's is whoever re-ran it): logins, and account types.
	Actor, ActorType                     string
	TriggeringActor, TriggeringActorType string
}

// GetWorkflowRun returns a workflow run of the repository. It needs the
// token's `actions: read`.
func (c *Client) GetWorkflowRun(ctx context.Context, owner, repo string, runID int64) (WorkflowRun, error) {
	run, _, err := c.gh.Actions.GetWorkflowRunByID(ctx, owner, repo, runID)
	if err != nil {
		return WorkflowRun{}, classify(fmt.Sprintf("reading workflow run %d of %s/%s", runID, owner, repo), "actions: read", err)
	}
	return workflowRun(run), nil
}
