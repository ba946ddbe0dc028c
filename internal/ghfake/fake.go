// Package ghfake is a fake GitHub REST API for tests: an httptest server
// with real, mutex-guarded state (repositories, issues, comments,
// reactions, labels, collaborators, pull requests, reviews, file contents)
// that checks every request against GitHub's official REST description.
//
// A request GitHub would refuse (unknown route, unknown query parameter,
// a body that does not match the operation's schema) gets the status GitHub
// would answer (404, 400 or 422) and is recorded as a failure: the test's
// Errorf is called unless WithInvalidRequestHook replaces it, and
// Fake.Errors lists them.
//
// The fake answers both at URL()+"/" (github.com style) and below
// "/api/v3/" (GitHub Enterprise Server style). Faults can be scripted per
// route with InjectFault to exercise retry logic: refusals (5xx, primary
// and secondary rate limits) and answers lost after the write was applied
// (LostResponse, LostConnection, Timeout).
package ghfake

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
)

// DefaultActor is the login of the token holder when a token was not
// registered with SetToken: the Actions bot, as with GITHUB_TOKEN.
const DefaultActor = "github-actions[bot]"

// defaultSpec parses the embedded description once per test binary; the
// parsed value is never modified afterwards.
var defaultSpec = sync.OnceValues(LoadSpec)

// Option configures New.
type Option func(*config)

type config struct {
	spec    *Spec
	now     func() time.Time
	invalid func(msg string)
}

// WithSpec uses an already parsed description.
func WithSpec(s *Spec) Option { return func(c *config) { c.spec = s } }

// WithClock sets the time source used for timestamps.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithInvalidRequestHook replaces the default reaction to a request GitHub
// would refuse (t.Errorf). Tests that send bad requests on purpose pass a
// no-op and inspect Errors.
func WithInvalidRequestHook(fn func(msg string)) Option {
	return func(c *config) { c.invalid = fn }
}

// Fake is a fake GitHub. All methods are safe for concurrent use.
type Fake struct {
	t      testing.TB
	srv    *httptest.Server
	spec   *Spec
	now    func() time.Time
	report func(string)

	mu          sync.Mutex
	nextID      int64
	users       map[string]*User
	tokens      map[string]string
	repos       map[string]*repoState
	faults      []*faultRule
	errs        []string
	requests    []Request
	writing     int
	maxWriting  int
	branchCheck func(repo, branch string) bool
	// closing releases stalled answers when the test ends.
	closing chan struct{}
}

type faultRule struct {
	route string
	left  int
	fault Fault
}

// New starts a fake GitHub that is closed when the test ends.
func New(t testing.TB, opts ...Option) *Fake {
	t.Helper()
	cfg := config{now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.spec == nil {
		s, err := defaultSpec()
		if err != nil {
			t.Fatalf("ghfake: %v", err)
		}
		cfg.spec = s
	}
	f := &Fake{
		t: t, spec: cfg.spec, now: cfg.now, report: cfg.invalid,
		nextID:  1000,
		users:   map[string]*User{},
		tokens:  map[string]string{},
		repos:   map[string]*repoState{},
		closing: make(chan struct{}),
	}
	if f.report == nil {
		f.report = func(msg string) { t.Errorf("ghfake: request GitHub would refuse: %s", msg) }
	}
	f.addUserLocked(DefaultActor, "Bot")
	f.srv = httptest.NewServer(http.HandlerFunc(f.serveHTTP))
	t.Cleanup(func() {
		close(f.closing)
		f.srv.Close()
	})
	return f
}

// URL is the API base URL in github.com style, with a trailing slash.
func (f *Fake) URL() string { return f.srv.URL + "/" }

// EnterpriseURL is the API base URL in GitHub Enterprise Server style.
func (f *Fake) EnterpriseURL() string { return f.srv.URL + "/api/v3/" }

// ServerURL is the web URL (GITHUB_SERVER_URL); html_url fields start with it.
func (f *Fake) ServerURL() string { return f.srv.URL }

// Client returns a go-github client for the fake authenticated with token
// (any string; see SetToken). It has no retry or rate-limit handling.
func (f *Fake) Client(token string) *github.Client {
	c := github.NewClient(f.srv.Client())
	if token != "" {
		c = c.WithAuthToken(token)
	}
	u, _ := url.Parse(f.URL())
	c.BaseURL = u
	c.UploadURL = u
	return c
}

// HTTPClient is the server's HTTP client.
func (f *Fake) HTTPClient() *http.Client { return f.srv.Client() }

// ---- seeding ----

// AddUser registers an account; typ is "User" or "Bot" ("Bot" is implied
// for logins ending in "[bot]" when typ is empty).
func (f *Fake) AddUser(login, typ string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addUserLocked(login, typ)
}

func (f *Fake) addUserLocked(login, typ string) *User {
	if u, ok := f.users[strings.ToLower(login)]; ok {
		if typ != "" {
			u.Type = typ
		}
		return u
	}
	if typ == "" {
		typ = "User"
		if strings.HasSuffix(login, "[bot]") {
			typ = "Bot"
		}
	}
	u := &User{Login: login, ID: f.id(), Type: typ}
	f.users[strings.ToLower(login)] = u
	return u
}

// SetToken makes requests carrying token act as login.
func (f *Fake) SetToken(token, login string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addUserLocked(login, "")
	f.tokens[token] = login
}

// SetBranchCheck installs a function that says whether a branch exists;
// pull requests naming a missing head or base branch are then refused as
// GitHub does. Without it every branch exists.
func (f *Fake) SetBranchCheck(fn func(repo, branch string) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.branchCheck = fn
}

// AddRepo creates repository fullName ("owner/name").
func (f *Fake) AddRepo(fullName string, r Repo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	owner, name, ok := strings.Cut(fullName, "/")
	if !ok {
		f.t.Fatalf("ghfake: AddRepo(%q): want owner/name", fullName)
	}
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	f.addUserLocked(owner, "")
	f.repos[strings.ToLower(fullName)] = &repoState{
		owner: owner, name: name, id: f.id(), defaultBranch: r.DefaultBranch,
		private: r.Private, fork: r.Fork, noActionsPRs: r.ActionsCannotCreatePRs,
		perms:      map[string]string{strings.ToLower(owner): "admin"},
		issues:     map[int]*issueState{},
		comments:   map[int64]*commentState{},
		labels:     map[string]*labelState{},
		reviews:    map[int64]*reviewState{},
		reviewCmts: map[int64]*reviewCommentState{},
		files:      map[string]map[string][]byte{},
		runs:       map[int64]WorkflowRun{},
	}
}

// SetPermission gives login a role on the repository: admin, maintain,
// write, triage, read, or "" to remove it.
func (f *Fake) SetPermission(fullName, login, role string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	f.addUserLocked(login, "")
	if role == "" {
		delete(r.perms, strings.ToLower(login))
		return
	}
	r.perms[strings.ToLower(login)] = role
}

// SetFile stores a file's content at ref (a branch name, the default
// branch when empty, or refs/tags/<name> for a tag) for the contents API.
func (f *Fake) SetFile(fullName, ref, path string, content []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	if ref == "" {
		ref = r.defaultBranch
	}
	ref = strings.TrimPrefix(ref, "refs/heads/")
	if r.files[ref] == nil {
		r.files[ref] = map[string][]byte{}
	}
	r.files[ref][strings.TrimPrefix(path, "/")] = append([]byte(nil), content...)
}

// SetWorkflowRun records (or replaces) a workflow run of the repository.
func (f *Fake) SetWorkflowRun(fullName string, run WorkflowRun) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	run.defaults(r)
	run.Jobs = append([]WorkflowJob(nil), run.Jobs...)
	r.runs[run.ID] = run
}

// Dispatches lists the workflow_dispatch requests the repository accepted,
// oldest first.
func (f *Fake) Dispatches(fullName string) []Dispatch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Dispatch(nil), f.mustRepo(fullName).dispatches...)
}

// AddIssue opens an issue and returns its number.
func (f *Fake) AddIssue(fullName, author, title, body string, labels ...string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	f.addUserLocked(author, "")
	is := f.newIssueLocked(r, author, title, body)
	for _, l := range labels {
		f.ensureLabelLocked(r, l)
		if !is.hasLabel(l) {
			is.labels = append(is.labels, l)
		}
	}
	return is.number
}

// AddComment adds a comment to an issue or pull request and returns its id.
func (f *Fake) AddComment(fullName string, number int, author, body string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	is := r.issues[number]
	if is == nil {
		f.t.Fatalf("ghfake: AddComment: %s#%d does not exist", fullName, number)
	}
	f.addUserLocked(author, "")
	return f.newCommentLocked(r, is, author, body).id
}

// AddPullRequest opens a pull request and returns its number.
func (f *Fake) AddPullRequest(fullName string, pr PullRequest) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	if pr.Author == "" {
		pr.Author = DefaultActor
	}
	f.addUserLocked(pr.Author, "")
	is := f.newIssueLocked(r, pr.Author, pr.Title, pr.Body)
	if pr.State != "" {
		is.state = pr.State
	}
	if pr.Base == "" {
		pr.Base = r.defaultBranch
	}
	if pr.HeadRepo == "" {
		pr.HeadRepo = r.fullName()
	}
	if pr.HeadSHA == "" {
		pr.HeadSHA = fakeSHA(pr.HeadRepo + ":" + pr.Head)
	}
	is.pr = &prState{head: pr.Head, headRepo: pr.HeadRepo, headSHA: pr.HeadSHA, base: pr.Base,
		draft: pr.Draft, requested: append([]string(nil), pr.RequestedReviewers...),
		files: append([]PRFile(nil), pr.Files...), diff: pr.Diff}
	for _, l := range pr.Labels {
		f.ensureLabelLocked(r, l)
		is.labels = append(is.labels, l)
	}
	return is.number
}

// SetPRFiles replaces a pull request's changed files and diff.
func (f *Fake) SetPRFiles(fullName string, number int, files []PRFile, diff string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	is := r.issues[number]
	if is == nil || is.pr == nil {
		f.t.Fatalf("ghfake: SetPRFiles: %s#%d is not a pull request", fullName, number)
	}
	is.pr.files = append([]PRFile(nil), files...)
	is.pr.diff = diff
}

// InjectFault makes the next times requests to route answer with fault
// instead of being served. route is "METHOD /template" as in routes.txt
// (for example "POST /repos/{owner}/{repo}/pulls") or "*" for any route.
// Faults apply after validation, so invalid requests are still reported.
func (f *Fake) InjectFault(route string, times int, fault Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, &faultRule{route: route, left: times, fault: fault})
}

// SecondaryRateLimit is GitHub's answer when a secondary rate limit is hit.
func SecondaryRateLimit(retryAfter time.Duration) Fault {
	return Fault{
		Status: http.StatusForbidden,
		Header: map[string]string{"Retry-After": strconv.Itoa(int(retryAfter.Seconds()))},
		Body:   `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`,
	}
}

// PrimaryRateLimit is GitHub's answer when the token's hourly budget
// (the primary rate limit) is spent until reset: 403 with
// x-ratelimit-remaining 0 and the reset time. Use status 429 for the
// other form GitHub sends.
func PrimaryRateLimit(status int, reset time.Time) Fault {
	if status == 0 {
		status = http.StatusForbidden
	}
	return Fault{
		Status: status,
		Header: map[string]string{
			"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
			"X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10), "X-RateLimit-Resource": "core",
		},
		Body: `{"message":"API rate limit exceeded for installation ID 4242.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`,
	}
}

// LastRequestBeforeLimit serves the request and adds the headers GitHub
// sends with the last request the primary rate limit allows: remaining 0
// until reset.
func LastRequestBeforeLimit(reset time.Time) Fault {
	f := PrimaryRateLimit(0, reset)
	return Fault{Applied: true, Header: f.Header}
}

// LostResponse serves the request (its write is applied) and then answers
// status instead, as a proxy whose upstream timed out does (502, 504).
func LostResponse(status int) Fault {
	f := ServerError(status)
	f.Applied = true
	return f
}

// LostConnection serves the request and closes the connection without
// answering (a reset connection).
func LostConnection() Fault { return Fault{Applied: true, Disconnect: true} }

// Timeout serves the request and never answers, until the client gives
// up waiting.
func Timeout() Fault { return Fault{Applied: true, Stall: true} }

// ServerError is a bare 5xx answer such as 502 Bad Gateway.
func ServerError(status int) Fault {
	return Fault{Status: status, Body: fmt.Sprintf(`{"message":%q}`, http.StatusText(status))}
}

// NotFound is GitHub's 404 answer.
func NotFound() Fault {
	return Fault{Status: http.StatusNotFound, Body: `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`}
}

// Forbidden is a 403 with the given message, for example "Resource not
// accessible by integration".
func Forbidden(message string) Fault {
	b, _ := json.Marshal(map[string]string{"message": message, "documentation_url": "https://docs.github.com/rest"})
	return Fault{Status: http.StatusForbidden, Body: string(b)}
}

// ---- inspection ----

// Errors lists the requests GitHub would have refused, in arrival order.
func (f *Fake) Errors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.errs...)
}

// Requests lists every request received, in arrival order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// MaxConcurrentWrites is the largest number of mutating requests that were
// in flight at the same time.
func (f *Fake) MaxConcurrentWrites() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxWriting
}

// Issue returns a snapshot of issue or pull request number.
func (f *Fake) Issue(fullName string, number int) (Issue, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	is, ok := r.issues[number]
	if !ok {
		return Issue{}, false
	}
	return is.snapshot(), true
}

// Comments returns the comments of issue number in creation order.
func (f *Fake) Comments(fullName string, number int) []Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	var out []Comment
	for _, c := range sortedComments(r.comments, func(c *commentState) bool { return c.issue == number }) {
		out = append(out, c.snapshot())
	}
	return out
}

// Comment returns one issue comment.
func (f *Fake) Comment(fullName string, id int64) (Comment, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.mustRepo(fullName).comments[id]
	if !ok {
		return Comment{}, false
	}
	return c.snapshot(), true
}

// PullRequests returns snapshots of all pull requests, by number.
func (f *Fake) PullRequests(fullName string) []PullRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	var out []PullRequest
	for n := 1; n < r.nextNumber+1; n++ {
		is := r.issues[n]
		if is == nil || is.pr == nil {
			continue
		}
		out = append(out, PullRequest{
			Number: is.number, Title: is.title, Body: is.body, State: is.state, Author: is.author,
			Head: is.pr.head, HeadRepo: is.pr.headRepo, HeadSHA: is.pr.headSHA, Base: is.pr.base,
			Draft: is.pr.draft, Labels: append([]string(nil), is.labels...),
			RequestedReviewers: append([]string(nil), is.pr.requested...),
			Files:              append([]PRFile(nil), is.pr.files...), Diff: is.pr.diff,
		})
	}
	return out
}

// Reviews returns the reviews of pull request number in creation order.
func (f *Fake) Reviews(fullName string, number int) []Review {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	var out []Review
	for _, rv := range sortedReviews(r, number) {
		out = append(out, Review{ID: rv.id, PR: rv.pr, Author: rv.author, Body: rv.body, State: rv.state, CommitID: rv.commitID})
	}
	return out
}

// ReviewComments returns the inline comments of pull request number in
// creation order.
func (f *Fake) ReviewComments(fullName string, number int) []ReviewComment {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	var out []ReviewComment
	for _, c := range sortedReviewComments(r, func(c *reviewCommentState) bool { return c.pr == number }) {
		out = append(out, ReviewComment{ID: c.id, PR: c.pr, ReviewID: c.reviewID, InReplyTo: c.inReplyTo,
			Author: c.author, Path: c.path, Line: c.line, StartLine: c.startLine, Side: c.side,
			Position: c.position, Body: c.body, Reactions: snapshotReactions(c.reactions), CreatedAt: c.created})
	}
	return out
}

// AddReviewComment seeds an inline review comment by author (as a human
// reviewer would leave) and returns its id.
func (f *Fake) AddReviewComment(fullName string, number int, author, path string, line int, body string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	is := r.issues[number]
	if is == nil || is.pr == nil {
		f.t.Fatalf("ghfake: AddReviewComment: %s#%d is not a pull request", fullName, number)
	}
	f.addUserLocked(author, "")
	now := f.now().UTC()
	rv := &reviewState{id: f.id(), pr: number, author: author, state: "COMMENTED", commitID: is.pr.headSHA, submitted: now}
	r.reviews[rv.id] = rv
	c := &reviewCommentState{id: f.id(), pr: number, reviewID: rv.id, author: author, path: path,
		line: line, side: "RIGHT", body: body, commitID: is.pr.headSHA, created: now, updated: now}
	r.reviewCmts[c.id] = c
	return c.id
}

// Labels returns the repository's labels by name.
func (f *Fake) Labels(fullName string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	var out []string
	for _, l := range sortedLabels(r) {
		out = append(out, l.name)
	}
	return out
}

// ---- internals ----

func (f *Fake) id() int64 {
	f.nextID++
	return f.nextID
}

func (f *Fake) mustRepo(fullName string) *repoState {
	r := f.repos[strings.ToLower(fullName)]
	if r == nil {
		f.t.Fatalf("ghfake: repository %q was not added", fullName)
	}
	return r
}

func (f *Fake) newIssueLocked(r *repoState, author, title, body string) *issueState {
	r.nextNumber++
	now := f.now().UTC()
	is := &issueState{id: f.id(), number: r.nextNumber, title: title, body: body, state: "open",
		author: author, created: now, updated: now}
	r.issues[is.number] = is
	return is
}

func (f *Fake) newCommentLocked(r *repoState, is *issueState, author, body string) *commentState {
	now := f.now().UTC()
	c := &commentState{id: f.id(), issue: is.number, author: author, body: body, created: now, updated: now}
	r.comments[c.id] = c
	is.updated = now
	return c
}

func (f *Fake) ensureLabelLocked(r *repoState, name string) *labelState {
	if l, ok := r.labels[strings.ToLower(name)]; ok {
		return l
	}
	l := &labelState{id: f.id(), name: name, color: "ededed"}
	r.labels[strings.ToLower(name)] = l
	return l
}

func fakeSHA(seed string) string {
	h := uint64(1469598103934665603)
	out := make([]byte, 0, 40)
	for len(out) < 40 {
		for i := 0; i < len(seed); i++ {
			h ^= uint64(seed[i])
			h *= 1099511628211
		}
		out = strconv.AppendUint(out, h%16, 16)
		h = h*31 + uint64(len(out))
	}
	return string(out)
}

func nodeID(kind string, id int64) string {
	return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%s%d", kind, id)))
}

// apiError is an answer in GitHub's error shape.
type apiError struct {
	status int
	body   map[string]any
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %v", e.status, e.body["message"]) }

func errNotFound() *apiError {
	return &apiError{http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}}
}

func errValidation(msg string, details ...any) *apiError {
	body := map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"}
	if len(details) > 0 {
		body["errors"] = details
	}
	return &apiError{http.StatusUnprocessableEntity, body}
}

func errStatus(status int, msg string) *apiError {
	return &apiError{status, map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"}}
}

// call is one request being served.
type call struct {
	w       http.ResponseWriter
	r       *http.Request
	m       *match
	body    []byte
	actor   string
	apiBase string // e.g. http://127.0.0.1:1234/ or .../api/v3/
	apiPath string // request path below the API root
	status  int
}

func (c *call) param(name string) string { return c.m.params[name] }

func (c *call) int64Param(name string) (int64, *apiError) {
	n, err := strconv.ParseInt(c.m.params[name], 10, 64)
	if err != nil {
		return 0, errNotFound()
	}
	return n, nil
}

func (c *call) decode(v any) *apiError {
	if len(bytes.TrimSpace(c.body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(c.body, v); err != nil {
		return errStatus(http.StatusBadRequest, "Problems parsing JSON")
	}
	return nil
}

func (c *call) json(status int, v any) {
	c.status = status
	c.w.Header().Set("Content-Type", "application/json; charset=utf-8")
	c.w.WriteHeader(status)
	enc := json.NewEncoder(c.w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func (c *call) text(status int, contentType, s string) {
	c.status = status
	c.w.Header().Set("Content-Type", contentType)
	c.w.WriteHeader(status)
	_, _ = io.WriteString(c.w, s)
}

func (c *call) noContent() {
	c.status = http.StatusNoContent
	c.w.WriteHeader(http.StatusNoContent)
}

func (c *call) fail(e *apiError) { c.json(e.status, e.body) }

func isWrite(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

func (f *Fake) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, logPathPrefix) {
		f.serveBlob(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	apiPath := r.URL.Path
	base := "http://" + r.Host + "/"
	if p, ok := strings.CutPrefix(apiPath, "/api/v3/"); ok {
		apiPath = "/" + p
		base += "api/v3/"
	}
	rec := &Request{Method: r.Method, Path: apiPath, Query: r.URL.RawQuery, Body: string(body)}
	c := &call{w: w, r: r, body: body, apiBase: base, apiPath: apiPath}
	finish := f.begin(c, rec)
	defer finish()
	// Let concurrent writers overlap long enough to be counted.
	if isWrite(r.Method) {
		time.Sleep(time.Millisecond)
	}

	m, err := f.spec.check(r.Context(), r, apiPath, body)
	if m != nil {
		rec.Route = m.route
	}
	if err != nil {
		f.rejectInvalid(c, err)
		return
	}
	c.m = m

	fault := f.takeFault(m.route)
	switch {
	case fault == nil:
		f.serve(c, m)
	case !fault.Applied:
		writeFault(c, fault)
	default:
		f.serveThenFault(c, m, fault, rec, finish)
	}
}

// begin notes the caller and one more write in flight, and returns the
// function that logs the request once, before the client can see its
// answer (or its connection close) and ask the log about it.
func (f *Fake) begin(c *call, rec *Request) (finish func()) {
	write := isWrite(c.r.Method)
	f.mu.Lock()
	c.actor = f.actorLocked(c.r)
	rec.Actor = c.actor
	if write {
		f.writing++
		if f.writing > f.maxWriting {
			f.maxWriting = f.writing
		}
	}
	f.mu.Unlock()
	finished := false
	return func() {
		if finished {
			return
		}
		finished = true
		f.mu.Lock()
		if write {
			f.writing--
		}
		rec.Status = c.status
		f.requests = append(f.requests, *rec)
		f.mu.Unlock()
	}
}

// rejectInvalid records a request the REST description does not allow
// and answers it as GitHub would.
func (f *Fake) rejectInvalid(c *call, err error) {
	msg := fmt.Sprintf("%s %s: %v", c.r.Method, c.r.URL.RequestURI(), err)
	f.mu.Lock()
	f.errs = append(f.errs, msg)
	f.mu.Unlock()
	f.report(msg)
	var ve *validationError
	if errors.As(err, &ve) {
		c.fail(&apiError{ve.status, map[string]any{"message": "Invalid request.\n\n" + ve.msg, "documentation_url": "https://docs.github.com/rest"}})
		return
	}
	c.fail(errNotFound())
}

// serveThenFault serves the request for real, then loses (or amends) the
// answer as fault says; finish logs the request.
func (f *Fake) serveThenFault(c *call, m *match, fault *Fault, rec *Request, finish func()) {
	w := c.w
	real := httptest.NewRecorder()
	c.w = real
	f.serve(c, m)
	c.w = w
	switch {
	case fault.Disconnect:
		rec.Lost = true
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				finish()
				conn.Close()
				return
			}
		}
		c.status = http.StatusBadGateway
		w.WriteHeader(http.StatusBadGateway)
	case fault.Stall:
		rec.Lost = true
		finish()
		select {
		case <-c.r.Context().Done():
		case <-f.closing:
		}
	case fault.Status == 0:
		for k, vs := range real.Header() {
			w.Header()[k] = vs
		}
		for k, v := range fault.Header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(real.Code)
		_, _ = w.Write(real.Body.Bytes())
	default:
		rec.Lost = true
		writeFault(c, fault)
	}
}

// writeFault answers with fault's status, headers and body.
func writeFault(c *call, fault *Fault) {
	for k, v := range fault.Header {
		c.w.Header().Set(k, v)
	}
	b := fault.Body
	if b == "" {
		b = fmt.Sprintf(`{"message":%q}`, http.StatusText(fault.Status))
	}
	c.text(fault.Status, "application/json; charset=utf-8", b)
}

// serve runs the operation's handler against the fake's state.
func (f *Fake) serve(c *call, m *match) {
	h, ok := handlers[m.route]
	if !ok {
		msg := fmt.Sprintf("%s: the description has it but the fake does not serve it", m.route)
		f.mu.Lock()
		f.errs = append(f.errs, msg)
		f.mu.Unlock()
		f.report(msg)
		c.fail(errNotFound())
		return
	}
	if isWrite(c.r.Method) && c.actor == "" {
		c.fail(errStatus(http.StatusUnauthorized, "Requires authentication"))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	repo := f.repos[strings.ToLower(m.params["owner"]+"/"+m.params["repo"])]
	if repo == nil || (repo.private && !f.canReadLocked(repo, c.actor)) {
		c.fail(errNotFound())
		return
	}
	if e := h(f, c, repo); e != nil {
		c.fail(e)
	}
}

func (f *Fake) canReadLocked(r *repoState, login string) bool {
	if login == "" {
		return false
	}
	if strings.EqualFold(login, DefaultActor) {
		return true
	}
	_, ok := r.perms[strings.ToLower(login)]
	return ok
}

func (f *Fake) actorLocked(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return ""
	}
	_, token, ok := strings.Cut(auth, " ")
	if !ok {
		token = auth
	}
	if login, ok := f.tokens[token]; ok {
		return login
	}
	return DefaultActor
}

func (f *Fake) takeFault(route string) *Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, rule := range f.faults {
		if rule.route != "*" && rule.route != route {
			continue
		}
		rule.left--
		if rule.left <= 0 {
			f.faults = append(f.faults[:i], f.faults[i+1:]...)
		}
		fault := rule.fault
		return &fault
	}
	return nil
}

// noteLabelEventLocked records that actor added (labeled) or removed
// (unlabeled) a label on is.
func (f *Fake) noteLabelEventLocked(is *issueState, kind, label, actor string) {
	is.events = append(is.events, &issueEventState{id: f.id(), event: kind, label: label, actor: actor, created: f.now().UTC()})
}

// LabelIssue adds a label to an issue as actor would, with its labeled
// event; UnlabelIssue removes one, with its unlabeled event.
func (f *Fake) LabelIssue(fullName string, number int, actor, label string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	is := r.issues[number]
	if is == nil {
		f.t.Fatalf("ghfake: LabelIssue: %s#%d does not exist", fullName, number)
	}
	f.addUserLocked(actor, "")
	l := f.ensureLabelLocked(r, label)
	if !is.hasLabel(label) {
		is.labels = append(is.labels, l.name)
	}
	f.noteLabelEventLocked(is, "labeled", l.name, actor)
}

// UnlabelIssue removes a label from an issue as actor would.
func (f *Fake) UnlabelIssue(fullName string, number int, actor, label string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	is := r.issues[number]
	if is == nil {
		f.t.Fatalf("ghfake: UnlabelIssue: %s#%d does not exist", fullName, number)
	}
	is.labels = slices.DeleteFunc(is.labels, func(l string) bool { return strings.EqualFold(l, label) })
	f.noteLabelEventLocked(is, "unlabeled", label, actor)
}

// EditComment changes an issue comment's body as a person editing it on
// GitHub would (its updated_at moves, its created_at stays).
func (f *Fake) EditComment(fullName string, id int64, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.mustRepo(fullName)
	cm := r.comments[id]
	if cm == nil {
		f.t.Fatalf("ghfake: EditComment: comment %d of %s does not exist", id, fullName)
	}
	cm.body, cm.updated = body, f.now().UTC()
}

// DeleteComment deletes an issue comment as a person would on GitHub.
func (f *Fake) DeleteComment(fullName string, id int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.mustRepo(fullName).comments, id)
}
