package locate

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
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

// cited is the index's part for past commits that cite numbers.
type cited struct {
	// terms maps a cited number (#123 → "123") to postings (commit, 1).
	terms table
	// off and to list each commit's changed files: commit c changed
	// to[off[c]:off[c+1]].
	off, to []uint32
	// subjects are the commits' short hashes and first lines, one a line.
	subjects string
}

func emptyCited() cited {
	return cited{terms: tableBuilder{}.build(), off: []uint32{0}, to: []uint32{}}
}

// setCited indexes readLogs' cited: each commit whose message cites a
// number and that changed between one and historyMaxFiles indexed files.
func (ix *Index) setCited(out []byte) { ix.cited = citedOf(out, ix) }

// citedOf is the cited commits setCited indexes, their paths looked up
// in paths.
func citedOf(out []byte, paths pathFinder) cited {
	ct := emptyCited()
	postings := map[string][]byte{}
	last := map[string]int{}
	var subjects strings.Builder
	// commitRefRe finds nothing in a message without a '#': most commits'
	// paths are not looked up.
	cites := func(msg []byte) bool { return bytes.IndexByte(msg, '#') >= 0 }
	eachCommit(out, paths, cites, func(hash, msg []byte, files []uint32) {
		var nums []string
		for _, m := range commitRefRe.FindAllSubmatch(msg, -1) {
			if n := strings.TrimLeft(string(m[1]), "0"); n != "" && !slices.Contains(nums, n) {
				nums = append(nums, n)
			}
		}
		if len(nums) == 0 {
			return
		}
		c := len(ct.off) - 1
		for _, n := range nums {
			l := last[n]
			postings[n] = appendPosting(postings[n], &l, c, 1)
			last[n] = l
		}
		ct.to = append(ct.to, files...)
		ct.off = append(ct.off, uint32(len(ct.to)))
		subjects.WriteString(commitSubject(hash, msg) + "\n")
	})
	ct.terms = tableBuilder(postings).build()
	ct.subjects = subjects.String()
	return ct
}

// citedChanges sets fIssueRefs on the files changed by past commits that
// cite a number the issue cites.
func (ix *Index) citedChanges(query string, ev *evidence) {
	ct := &ix.cited
	if len(ct.off) < 2 {
		return
	}
	subjects := strings.Split(ct.subjects, "\n")
	for _, n := range issueRefs(query) {
		eachPosting(ct.terms.get(n), func(c int, _ uint32) {
			if c+1 >= len(ct.off) {
				return
			}
			for _, f := range ct.to[ct.off[c]:ct.off[c+1]] {
				if int(f) >= ev.feats.len() || ev.feats.at(fIssueRefs, int(f)) > 0 {
					continue
				}
				ev.feats.set(fIssueRefs, int(f), 1)
				hash, subject, _ := strings.Cut(subjects[c], " ")
				ev.note(fIssueRefs, int(f), fmt.Sprintf("changed by %s “%s”, which cites #%s as the issue does", hash, subject, n))
			}
		})
	}
}
