package ghfake

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

func (f *Fake) pullFor(c *call, r *repoState) (*issueState, *apiError) {
	is, e := lookup(c, "pull_number", r.issues)
	if e == nil && is.pr == nil {
		return nil, errNotFound()
	}
	return is, e
}

func (f *Fake) isBot(login string) bool {
	u := f.users[strings.ToLower(login)]
	return strings.HasSuffix(login, "[bot]") || (u != nil && u.Type == "Bot")
}

// splitHead turns "owner:branch" or "branch" into the head repository and
// branch.
func splitHead(r *repoState, head string) (repo, branch string) {
	if owner, b, ok := strings.Cut(head, ":"); ok {
		if strings.EqualFold(owner, r.owner) {
			return r.fullName(), b
		}
		return owner + "/" + r.name, b
	}
	return r.fullName(), head
}

func listPulls(f *Fake, c *call, r *repoState) *apiError {
	q := c.r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var headRepo, headBranch string
	if h := q.Get("head"); h != "" {
		if !strings.Contains(h, ":") {
			// GitHub needs user:ref-name here; a bare branch matches nothing.
			c.json(http.StatusOK, []obj{})
			return nil
		}
		headRepo, headBranch = splitHead(r, h)
	}
	base := q.Get("base")
	var out []*issueState
	for _, is := range r.issues {
		if is.pr == nil || (state != "all" && is.state != state) {
			continue
		}
		if headBranch != "" && (!strings.EqualFold(is.pr.headRepo, headRepo) || is.pr.head != headBranch) {
			continue
		}
		if base != "" && is.pr.base != base {
			continue
		}
		out = append(out, is)
	}
	sortIssues(out, q.Get("sort"), q.Get("direction"))
	c.json(http.StatusOK, pageJSON(c, out, func(is *issueState) obj { return f.prJSON(c, r, is) }))
	return nil
}

func createPull(f *Fake, c *call, r *repoState) *apiError {
	var in struct {
		Title               string `json:"title"`
		Head                string `json:"head"`
		HeadRepo            string `json:"head_repo"`
		Base                string `json:"base"`
		Body                string `json:"body"`
		Draft               bool   `json:"draft"`
		MaintainerCanModify *bool  `json:"maintainer_can_modify"`
		Issue               int    `json:"issue"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	if e := f.need(r, c, "write"); e != nil {
		return e
	}
	if r.noActionsPRs && f.isBot(c.actor) {
		return errStatus(http.StatusForbidden, "GitHub Actions is not permitted to create or approve pull requests.")
	}
	headRepo, branch := splitHead(r, in.Head)
	if in.HeadRepo != "" {
		headRepo = in.HeadRepo
	}
	if in.Title == "" && in.Issue == 0 {
		return errValidation("Validation Failed", obj{"resource": "PullRequest", "field": "title", "code": "missing_field"})
	}
	if f.branchCheck != nil {
		if !f.branchCheck(r.fullName(), in.Base) {
			return errValidation("Validation Failed", obj{"resource": "PullRequest", "field": "base", "code": "invalid"})
		}
		if !f.branchCheck(headRepo, branch) {
			return errValidation("Validation Failed", obj{"resource": "PullRequest", "field": "head", "code": "invalid"})
		}
	}
	if strings.EqualFold(headRepo, r.fullName()) && branch == in.Base {
		return errValidation("Validation Failed", obj{"resource": "PullRequest", "code": "custom",
			"message": "No commits between " + in.Base + " and " + branch})
	}
	for _, is := range r.issues {
		if is.pr != nil && is.state == "open" && strings.EqualFold(is.pr.headRepo, headRepo) && is.pr.head == branch && is.pr.base == in.Base {
			owner, _, _ := strings.Cut(headRepo, "/")
			return errValidation("Validation Failed", obj{"resource": "PullRequest", "code": "custom",
				"message": "A pull request already exists for " + owner + ":" + branch + "."})
		}
	}
	is := f.newIssueLocked(r, c.actor, in.Title, in.Body)
	is.pr = &prState{head: branch, headRepo: headRepo, base: in.Base, draft: in.Draft,
		headSHA: fakeSHA(headRepo + ":" + branch), maintainerCanModify: in.MaintainerCanModify == nil || *in.MaintainerCanModify}
	c.w.Header().Set("Location", c.apiBase+"repos/"+r.fullName()+"/pulls/"+strconv.Itoa(is.number))
	c.json(http.StatusCreated, f.prJSON(c, r, is))
	return nil
}

func getPull(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	accept := c.r.Header.Get("Accept")
	switch {
	case strings.Contains(accept, ".diff"):
		c.text(http.StatusOK, "text/plain; charset=utf-8", is.pr.diff)
		return nil
	case strings.Contains(accept, ".patch"):
		c.text(http.StatusOK, "text/plain; charset=utf-8", is.pr.diff)
		return nil
	}
	c.json(http.StatusOK, f.prJSON(c, r, is))
	return nil
}

func editPull(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	if e := f.needUnlessAuthor(r, c, is.author, "write"); e != nil {
		return e
	}
	var in struct {
		Title               *string `json:"title"`
		Body                *string `json:"body"`
		State               *string `json:"state"`
		Base                *string `json:"base"`
		MaintainerCanModify *bool   `json:"maintainer_can_modify"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	now := f.now().UTC()
	if in.Title != nil {
		is.title = *in.Title
	}
	if in.Body != nil {
		is.body = *in.Body
	}
	if in.Base != nil {
		is.pr.base = *in.Base
	}
	if in.MaintainerCanModify != nil {
		is.pr.maintainerCanModify = *in.MaintainerCanModify
	}
	if in.State != nil && *in.State != is.state {
		is.state = *in.State
		if is.state == "closed" {
			is.closed = now
		}
	}
	is.updated = now
	c.json(http.StatusOK, f.prJSON(c, r, is))
	return nil
}

func listPullFiles(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	c.json(http.StatusOK, pageJSON(c, is.pr.files, func(pf PRFile) obj {
		o := obj{"sha": fakeSHA(pf.Filename + pf.Patch), "filename": pf.Filename, "status": pf.Status,
			"additions": pf.Additions, "deletions": pf.Deletions, "changes": pf.Additions + pf.Deletions,
			"blob_url":     f.ServerURL() + "/" + r.fullName() + "/blob/" + is.pr.headSHA + "/" + pf.Filename,
			"raw_url":      f.ServerURL() + "/" + r.fullName() + "/raw/" + is.pr.headSHA + "/" + pf.Filename,
			"contents_url": c.apiBase + "repos/" + r.fullName() + "/contents/" + pf.Filename + "?ref=" + is.pr.headSHA}
		// GitHub gives no patch for a binary or too large file, nor for
		// a pure move, and names a moved file's old name.
		if pf.Patch != "" {
			o["patch"] = pf.Patch
		}
		if pf.PreviousFilename != "" {
			o["previous_filename"] = pf.PreviousFilename
		}
		return o
	}))
	return nil
}

// ---- reviewers ----

func listRequestedReviewers(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	users := []obj{}
	for _, login := range is.pr.requested {
		users = append(users, f.userJSON(c, login))
	}
	c.json(http.StatusOK, obj{"users": users, "teams": []obj{}})
	return nil
}

func requestReviewers(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	if e := f.need(r, c, "triage"); e != nil {
		return e
	}
	var in struct {
		Reviewers     []string `json:"reviewers"`
		TeamReviewers []string `json:"team_reviewers"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	for _, login := range in.Reviewers {
		if strings.EqualFold(login, is.author) {
			return errValidation("Review cannot be requested from pull request author.")
		}
		if _, ok := r.perms[strings.ToLower(login)]; !ok {
			return errValidation("Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the " + r.fullName() + " repository.")
		}
	}
	for _, login := range in.Reviewers {
		dup := false
		for _, have := range is.pr.requested {
			dup = dup || strings.EqualFold(have, login)
		}
		if !dup {
			is.pr.requested = append(is.pr.requested, f.addUserLocked(login, "").Login)
		}
	}
	c.json(http.StatusCreated, f.prJSON(c, r, is))
	return nil
}

// ---- reviews ----

func listReviews(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	all := sortedReviews(r, is.number)
	var visible []*reviewState
	for _, rv := range all {
		// Pending reviews are only visible to their author.
		if rv.state != "PENDING" || strings.EqualFold(rv.author, c.actor) {
			visible = append(visible, rv)
		}
	}
	c.json(http.StatusOK, pageJSON(c, visible, func(rv *reviewState) obj { return f.reviewJSON(c, r, rv) }))
	return nil
}

type draftComment struct {
	Path      string `json:"path"`
	Position  int    `json:"position"`
	Body      string `json:"body"`
	Line      int    `json:"line"`
	Side      string `json:"side"`
	StartLine int    `json:"start_line"`
	StartSide string `json:"start_side"`
}

func createReview(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	var in struct {
		CommitID string         `json:"commit_id"`
		Body     string         `json:"body"`
		Event    string         `json:"event"`
		Comments []draftComment `json:"comments"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	state := map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED", "": "PENDING"}[in.Event]
	if msg := f.reviewRefusal(c, r, is, in.Event, in.Body, len(in.Comments)); msg != "" {
		return errValidation("Unprocessable Entity", msg)
	}
	commit := in.CommitID
	if commit == "" {
		commit = is.pr.headSHA
	}
	var placed []*reviewCommentState
	for _, dc := range in.Comments {
		rc, msg := placeComment(is.pr, dc)
		if msg != "" {
			return errValidation("Unprocessable Entity", msg)
		}
		placed = append(placed, rc)
	}
	now := f.now().UTC()
	rv := &reviewState{id: f.id(), pr: is.number, author: c.actor, body: in.Body, state: state, commitID: commit}
	if state != "PENDING" {
		rv.submitted = now
	}
	r.reviews[rv.id] = rv
	for _, rc := range placed {
		rc.id, rc.pr, rc.reviewID, rc.author, rc.commitID = f.id(), is.number, rv.id, c.actor, commit
		rc.created, rc.updated = now, now
		r.reviewCmts[rc.id] = rc
	}
	c.json(http.StatusOK, f.reviewJSON(c, r, rv))
	return nil
}

// reviewRefusal is GitHub's complaint about a new review with this event
// and body from the caller, or "" when the review may be created.
func (f *Fake) reviewRefusal(c *call, r *repoState, is *issueState, event, body string, comments int) string {
	if event == "APPROVE" || event == "REQUEST_CHANGES" {
		if strings.EqualFold(c.actor, is.author) {
			verb := map[string]string{"APPROVE": "approve", "REQUEST_CHANGES": "request changes on"}[event]
			return "Can not " + verb + " your own pull request"
		}
		if event == "APPROVE" && r.noActionsPRs && f.isBot(c.actor) {
			return "GitHub Actions is not permitted to approve pull requests."
		}
	}
	if (event == "COMMENT" || event == "REQUEST_CHANGES") && body == "" && comments == 0 {
		return "Review body is required for event " + event
	}
	if event == "" {
		for _, rv := range r.reviews {
			if rv.pr == is.number && rv.state == "PENDING" && strings.EqualFold(rv.author, c.actor) {
				return "User can only have one pending review per pull request"
			}
		}
	}
	return ""
}

// placeComment checks a draft inline comment against the pull request's
// files like GitHub does and returns where it lands, or GitHub's complaint.
// Without recorded files every placement is accepted.
func placeComment(pr *prState, dc draftComment) (*reviewCommentState, string) {
	rc := &reviewCommentState{path: dc.Path, body: dc.Body, line: dc.Line, startLine: dc.StartLine,
		side: dc.Side, position: dc.Position}
	if rc.side == "" && (dc.Line > 0) {
		rc.side = "RIGHT"
	}
	if dc.Line == 0 && dc.Position == 0 {
		return nil, "Unprocessable Entity: a review comment needs line or position"
	}
	if pr.files == nil {
		return rc, ""
	}
	var file *PRFile
	for i := range pr.files {
		if pr.files[i].Filename == dc.Path {
			file = &pr.files[i]
		}
	}
	if file == nil {
		return nil, "Path could not be resolved"
	}
	d := parsePatch(file.Patch)
	if dc.Position > 0 {
		if dc.Position > d.positions {
			return nil, "Pull request review thread position is invalid"
		}
		rc.diffHunk = d.hunkUpTo(dc.Position)
		return rc, ""
	}
	lines := d.right
	if rc.side == "LEFT" {
		lines = d.left
	}
	if !lines[dc.Line] {
		return nil, "Pull request review thread line must be part of the diff"
	}
	if dc.StartLine > 0 {
		startLines := d.right
		if dc.StartSide == "LEFT" {
			startLines = d.left
		}
		if dc.StartLine >= dc.Line || !startLines[dc.StartLine] {
			return nil, "Pull request review thread start line must be part of the same hunk as the line."
		}
	}
	rc.diffHunk = d.hunkFor(rc.side, dc.Line)
	return rc, ""
}

// patchInfo records which lines a unified diff shows on each side.
type patchInfo struct {
	left, right map[int]bool
	lines       []string
	positions   int
	rightLine   map[int]int // new-file line -> index in lines
	leftLine    map[int]int
}

func parsePatch(patch string) patchInfo {
	d := patchInfo{left: map[int]bool{}, right: map[int]bool{}, rightLine: map[int]int{}, leftLine: map[int]int{}}
	d.lines = strings.Split(strings.TrimSuffix(patch, "\n"), "\n")
	oldN, newN := 0, 0
	for i, l := range d.lines {
		if strings.HasPrefix(l, "@@") {
			var a, b, c2, d2 int
			if _, err := fmt.Sscanf(l, "@@ -%d,%d +%d,%d", &a, &b, &c2, &d2); err != nil {
				// Hunks of one line omit the count.
				fields := strings.Fields(l)
				if len(fields) >= 3 {
					a, _ = strconv.Atoi(strings.Split(strings.TrimPrefix(fields[1], "-"), ",")[0])
					c2, _ = strconv.Atoi(strings.Split(strings.TrimPrefix(fields[2], "+"), ",")[0])
				}
			}
			oldN, newN = a, c2
			if i > 0 {
				d.positions++
			}
			continue
		}
		d.positions++
		switch {
		case strings.HasPrefix(l, "+"):
			d.right[newN], d.rightLine[newN] = true, i
			newN++
		case strings.HasPrefix(l, "-"):
			d.left[oldN], d.leftLine[oldN] = true, i
			oldN++
		case strings.HasPrefix(l, `\`):
		default:
			d.right[newN], d.rightLine[newN] = true, i
			d.left[oldN], d.leftLine[oldN] = true, i
			oldN++
			newN++
		}
	}
	return d
}

func (d patchInfo) hunkFor(side string, line int) string {
	idx := d.rightLine[line]
	if side == "LEFT" {
		idx = d.leftLine[line]
	}
	return d.hunkUpToIndex(idx)
}

func (d patchInfo) hunkUpTo(position int) string { return d.hunkUpToIndex(position) }

func (d patchInfo) hunkUpToIndex(idx int) string {
	if idx >= len(d.lines) {
		idx = len(d.lines) - 1
	}
	start := 0
	for i := idx; i >= 0; i-- {
		if strings.HasPrefix(d.lines[i], "@@") {
			start = i
			break
		}
	}
	return strings.Join(d.lines[start:idx+1], "\n")
}

// reviewFor looks up a review of the pull request the path names.
func (f *Fake) reviewFor(c *call, r *repoState) (*reviewState, *apiError) {
	is, e := f.pullFor(c, r)
	if e != nil {
		return nil, e
	}
	rv, e := lookup(c, "review_id", r.reviews)
	if e == nil && rv.pr != is.number {
		return nil, errNotFound()
	}
	return rv, e
}

func updateReview(f *Fake, c *call, r *repoState, rv *reviewState) *apiError {
	if !strings.EqualFold(rv.author, c.actor) {
		return errStatus(http.StatusForbidden, "You can only update your own reviews")
	}
	var in struct {
		Body string `json:"body"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	rv.body = in.Body
	c.json(http.StatusOK, f.reviewJSON(c, r, rv))
	return nil
}

func (f *Fake) replyList(c *call, r *repoState, keep func(*reviewCommentState) bool) {
	all := sortedReviewComments(r, keep)
	c.json(http.StatusOK, pageJSON(c, all, func(rc *reviewCommentState) obj { return f.reviewCommentJSON(c, r, rc) }))
}

func listReviewCommentsOfReview(f *Fake, c *call, r *repoState, rv *reviewState) *apiError {
	f.replyList(c, r, func(rc *reviewCommentState) bool { return rc.reviewID == rv.id })
	return nil
}

func listReviewComments(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	f.replyList(c, r, func(rc *reviewCommentState) bool { return rc.pr == is.number })
	return nil
}

func (f *Fake) reply(c *call, r *repoState, is *issueState, parentID int64, body string) *apiError {
	parent := r.reviewCmts[parentID]
	if parent == nil || parent.pr != is.number {
		return errNotFound()
	}
	// Replies attach to the thread's first comment, as on GitHub.
	for parent.inReplyTo != 0 && r.reviewCmts[parent.inReplyTo] != nil {
		parent = r.reviewCmts[parent.inReplyTo]
	}
	return f.commentAlone(c, r, is, &reviewCommentState{inReplyTo: parent.id,
		path: parent.path, line: parent.line, startLine: parent.startLine, side: parent.side, position: parent.position,
		body: body, commitID: parent.commitID, diffHunk: parent.diffHunk})
}

// commentAlone posts rc, placed but not yet recorded, by the actor in a
// review of its own, as GitHub does with a comment made outside a review.
func (f *Fake) commentAlone(c *call, r *repoState, is *issueState, rc *reviewCommentState) *apiError {
	now := f.now().UTC()
	rv := &reviewState{id: f.id(), pr: is.number, author: c.actor, state: "COMMENTED", commitID: rc.commitID, submitted: now}
	r.reviews[rv.id] = rv
	rc.id, rc.pr, rc.reviewID, rc.author, rc.created, rc.updated = f.id(), is.number, rv.id, c.actor, now, now
	r.reviewCmts[rc.id] = rc
	c.json(http.StatusCreated, f.reviewCommentJSON(c, r, rc))
	return nil
}

func createReviewComment(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	var in struct {
		draftComment
		CommitID  string `json:"commit_id"`
		InReplyTo int64  `json:"in_reply_to"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	if in.InReplyTo != 0 {
		return f.reply(c, r, is, in.InReplyTo, in.Body)
	}
	rc, msg := placeComment(is.pr, in.draftComment)
	if msg != "" {
		return errValidation("Unprocessable Entity", msg)
	}
	rc.commitID = in.CommitID
	if rc.commitID == "" {
		rc.commitID = is.pr.headSHA
	}
	return f.commentAlone(c, r, is, rc)
}

func replyReviewComment(f *Fake, c *call, r *repoState, is *issueState) *apiError {
	id, e := c.int64Param("comment_id")
	if e != nil {
		return e
	}
	var in struct {
		Body string `json:"body"`
	}
	if e := c.decode(&in); e != nil {
		return e
	}
	return f.reply(c, r, is, id, in.Body)
}

func (f *Fake) reviewCommentFor(c *call, r *repoState) (*reviewCommentState, *apiError) {
	return lookup(c, "comment_id", r.reviewCmts)
}
