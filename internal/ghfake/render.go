package ghfake

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Rendering of state into GitHub's JSON shapes. All functions run with
// f.mu held.

type obj = map[string]any

func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func (f *Fake) userJSON(c *call, login string) obj {
	if login == "" {
		return nil
	}
	u := f.addUserLocked(login, "")
	return obj{
		"login": u.Login, "id": u.ID, "node_id": nodeID("U_", u.ID), "type": u.Type,
		"site_admin": false, "avatar_url": "https://avatars.githubusercontent.com/u/" + strconv.FormatInt(u.ID, 10),
		"gravatar_id": "", "url": c.apiBase + "users/" + url.PathEscape(u.Login),
		"html_url": f.ServerURL() + "/" + url.PathEscape(u.Login),
	}
}

func (f *Fake) repoJSON(c *call, r *repoState) obj {
	api := c.apiBase + "repos/" + r.fullName()
	return obj{
		"id": r.id, "node_id": nodeID("R_", r.id), "name": r.name, "full_name": r.fullName(),
		"owner": f.userJSON(c, r.owner), "private": r.private, "fork": r.fork,
		"visibility": map[bool]string{true: "private", false: "public"}[r.private],
		"html_url":   f.ServerURL() + "/" + r.fullName(), "url": api,
		"clone_url":      f.ServerURL() + "/" + r.fullName() + ".git",
		"default_branch": r.defaultBranch, "archived": false, "disabled": false,
		"has_issues": true, "open_issues_count": openCount(r),
		"created_at": "2020-01-01T00:00:00Z", "updated_at": "2020-01-01T00:00:00Z", "pushed_at": "2020-01-01T00:00:00Z",
	}
}

func openCount(r *repoState) int {
	n := 0
	for _, is := range r.issues {
		if is.state == "open" {
			n++
		}
	}
	return n
}

func (f *Fake) association(r *repoState, login string) string {
	if strings.EqualFold(login, r.owner) {
		return "OWNER"
	}
	if _, ok := r.perms[strings.ToLower(login)]; ok {
		return "COLLABORATOR"
	}
	return "NONE"
}

func labelJSON(c *call, r *repoState, l *labelState) obj {
	return obj{"id": l.id, "node_id": nodeID("LA_", l.id), "name": l.name, "color": l.color,
		"description": l.description, "default": false,
		"url": c.apiBase + "repos/" + r.fullName() + "/labels/" + url.PathEscape(l.name)}
}

func (f *Fake) issueLabels(c *call, r *repoState, is *issueState) []obj {
	out := []obj{}
	for _, name := range is.labels {
		out = append(out, labelJSON(c, r, f.ensureLabelLocked(r, name)))
	}
	return out
}

func reactionSummary(url string, rs []*reactionState) obj {
	s := obj{"url": url, "total_count": len(rs)}
	for _, k := range reactionContents {
		s[k] = 0
	}
	for _, r := range rs {
		s[r.content] = s[r.content].(int) + 1
	}
	return s
}

var reactionContents = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

func (f *Fake) issueJSON(c *call, r *repoState, is *issueState) obj {
	api := c.apiBase + "repos/" + r.fullName() + "/issues/" + strconv.Itoa(is.number)
	kind := "issues"
	if is.pr != nil {
		kind = "pull"
	}
	o := obj{
		"id": is.id, "node_id": nodeID("I_", is.id), "number": is.number, "title": is.title,
		"body": is.body, "state": is.state, "locked": is.locked, "user": f.userJSON(c, is.author),
		"labels": f.issueLabels(c, r, is), "assignees": []obj{}, "assignee": nil, "milestone": nil,
		"comments": countComments(r, is.number), "created_at": ts(is.created), "updated_at": ts(is.updated),
		"closed_at": ts(is.closed), "author_association": f.association(r, is.author),
		"url": api, "repository_url": c.apiBase + "repos/" + r.fullName(),
		"comments_url": api + "/comments", "labels_url": api + "/labels{/name}", "events_url": api + "/events",
		"html_url":  fmt.Sprintf("%s/%s/%s/%d", f.ServerURL(), r.fullName(), kind, is.number),
		"reactions": reactionSummary(api+"/reactions", is.reactions),
	}
	if is.pr != nil {
		pr := c.apiBase + "repos/" + r.fullName() + "/pulls/" + strconv.Itoa(is.number)
		o["pull_request"] = obj{"url": pr, "html_url": o["html_url"],
			"diff_url": o["html_url"].(string) + ".diff", "patch_url": o["html_url"].(string) + ".patch", "merged_at": nil}
		o["draft"] = is.pr.draft
	}
	return o
}

func countComments(r *repoState, number int) int {
	return countWhere(r.comments, func(c *commentState) bool { return c.issue == number })
}

// countWhere counts the values of m that match.
func countWhere[K comparable, V any](m map[K]V, match func(V) bool) int {
	n := 0
	for _, v := range m {
		if match(v) {
			n++
		}
	}
	return n
}

func (f *Fake) commentJSON(c *call, r *repoState, cm *commentState) obj {
	api := c.apiBase + "repos/" + r.fullName() + "/issues/comments/" + strconv.FormatInt(cm.id, 10)
	kind := "issues"
	if is := r.issues[cm.issue]; is != nil && is.pr != nil {
		kind = "pull"
	}
	return obj{
		"id": cm.id, "node_id": nodeID("IC_", cm.id), "url": api,
		"html_url":  fmt.Sprintf("%s/%s/%s/%d#issuecomment-%d", f.ServerURL(), r.fullName(), kind, cm.issue, cm.id),
		"issue_url": c.apiBase + "repos/" + r.fullName() + "/issues/" + strconv.Itoa(cm.issue),
		"body":      cm.body, "user": f.userJSON(c, cm.author),
		"created_at": ts(cm.created), "updated_at": ts(cm.updated),
		"author_association": f.association(r, cm.author),
		"reactions":          reactionSummary(api+"/reactions", cm.reactions),
	}
}

func (f *Fake) reactionJSON(c *call, rc *reactionState) obj {
	return obj{"id": rc.id, "node_id": nodeID("REA_", rc.id), "user": f.userJSON(c, rc.user),
		"content": rc.content, "created_at": ts(rc.created)}
}

func (f *Fake) branchJSON(c *call, r *repoState, repoFull, ref, sha string) obj {
	o := obj{"label": strings.Split(repoFull, "/")[0] + ":" + ref, "ref": ref, "sha": sha,
		"user": f.userJSON(c, strings.Split(repoFull, "/")[0])}
	if hr := f.repos[strings.ToLower(repoFull)]; hr != nil {
		o["repo"] = f.repoJSON(c, hr)
	} else {
		owner, name, _ := strings.Cut(repoFull, "/")
		o["repo"] = obj{"name": name, "full_name": repoFull, "owner": f.userJSON(c, owner), "fork": true,
			"private": false, "html_url": f.ServerURL() + "/" + repoFull}
	}
	return o
}

func (f *Fake) prJSON(c *call, r *repoState, is *issueState) obj {
	api := c.apiBase + "repos/" + r.fullName() + "/pulls/" + strconv.Itoa(is.number)
	html := fmt.Sprintf("%s/%s/pull/%d", f.ServerURL(), r.fullName(), is.number)
	reviewers := []obj{}
	for _, login := range is.pr.requested {
		reviewers = append(reviewers, f.userJSON(c, login))
	}
	var mergedAt any
	if is.pr.merged {
		mergedAt = ts(is.closed)
	}
	return obj{
		"id": is.id, "node_id": nodeID("PR_", is.id), "number": is.number, "state": is.state,
		"locked": is.locked, "title": is.title, "body": is.body, "user": f.userJSON(c, is.author),
		"labels": f.issueLabels(c, r, is), "draft": is.pr.draft, "merged": is.pr.merged,
		"merged_at": mergedAt, "mergeable": true, "maintainer_can_modify": is.pr.maintainerCanModify,
		"created_at": ts(is.created), "updated_at": ts(is.updated), "closed_at": ts(is.closed),
		"requested_reviewers": reviewers, "requested_teams": []obj{}, "assignees": []obj{},
		"head":               f.branchJSON(c, r, is.pr.headRepo, is.pr.head, is.pr.headSHA),
		"base":               f.branchJSON(c, r, r.fullName(), is.pr.base, fakeSHA(r.fullName()+":"+is.pr.base)),
		"author_association": f.association(r, is.author),
		"url":                api, "html_url": html, "diff_url": html + ".diff", "patch_url": html + ".patch",
		"issue_url":           c.apiBase + "repos/" + r.fullName() + "/issues/" + strconv.Itoa(is.number),
		"comments_url":        c.apiBase + "repos/" + r.fullName() + "/issues/" + strconv.Itoa(is.number) + "/comments",
		"review_comments_url": api + "/comments", "commits_url": api + "/commits",
		"comments": countComments(r, is.number), "review_comments": countReviewComments(r, is.number),
		"changed_files": len(is.pr.files),
		"_links": obj{"self": obj{"href": api}, "html": obj{"href": html},
			"issue": obj{"href": c.apiBase + "repos/" + r.fullName() + "/issues/" + strconv.Itoa(is.number)}},
	}
}

func countReviewComments(r *repoState, number int) int {
	return countWhere(r.reviewCmts, func(c *reviewCommentState) bool { return c.pr == number })
}

func (f *Fake) reviewJSON(c *call, r *repoState, rv *reviewState) obj {
	html := fmt.Sprintf("%s/%s/pull/%d#pullrequestreview-%d", f.ServerURL(), r.fullName(), rv.pr, rv.id)
	return obj{
		"id": rv.id, "node_id": nodeID("PRR_", rv.id), "user": f.userJSON(c, rv.author), "body": rv.body,
		"state": rv.state, "commit_id": rv.commitID, "submitted_at": ts(rv.submitted), "html_url": html,
		"pull_request_url":   c.apiBase + "repos/" + r.fullName() + "/pulls/" + strconv.Itoa(rv.pr),
		"author_association": f.association(r, rv.author),
		"_links":             obj{"html": obj{"href": html}, "pull_request": obj{"href": c.apiBase + "repos/" + r.fullName() + "/pulls/" + strconv.Itoa(rv.pr)}},
	}
}

func (f *Fake) reviewCommentJSON(c *call, r *repoState, rc *reviewCommentState) obj {
	api := c.apiBase + "repos/" + r.fullName() + "/pulls/comments/" + strconv.FormatInt(rc.id, 10)
	html := fmt.Sprintf("%s/%s/pull/%d#discussion_r%d", f.ServerURL(), r.fullName(), rc.pr, rc.id)
	o := obj{
		"id": rc.id, "node_id": nodeID("PRRC_", rc.id), "pull_request_review_id": rc.reviewID,
		"path": rc.path, "commit_id": rc.commitID, "original_commit_id": rc.commitID, "diff_hunk": rc.diffHunk,
		"user": f.userJSON(c, rc.author), "body": rc.body, "created_at": ts(rc.created), "updated_at": ts(rc.updated),
		"html_url": html, "url": api, "author_association": f.association(r, rc.author),
		"pull_request_url": c.apiBase + "repos/" + r.fullName() + "/pulls/" + strconv.Itoa(rc.pr),
		"side":             rc.side, "subject_type": "line",
		"reactions": reactionSummary(api+"/reactions", rc.reactions),
		"_links":    obj{"self": obj{"href": api}, "html": obj{"href": html}},
	}
	if rc.line > 0 {
		o["line"], o["original_line"] = rc.line, rc.line
	}
	if rc.startLine > 0 {
		o["start_line"], o["original_start_line"], o["start_side"] = rc.startLine, rc.startLine, rc.side
	}
	if rc.position > 0 {
		o["position"], o["original_position"] = rc.position, rc.position
	}
	if rc.inReplyTo != 0 {
		o["in_reply_to_id"] = rc.inReplyTo
	}
	return o
}

func sortedLabels(r *repoState) []*labelState {
	out := make([]*labelState, 0, len(r.labels))
	for _, l := range r.labels {
		out = append(out, l)
	}
	sort.Slice(out, func(a, b int) bool { return strings.ToLower(out[a].name) < strings.ToLower(out[b].name) })
	return out
}

func sortedReviews(r *repoState, pr int) []*reviewState {
	var out []*reviewState
	for _, rv := range r.reviews {
		if rv.pr == pr {
			out = append(out, rv)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].id < out[b].id })
	return out
}

func sortedReviewComments(r *repoState, keep func(*reviewCommentState) bool) []*reviewCommentState {
	var out []*reviewCommentState
	for _, c := range r.reviewCmts {
		if keep(c) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].id < out[b].id })
	return out
}

// pageJSON renders the page of items the request asks for (see paginate).
func pageJSON[T any](c *call, items []T, render func(T) obj) []obj {
	page := paginate(c, items)
	out := make([]obj, 0, len(page))
	for _, v := range page {
		out = append(out, render(v))
	}
	return out
}

// paginate cuts items by the page and per_page query parameters and sets
// GitHub's Link header.
func paginate[T any](c *call, items []T) []T {
	q := c.r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	if per > 100 {
		per = 100
	}
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	last := (len(items) + per - 1) / per
	if last == 0 {
		last = 1
	}
	link := func(p int, rel string) string {
		q2 := c.r.URL.Query()
		q2.Set("page", strconv.Itoa(p))
		q2.Set("per_page", strconv.Itoa(per))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, strings.TrimSuffix(c.apiBase, "/"), c.apiPath, q2.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		c.w.Header().Set("Link", strings.Join(links, ", "))
	}
	start := (page - 1) * per
	if start >= len(items) {
		return []T{}
	}
	end := min(start+per, len(items))
	return items[start:end]
}

func (f *Fake) issueEventJSON(c *call, r *repoState, ev *issueEventState) obj {
	color := "ededed"
	if l, ok := r.labels[strings.ToLower(ev.label)]; ok {
		color = l.color
	}
	return obj{
		"id": ev.id, "node_id": nodeID("LE_", ev.id),
		"url":   c.apiBase + "repos/" + r.fullName() + "/issues/events/" + strconv.FormatInt(ev.id, 10),
		"actor": f.userJSON(c, ev.actor), "event": ev.event, "commit_id": nil, "commit_url": nil,
		"created_at": ts(ev.created), "performed_via_github_app": nil,
		"label": obj{"name": ev.label, "color": color},
	}
}
