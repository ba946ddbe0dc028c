package locate

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/gitrepo"
)

// An issue that cites an earlier one ("related to #4422", a link to
// /issues/4422) points at the code that earlier fix changed: the commits
// whose messages cite the same number (a squashed "… (#4422)", a merge of
// pull request #4422, a "Fixes #4422") name their files.
const (
	// refCommits bounds the commits read for citations (newest first,
	// merges included: a merge of a pull request is where its number
	// often stands).
	refCommits = 5000
)

var (
	// issueRefRe finds the numbers an issue cites: #123 not inside a
	// word, a URL or an HTML entity, or an /issues/123 or /pull/123 link.
	issueRefRe = regexp.MustCompile(`(?:^|[^\w/&])#(\d{2,6})\b|/(?:issues|pull)/(\d{2,6})\b`)
	// commitRefRe finds the numbers a commit message cites.
	commitRefRe = regexp.MustCompile(`#(\d+)\b`)
)

// issueRefs returns the issue and pull request numbers a text cites, in
// first-seen order.
func issueRefs(q string) []string {
	var out []string
	for _, m := range issueRefRe.FindAllStringSubmatch(q, -1) {
		n := strings.TrimLeft(m[1]+m[2], "0")
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// gitRefLog reads the newest refCommits commits reachable from src.rev,
// merges with their changes against the first parent: records of NUL,
// short hash, \x01, message, \x02 and the changed paths one a line. No
// source, no log.
func gitRefLog(ctx context.Context, src historySource) ([]byte, error) {
	if src.dir == "" {
		return nil, nil
	}
	rev := src.rev
	if rev == "" {
		rev = "HEAD"
	}
	out, err := gitrepo.Output(ctx, src.dir, "-c", "core.quotepath=off", "log", "-n", fmt.Sprint(refCommits),
		"--diff-merges=first-parent", "--no-show-signature", "--no-renames", "--relative", "--format=%x00%h%x01%B%x02", "--name-only", rev, "--")
	if err != nil {
		return nil, fmt.Errorf("reading cited commits: %w", err)
	}
	return out, nil
}

// setRefs indexes a gitRefLog output: each commit whose message cites a
// number and that changed between one and historyMaxFiles indexed files.
func (ix *Index) setRefs(out []byte) {
	h := &ix.hist
	postings := map[string][]byte{}
	last := map[string]int{}
	h.refOff = []uint32{0}
	h.refTo = []uint32{}
	var subjects strings.Builder
	c := 0
	for _, rec := range bytes.Split(out, []byte{0}) {
		hash, rest, ok := bytes.Cut(rec, []byte{1})
		if !ok {
			continue
		}
		msg, names, ok := bytes.Cut(rest, []byte{2})
		if !ok {
			continue
		}
		var cited []string
		for _, m := range commitRefRe.FindAllSubmatch(msg, -1) {
			if n := strings.TrimLeft(string(m[1]), "0"); n != "" && !slices.Contains(cited, n) {
				cited = append(cited, n)
			}
		}
		if len(cited) == 0 {
			continue
		}
		files := ix.changedFiles(names)
		if len(files) == 0 || len(files) > historyMaxFiles {
			continue
		}
		for _, n := range cited {
			l := last[n]
			postings[n] = appendPosting(postings[n], &l, c, 1)
			last[n] = l
		}
		h.refTo = append(h.refTo, files...)
		h.refOff = append(h.refOff, uint32(len(h.refTo)))
		subjects.WriteString(string(hash) + " " + abbrev.Truncate(abbrev.FirstLine(string(msg)), historySubject) + "\n")
		c++
	}
	h.refs = tableBuilder(postings).build()
	h.refSubjects = subjects.String()
}

// changedFiles maps a commit's changed paths, one a line, to the indexed
// files among them.
func (ix *Index) changedFiles(names []byte) []uint32 {
	var files []uint32
	for _, name := range bytes.Split(names, []byte("\n")) {
		if f, ok := ix.byPath(string(bytes.TrimSpace(name))); ok {
			files = append(files, uint32(f))
		}
	}
	return files
}

// citedChanges sets fIssueRefs on the files changed by past commits that
// cite a number the issue cites.
func (ix *Index) citedChanges(query string, ev *evidence) {
	h := &ix.hist
	if len(h.refOff) < 2 {
		return
	}
	subjects := strings.Split(h.refSubjects, "\n")
	for _, n := range issueRefs(query) {
		eachPosting(h.refs.get(n), func(c int, _ uint32) {
			if c+1 >= len(h.refOff) {
				return
			}
			for _, f := range h.refTo[h.refOff[c]:h.refOff[c+1]] {
				if int(f) >= len(ev.feats) || ev.feats[f][fIssueRefs] > 0 {
					continue
				}
				ev.feats[f][fIssueRefs] = 1
				hash, subject, _ := strings.Cut(subjects[c], " ")
				ev.note(fIssueRefs, int(f), fmt.Sprintf("changed by %s “%s”, which cites #%s as the issue does", hash, subject, n))
			}
		})
	}
}
