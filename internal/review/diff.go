package review

import (
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// FileDiff is what a unified diff shows of one file: the new-side lines it
// adds and the unchanged lines it shows around them.
type FileDiff struct {
	Path    string
	Added   map[int]bool
	Context map[int]bool
}

// Diff is a parsed unified diff, by new-side path.
type Diff map[string]*FileDiff

// Added reports whether line of path is added by the diff: the only lines
// planex anchors an inline comment to. Unchanged lines, even ones the diff
// shows as context, are left to the review's body.
func (d Diff) Added(path string, line int) bool {
	f := d[strings.TrimPrefix(path, "./")]
	return f != nil && f.Added[line]
}

// Shown reports whether line of path appears in the diff at all (added or
// context) on the new side.
func (d Diff) Shown(path string, line int) bool {
	f := d[strings.TrimPrefix(path, "./")]
	return f != nil && (f.Added[line] || f.Context[line])
}

// ParseUnified parses a multi-file unified diff as `git diff`, `git show`
// and GitHub's diff media type produce it. Deleted files are left out
// (there is no new side to comment on); renamed files are keyed by their
// new name. A diff that stops making sense part-way (cut short, edited by
// hand) keeps the files read before that point: a review anchors fewer
// comments rather than none.
func ParseUnified(text string) Diff {
	files, _, _ := gitdiff.Parse(strings.NewReader(text))
	d := Diff{}
	for _, f := range files {
		if f.IsDelete || f.NewName == "" {
			continue
		}
		d[f.NewName] = fileDiff(f.NewName, f.TextFragments)
	}
	return d
}

// ParsePatch parses the hunks of one file (the "patch" of GitHub's list of
// a pull request's files, which has no file headers).
func ParsePatch(path, patch string) *FileDiff {
	// The headers only frame the hunks for the parser; the name in them
	// is a placeholder, so no file name needs quoting.
	files, _, _ := gitdiff.Parse(strings.NewReader("--- a/f\n+++ b/f\n" + patch))
	if len(files) == 1 {
		return fileDiff(path, files[0].TextFragments)
	}
	return fileDiff(path, nil)
}

// fileDiff marks the new-side lines the fragments add or show.
func fileDiff(path string, frags []*gitdiff.TextFragment) *FileDiff {
	fd := &FileDiff{Path: path, Added: map[int]bool{}, Context: map[int]bool{}}
	for _, frag := range frags {
		line := int(frag.NewPosition)
		for _, l := range frag.Lines {
			switch l.Op {
			case gitdiff.OpAdd:
				fd.Added[line] = true
			case gitdiff.OpContext:
				fd.Context[line] = true
			default:
				continue // a deleted line has no new-side number
			}
			line++
		}
	}
	return fd
}
