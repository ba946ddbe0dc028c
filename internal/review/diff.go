package review

import (
	"strconv"
	"strings"
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
// new name. Anything that is not a diff line is skipped.
func ParseUnified(text string) Diff {
	d := Diff{}
	var cur *FileDiff
	inHunk := false
	var newLine, oldLeft, newLeft int
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			cur, inHunk = nil, false
			continue
		case !inHunk && strings.HasPrefix(l, "--- "):
			continue
		case !inHunk && strings.HasPrefix(l, "+++ "):
			name := strings.TrimSpace(strings.TrimPrefix(l, "+++ "))
			if name == "/dev/null" {
				cur = nil
				continue
			}
			name = unquote(name)
			name = strings.TrimPrefix(name, "b/")
			cur = &FileDiff{Path: name, Added: map[int]bool{}, Context: map[int]bool{}}
			d[name] = cur
			continue
		case strings.HasPrefix(l, "@@"):
			if cur == nil {
				continue
			}
			o, n, start, ok := hunkHeader(l)
			if !ok {
				inHunk = false
				continue
			}
			oldLeft, newLeft, newLine, inHunk = o, n, start, true
			continue
		}
		if !inHunk || cur == nil {
			continue
		}
		if oldLeft <= 0 && newLeft <= 0 {
			// The hunk is over; whatever follows is a header line.
			inHunk = false
			continue
		}
		switch {
		case strings.HasPrefix(l, "+"):
			cur.Added[newLine] = true
			newLine++
			newLeft--
		case strings.HasPrefix(l, "-"):
			oldLeft--
		case strings.HasPrefix(l, `\`):
			// "\ No newline at end of file"
		default:
			// A context line (" x", or "" when trailing spaces were trimmed).
			cur.Context[newLine] = true
			newLine++
			oldLeft--
			newLeft--
		}
	}
	return d
}

// ParsePatch parses the hunks of one file (the "patch" of GitHub's list of
// a pull request's files, which has no file headers).
func ParsePatch(path, patch string) *FileDiff {
	d := ParseUnified("+++ b/" + path + "\n" + patch)
	if f := d[path]; f != nil {
		return f
	}
	return &FileDiff{Path: path, Added: map[int]bool{}, Context: map[int]bool{}}
}

// hunkHeader reads "@@ -a,b +c,d @@": the old and new line counts and the
// first new line. A count left out means 1.
func hunkHeader(l string) (oldCount, newCount, newStart int, ok bool) {
	f := strings.Fields(l)
	if len(f) < 3 || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, 0, false
	}
	_, oc, ok1 := rangeOf(f[1][1:])
	ns, nc, ok2 := rangeOf(f[2][1:])
	if !ok1 || !ok2 {
		return 0, 0, 0, false
	}
	return oc, nc, ns, true
}

func rangeOf(s string) (start, count int, ok bool) {
	a, b, has := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil {
		return 0, 0, false
	}
	count = 1
	if has {
		if count, err = strconv.Atoi(b); err != nil {
			return 0, 0, false
		}
	}
	return start, count, true
}

// unquote undoes git's C-style quoting of unusual file names.
func unquote(name string) string {
	if len(name) >= 2 && name[0] == '"' {
		if u, err := strconv.Unquote(name); err == nil {
			return u
		}
	}
	return name
}
