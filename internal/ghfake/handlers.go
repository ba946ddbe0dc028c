package ghfake

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

type handler func(f *Fake, c *call, r *repoState) *apiError

// finder looks up what a request acts on: the object its path names, such
// as (*Fake).issueFor, or the repository's git directory (gitDirOf).
type finder[T any] func(f *Fake, c *call, r *repoState) (T, *apiError)

// on makes a handler of h, which acts on what find looks up.
func on[T any](find finder[T], h func(f *Fake, c *call, r *repoState, v T) *apiError) handler {
	return func(f *Fake, c *call, r *repoState) *apiError {
		v, e := find(f, c, r)
		if e != nil {
			return e
		}
		return h(f, c, r, v)
	}
}

// show makes a handler that answers with the object find looks up, as
// render renders it.
func show[T any](find finder[T], render func(f *Fake, c *call, r *repoState, v T) obj) handler {
	return on(find, func(f *Fake, c *call, r *repoState, v T) *apiError {
		c.json(http.StatusOK, render(f, c, r, v))
		return nil
	})
}

// lookup finds the entry of store that the path parameter param names. An
// id that is not a number, or that store lacks, is a 404, as on GitHub.
func lookup[K ~int | ~int64, V any](c *call, param string, store map[K]V) (V, *apiError) {
	n, err := strconv.ParseInt(c.param(param), 10, 64)
	v, ok := store[K(n)]
	if err != nil || !ok {
		var zero V
		return zero, errNotFound()
	}
	return v, nil
}

// handlers maps "METHOD /template" (as in routes.txt) to its implementation.
// Handlers run with f.mu held.
var handlers = map[string]handler{
	"GET /repos/{owner}/{repo}":                                                    getRepo,
	"GET /repos/{owner}/{repo}/contents/{path}":                                    getContents,
	"GET /repos/{owner}/{repo}/collaborators/{username}/permission":                getPermission,
	"GET /repos/{owner}/{repo}/issues":                                             listIssues,
	"POST /repos/{owner}/{repo}/issues":                                            createIssue,
	"GET /repos/{owner}/{repo}/issues/{issue_number}":                              show((*Fake).issueFor, (*Fake).issueJSON),
	"PATCH /repos/{owner}/{repo}/issues/{issue_number}":                            on((*Fake).issueFor, editIssue),
	"GET /repos/{owner}/{repo}/issues/{issue_number}/comments":                     on((*Fake).issueFor, listComments),
	"POST /repos/{owner}/{repo}/issues/{issue_number}/comments":                    on((*Fake).issueFor, createComment),
	"GET /repos/{owner}/{repo}/issues/comments/{comment_id}":                       show((*Fake).commentFor, (*Fake).commentJSON),
	"PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}":                     on((*Fake).commentFor, editComment),
	"DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}":                    on((*Fake).commentFor, deleteComment),
	"GET /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions":             on((*Fake).commentFor, listReactions),
	"POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions":            on((*Fake).commentFor, createReaction),
	"GET /repos/{owner}/{repo}/issues/{issue_number}/reactions":                    on((*Fake).issueFor, listReactions),
	"POST /repos/{owner}/{repo}/issues/{issue_number}/reactions":                   on((*Fake).issueFor, createReaction),
	"GET /repos/{owner}/{repo}/issues/{issue_number}/events":                       on((*Fake).issueFor, listIssueEvents),
	"GET /repos/{owner}/{repo}/issues/{issue_number}/labels":                       on((*Fake).issueFor, listIssueLabels),
	"POST /repos/{owner}/{repo}/issues/{issue_number}/labels":                      on((*Fake).issueFor, addIssueLabels),
	"PUT /repos/{owner}/{repo}/issues/{issue_number}/labels":                       on((*Fake).issueFor, setIssueLabels),
	"DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}":             on((*Fake).issueFor, removeIssueLabel),
	"GET /repos/{owner}/{repo}/labels":                                             listLabels,
	"POST /repos/{owner}/{repo}/labels":                                            createLabel,
	"GET /repos/{owner}/{repo}/labels/{name}":                                      getLabel,
	"GET /repos/{owner}/{repo}/pulls":                                              listPulls,
	"POST /repos/{owner}/{repo}/pulls":                                             createPull,
	"GET /repos/{owner}/{repo}/pulls/{pull_number}":                                on((*Fake).pullFor, getPull),
	"PATCH /repos/{owner}/{repo}/pulls/{pull_number}":                              on((*Fake).pullFor, editPull),
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/files":                          on((*Fake).pullFor, listPullFiles),
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers":            on((*Fake).pullFor, listRequestedReviewers),
	"POST /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers":           on((*Fake).pullFor, requestReviewers),
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews":                        on((*Fake).pullFor, listReviews),
	"POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews":                       on((*Fake).pullFor, createReview),
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}":            show((*Fake).reviewFor, (*Fake).reviewJSON),
	"PUT /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}":            on((*Fake).reviewFor, updateReview),
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments":   on((*Fake).reviewFor, listReviewCommentsOfReview),
	"GET /repos/{owner}/{repo}/pulls/{pull_number}/comments":                       on((*Fake).pullFor, listReviewComments),
	"POST /repos/{owner}/{repo}/pulls/{pull_number}/comments":                      on((*Fake).pullFor, createReviewComment),
	"POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies": on((*Fake).pullFor, replyReviewComment),
	"GET /repos/{owner}/{repo}/pulls/comments/{comment_id}":                        show((*Fake).reviewCommentFor, (*Fake).reviewCommentJSON),
	"GET /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions":              on((*Fake).reviewCommentFor, listReactions),
	"POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions":             on((*Fake).reviewCommentFor, createReaction),
	"POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches":        createWorkflowDispatch,
	"GET /repos/{owner}/{repo}/actions/runs/{run_id}":                              show((*Fake).runFor, (*Fake).runJSON),
	"POST /repos/{owner}/{repo}/git/blobs":                                         on(gitDirOf, createBlob),
	"POST /repos/{owner}/{repo}/git/trees":                                         on(gitDirOf, createTree),
	"POST /repos/{owner}/{repo}/git/commits":                                       on(gitDirOf, createGitCommit),
	"GET /repos/{owner}/{repo}/git/commits/{commit_sha}":                           on(gitDirOf, getGitCommit),
	"GET /repos/{owner}/{repo}/git/ref/{ref}":                                      on(gitDirOf, getGitRef),
	"GET /repos/{owner}/{repo}/git/matching-refs/{ref}":                            on(gitDirOf, listMatchingRefs),
	"POST /repos/{owner}/{repo}/git/refs":                                          on(gitDirOf, createGitRef),
	"PATCH /repos/{owner}/{repo}/git/refs/{ref}":                                   on(gitDirOf, updateGitRef),
	"GET /repos/{owner}/{repo}/actions/runs":                                       listWorkflowRuns,
	"GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs":                         on((*Fake).runFor, listRunJobs),
	"GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs":                         jobLogs,
}

// ---- authorisation inside the fake ----

var roleRank = map[string]int{"read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}

// allowed reports whether actor holds at least role on r. The Actions bot
// (GITHUB_TOKEN) is granted write.
func (f *Fake) allowed(r *repoState, actor, role string) bool {
	if strings.EqualFold(actor, DefaultActor) {
		return roleRank[role] <= roleRank["write"]
	}
	return roleRank[r.perms[strings.ToLower(actor)]] >= roleRank[role]
}

func (f *Fake) need(r *repoState, c *call, role string) *apiError {
	if f.allowed(r, c.actor, role) {
		return nil
	}
	if r.private {
		return errNotFound()
	}
	return errStatus(http.StatusForbidden, "Must have "+role+" access to repository")
}

// needUnlessAuthor lets the author of what a request changes change it,
// and anyone else who holds role.
func (f *Fake) needUnlessAuthor(r *repoState, c *call, author, role string) *apiError {
	if strings.EqualFold(author, c.actor) {
		return nil
	}
	return f.need(r, c, role)
}

// ---- repository, contents, permissions ----

func getRepo(f *Fake, c *call, r *repoState) *apiError {
	o := f.repoJSON(c, r)
	role := r.perms[strings.ToLower(c.actor)]
	if strings.EqualFold(c.actor, DefaultActor) {
		role = "write"
	}
	o["permissions"] = map[string]bool{
		"admin": roleRank[role] >= 5, "maintain": roleRank[role] >= 4, "push": roleRank[role] >= 3,
		"triage": roleRank[role] >= 2, "pull": true,
	}
	c.json(http.StatusOK, o)
	return nil
}

// contentsRef is the key of the files a contents request's ref reads: a
// full refs/heads/ or refs/tags/ name exactly, the default branch for
// none, and a short name as git resolves one (gitrevisions(7) tries
// refs/tags/<name> before refs/heads/<name>), so a tag named like a
// branch is what the branch's short name reads; GitHub documents no order
// for such a name.
func (r *repoState) contentsRef(ref string) string {
	switch {
	case ref == "":
		return r.defaultBranch
	case strings.HasPrefix(ref, "refs/heads/"):
		return strings.TrimPrefix(ref, "refs/heads/")
	case strings.HasPrefix(ref, "refs/"):
		return ref
	}
	if _, tag := r.files["refs/tags/"+ref]; tag {
		return "refs/tags/" + ref
	}
	return ref
}

// fullRef is the full name a ref given to GitHub stands for: a full
// refs/ name itself, and a short name as git resolves it, the tag of that
// name (when the repository has one) before the branch.
func (r *repoState) fullRef(ref string) string {
	switch {
	case strings.HasPrefix(ref, "refs/"):
		return ref
	case r.files["refs/tags/"+ref] != nil:
		return "refs/tags/" + ref
	}
	return "refs/heads/" + ref
}

func getContents(f *Fake, c *call, r *repoState) *apiError {
	ref := r.contentsRef(c.r.URL.Query().Get("ref"))
	path := strings.Trim(c.param("path"), "/")
	data, ok := r.files[ref][path]
	if !ok {
		return errNotFound()
	}
	accept := c.r.Header.Get("Accept")
	if strings.Contains(accept, "raw") {
		c.text(http.StatusOK, "application/vnd.github.raw; charset=utf-8", string(data))
		return nil
	}
	name := path[strings.LastIndex(path, "/")+1:]
	sha := fakeSHA(string(data))
	api := c.apiBase + "repos/" + r.fullName() + "/contents/" + path + "?ref=" + ref
	html := f.ServerURL() + "/" + r.fullName() + "/blob/" + ref + "/" + path
	c.json(http.StatusOK, obj{
		"type": "file", "encoding": "base64", "size": len(data), "name": name, "path": path,
		"content": base64.StdEncoding.EncodeToString(data), "sha": sha, "url": api, "html_url": html,
		"git_url":      c.apiBase + "repos/" + r.fullName() + "/git/blobs/" + sha,
		"download_url": f.ServerURL() + "/" + r.fullName() + "/raw/" + ref + "/" + path,
		"_links":       obj{"self": api, "git": c.apiBase + "repos/" + r.fullName() + "/git/blobs/" + sha, "html": html},
	})
	return nil
}

// getPermission answers like GitHub: 404 for an unknown account; for a
// known account without a role, "read" on a public repository and "none"
// on a private one.
func getPermission(f *Fake, c *call, r *repoState) *apiError {
	login := c.param("username")
	u, ok := f.users[strings.ToLower(login)]
	if !ok {
		return errNotFound()
	}
	role, ok := r.perms[strings.ToLower(login)]
	if !ok {
		role = "read"
		if r.private {
			role = "none"
		}
	}
	user := f.userJSON(c, u.Login)
	user["permissions"] = map[string]bool{
		"admin": roleRank[role] >= 5, "maintain": roleRank[role] >= 4, "push": roleRank[role] >= 3,
		"triage": roleRank[role] >= 2, "pull": roleRank[role] >= 1,
	}
	user["role_name"] = role
	c.json(http.StatusOK, obj{"permission": permissionOf(role), "role_name": role, "user": user})
	return nil
}

// ---- issues ----

func (f *Fake) issueFor(c *call, r *repoState) (*issueState, *apiError) {
	return lookup(c, "issue_number", r.issues)
}

func listIssues(f *Fake, c *call, r *repoState) *apiError {
	q := c.r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		for _, name := range strings.Split(l, ",") {
			if name = strings.TrimSpace(name); name != "" {
				want = append(want, name)
			}
		}
	}
	var since time.Time
	if s := q.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return errValidation("Validation Failed", obj{"resource": "Issue", "field": "since", "code": "invalid"})
		}
		since = t
	}
	creator := q.Get("creator")
	var out []*issueState
	for _, is := range r.issues {
		if state != "all" && is.state != state {
			continue
		}
		if creator != "" && !strings.EqualFold(creator, is.author) {
			continue
		}
		if !since.IsZero() && is.updated.Before(since) {
			continue
		}
		ok := true
		for _, l := range want {
			ok = ok && is.hasLabel(l)
		}
		if ok {
			out = append(out, is)
		}
	}
	sortIssues(out, q.Get("sort"), q.Get("direction"))
	c.json(http.StatusOK, pageJSON(c, out, func(is *issueState) obj { return f.issueJSON(c, r, is) }))
	return nil
}

// sortIssues orders like GitHub: by creation time (or update time),
// newest first unless direction is "asc"; ties broken by number.
func sortIssues(in []*issueState, by, direction string) {
	key := func(is *issueState) time.Time { return is.created }
	if by == "updated" {
		key = func(is *issueState) time.Time { return is.updated }
	}
	asc := direction == "asc"
	sort.Slice(in, func(a, b int) bool {
		ka, kb := key(in[a]), key(in[b])
		if !ka.Equal(kb) {
			return ka.Before(kb) == asc
		}
		return (in[a].number < in[b].number) == asc
	})
}

func createIssue(f *Fake, c *call, r *repoState) *apiError {
	var in struct {
		Title  any    `json:"title"`
		Body   string `json:"body"`
		Labels []any  `json:"labels"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	title := ""
	switch t := in.Title.(type) {
	case string:
		title = t
	case float64:
		title = strconv.FormatFloat(t, 'f', -1, 64)
	}
	if strings.TrimSpace(title) == "" {
		return errValidation("Validation Failed", obj{"resource": "Issue", "field": "title", "code": "missing_field"})
	}
	is := f.newIssueLocked(r, c.actor, title, in.Body)
	for _, name := range labelNames(in.Labels) {
		f.ensureLabelLocked(r, name)
		if !is.hasLabel(name) {
			is.labels = append(is.labels, name)
		}
	}
	c.json(http.StatusCreated, f.issueJSON(c, r, is))
	return nil
}

func editIssue(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	var in map[string]json.RawMessage
	if e := c.decode(&in); e != nil {
		return e
	}
	if e := f.needUnlessAuthor(r, c, is.author, "triage"); e != nil {
		return e
	}
	str := func(k string) (string, bool) {
		raw, ok := in[k]
		if !ok {
			return "", false
		}
		var s string
		_ = json.Unmarshal(raw, &s)
		return s, true
	}
	if s, ok := str("title"); ok {
		is.title = s
	}
	if s, ok := str("body"); ok {
		is.body = s
	}
	now := f.now().UTC()
	if s, ok := str("state"); ok && s != is.state {
		is.state = s
		if s == "closed" {
			is.closed = now
		} else {
			is.closed = time.Time{}
		}
	}
	if raw, ok := in["labels"]; ok {
		var labels []any
		_ = json.Unmarshal(raw, &labels)
		is.labels = nil
		for _, name := range labelNames(labels) {
			f.ensureLabelLocked(r, name)
			is.labels = append(is.labels, name)
		}
	}
	is.updated = now
	c.json(http.StatusOK, f.issueJSON(c, r, is))
	return nil
}

// ---- issue comments ----

func listComments(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	var since time.Time
	if s := c.r.URL.Query().Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return errValidation("Validation Failed", obj{"resource": "IssueComment", "field": "since", "code": "invalid"})
		}
		since = t
	}
	all := sortedComments(r.comments, func(cm *commentState) bool {
		return cm.issue == is.number && (since.IsZero() || !cm.updated.Before(since))
	})
	c.json(http.StatusOK, pageJSON(c, all, func(cm *commentState) obj { return f.commentJSON(c, r, cm) }))
	return nil
}

func createComment(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	var in struct {
		Body string `json:"body"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	if in.Body == "" {
		return errValidation("Validation Failed", obj{"resource": "IssueComment", "field": "body", "code": "missing_field"})
	}
	if len(in.Body) > 65536 {
		return errValidation("Validation Failed", obj{"resource": "IssueComment", "field": "data", "code": "custom",
			"message": "Body is too long (maximum is 65536 characters)"})
	}
	if is.locked && !f.allowed(r, c.actor, "write") {
		return errStatus(http.StatusForbidden, "Unable to create comment because issue is locked.")
	}
	cm := f.newCommentLocked(r, is, c.actor, in.Body)
	c.w.Header().Set("Location", c.apiBase+"repos/"+r.fullName()+"/issues/comments/"+strconv.FormatInt(cm.id, 10))
	c.json(http.StatusCreated, f.commentJSON(c, r, cm))
	return nil
}

func (f *Fake) commentFor(c *call, r *repoState) (*commentState, *apiError) {
	return lookup(c, "comment_id", r.comments)
}

func editComment(f *Fake, c *call, r *repoState, cm *commentState) *apiError {
	if e := f.needUnlessAuthor(r, c, cm.author, "write"); e != nil {
		return e
	}
	var in struct {
		Body string `json:"body"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	if len(in.Body) > 65536 {
		return errValidation("Validation Failed", obj{"resource": "IssueComment", "field": "data", "code": "custom",
			"message": "Body is too long (maximum is 65536 characters)"})
	}
	cm.body = in.Body
	cm.updated = f.now().UTC()
	c.json(http.StatusOK, f.commentJSON(c, r, cm))
	return nil
}

func deleteComment(f *Fake, c *call, r *repoState, cm *commentState) *apiError {
	if e := f.needUnlessAuthor(r, c, cm.author, "write"); e != nil {
		return e
	}
	delete(r.comments, cm.id)
	c.noContent()
	return nil
}

// ---- reactions ----

// reactable is what people react to: an issue (or pull request), an issue
// comment or a review comment.
type reactable interface {
	reactionList() *[]*reactionState
}

func (i *issueState) reactionList() *[]*reactionState         { return &i.reactions }
func (c *commentState) reactionList() *[]*reactionState       { return &c.reactions }
func (c *reviewCommentState) reactionList() *[]*reactionState { return &c.reactions }

// listReactions lists the reactions to v, filtered by content when asked.
func listReactions[T reactable](f *Fake, c *call, r *repoState, v T) *apiError {
	content := c.r.URL.Query().Get("content")
	var keep []*reactionState
	for _, rc := range *v.reactionList() {
		if content == "" || rc.content == content {
			keep = append(keep, rc)
		}
	}
	c.json(http.StatusOK, pageJSON(c, keep, func(rc *reactionState) obj { return f.reactionJSON(c, rc) }))
	return nil
}

// createReaction answers 200 with the existing reaction when the actor
// already reacted with that content, as GitHub does, and 201 otherwise.
func createReaction[T reactable](f *Fake, c *call, r *repoState, v T) *apiError {
	rs := v.reactionList()
	var in struct {
		Content string `json:"content"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	for _, rc := range *rs {
		if rc.content == in.Content && strings.EqualFold(rc.user, c.actor) {
			c.json(http.StatusOK, f.reactionJSON(c, rc))
			return nil
		}
	}
	rc := &reactionState{id: f.id(), user: c.actor, content: in.Content, created: f.now().UTC()}
	*rs = append(*rs, rc)
	c.json(http.StatusCreated, f.reactionJSON(c, rc))
	return nil
}

// ---- labels ----

// labelNames accepts the shapes GitHub takes for a list of labels:
// strings or {"name": ...} objects.
func labelNames(in []any) []string {
	var out []string
	for _, v := range in {
		switch t := v.(type) {
		case string:
			out = append(out, t)
		case map[string]any:
			if s, ok := t["name"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func (c *call) labelsBody() ([]string, *apiError) {
	var raw any
	if e := c.decode(&raw); e != nil {
		return nil, e
	}
	switch t := raw.(type) {
	case []any:
		return labelNames(t), nil
	case map[string]any:
		if list, ok := t["labels"].([]any); ok {
			return labelNames(list), nil
		}
	case nil:
		return nil, nil
	}
	return nil, errValidation("Validation Failed", obj{"resource": "Label", "field": "labels", "code": "invalid"})
}

func (f *Fake) issueLabelsReply(c *call, r *repoState, is *issueState, status int) {
	c.json(status, f.issueLabels(c, r, is))
}

func listIssueLabels(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	labels := f.issueLabels(c, r, is)
	c.json(http.StatusOK, paginate(c, labels))
	return nil
}

func addIssueLabels(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	return f.labelIssue(c, r, is, false)
}

func setIssueLabels(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	return f.labelIssue(c, r, is, true)
}

// labelIssue adds the labels of the request body to is, in place of the
// ones it has when replace is set.
func (f *Fake) labelIssue(c *call, r *repoState, is *issueState, replace bool) *apiError {
	if e := f.need(r, c, "triage"); e != nil {
		return e
	}
	names, e := c.labelsBody()
	if e != nil {
		return e
	}
	if replace {
		for _, old := range is.labels {
			if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, old) }) {
				f.noteLabelEventLocked(is, "unlabeled", old, c.actor)
			}
		}
		is.labels = nil
	}
	for _, name := range names {
		l := f.ensureLabelLocked(r, name)
		if !is.hasLabel(name) {
			is.labels = append(is.labels, l.name)
			f.noteLabelEventLocked(is, "labeled", l.name, c.actor)
		}
	}
	is.updated = f.now().UTC()
	f.issueLabelsReply(c, r, is, http.StatusOK)
	return nil
}

func removeIssueLabel(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	if e := f.need(r, c, "triage"); e != nil {
		return e
	}
	name := c.param("name")
	kept := is.labels[:0:0]
	found := false
	for _, l := range is.labels {
		if strings.EqualFold(l, name) {
			found = true
			continue
		}
		kept = append(kept, l)
	}
	if !found {
		return &apiError{http.StatusNotFound, map[string]any{"message": "Label does not exist", "documentation_url": "https://docs.github.com/rest"}}
	}
	is.labels = kept
	f.noteLabelEventLocked(is, "unlabeled", name, c.actor)
	is.updated = f.now().UTC()
	f.issueLabelsReply(c, r, is, http.StatusOK)
	return nil
}

func listLabels(f *Fake, c *call, r *repoState) *apiError {
	c.json(http.StatusOK, pageJSON(c, sortedLabels(r), func(l *labelState) obj { return labelJSON(c, r, l) }))
	return nil
}

func createLabel(f *Fake, c *call, r *repoState) *apiError {
	if e := f.need(r, c, "write"); e != nil {
		return e
	}
	var in struct {
		Name        string `json:"name"`
		Color       string `json:"color"`
		Description string `json:"description"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	if _, exists := r.labels[strings.ToLower(in.Name)]; exists {
		return errValidation("Validation Failed", obj{"resource": "Label", "field": "name", "code": "already_exists"})
	}
	l := f.ensureLabelLocked(r, in.Name)
	if in.Color != "" {
		l.color = strings.TrimPrefix(in.Color, "#")
	}
	l.description = in.Description
	c.json(http.StatusCreated, labelJSON(c, r, l))
	return nil
}

func getLabel(f *Fake, c *call, r *repoState) *apiError {
	l, ok := r.labels[strings.ToLower(c.param("name"))]
	if !ok {
		return errNotFound()
	}
	c.json(http.StatusOK, labelJSON(c, r, l))
	return nil
}

// ---- workflow dispatch ----

// createWorkflowDispatch accepts a workflow_dispatch request; the fake runs
// nothing, the request log (Requests) is the record of it.
func createWorkflowDispatch(f *Fake, c *call, r *repoState) *apiError {
	if e := f.need(r, c, "write"); e != nil {
		return e
	}
	var in struct {
		Ref    string            `json:"ref"`
		Inputs map[string]string `json:"inputs"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	if strings.TrimSpace(in.Ref) == "" {
		return errValidation("Validation Failed", obj{"resource": "WorkflowDispatch", "field": "ref", "code": "missing_field"})
	}
	if len(in.Inputs) > 25 {
		return errValidation("too many inputs", obj{"resource": "WorkflowDispatch", "field": "inputs", "code": "invalid"})
	}
	r.dispatches = append(r.dispatches, Dispatch{Workflow: c.param("workflow_id"), AskedRef: in.Ref, Ref: r.fullRef(in.Ref), Inputs: in.Inputs})
	c.noContent()
	return nil
}

// listIssueEvents lists an issue's label events, oldest first, a page at
// a time as GitHub does.
func listIssueEvents(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	c.json(http.StatusOK, pageJSON(c, is.events, func(ev *issueEventState) obj { return f.issueEventJSON(c, r, ev) }))
	return nil
}
