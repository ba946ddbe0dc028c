// Package scope answers whether a path lies inside a task's write scope and
// whether two scopes can touch the same file. A scope is one or more
// doublestar globs separated by ';', relative to the repository
// root.
package scope

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Split returns the globs of a scope, trimmed, without empty entries.
func Split(scope string) []string {
	f := strings.FieldsFunc(scope, func(r rune) bool { return r == ';' || r == '\n' })
	out := f[:0]
	for _, g := range f {
		g = strings.TrimSpace(g)
		g = strings.TrimPrefix(g, "./")
		if g != "" {
			out = append(out, g)
		}
	}
	return out
}

// Validate reports the first malformed glob of a scope.
func Validate(scope string) error {
	globs := Split(scope)
	if len(globs) == 0 {
		return fmt.Errorf("scope is empty")
	}
	for _, g := range globs {
		if !doublestar.ValidatePattern(g) {
			return fmt.Errorf("scope glob %q is malformed", g)
		}
		if why := escapes(g); why != "" {
			return fmt.Errorf("scope glob %q %s", g, why)
		}
	}
	return nil
}

// escapes says how a glob reaches outside the repository or into a .git
// directory, or returns "". Every brace alternative and escaped spelling
// is checked, since the matcher would honour them.
func escapes(g string) string {
	switch {
	case strings.HasPrefix(g, "~"):
		return "starts with ~ and so names a home directory, outside the repository"
	case path.IsAbs(g) || strings.HasPrefix(g, `\\`) || (len(g) > 1 && g[1] == ':' && isLetter(g[0])):
		return "is an absolute path; scopes are relative to the repository root"
	}
	for _, alt := range expandBraces(g) {
		for _, seg := range strings.Split(alt, "/") {
			if unescape(seg) == ".." {
				return "leaves the repository (a .. segment)"
			}
			if namesDotGit(seg) {
				return "reaches into .git, which no task may write"
			}
		}
	}
	return ""
}

// namesDotGit reports whether a glob segment can only mean .git (in any
// case): the literal, an escaped spelling, or ?/[] patterns matching it.
// Segments with * are general ("*", ".git*") and allowed; git itself never
// records a path inside .git.
func namesDotGit(seg string) bool {
	if strings.Contains(seg, "*") {
		return false
	}
	ok, err := doublestar.Match(strings.ToLower(seg), ".git")
	return err == nil && ok
}

func unescape(seg string) string {
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		if seg[i] == '\\' && i+1 < len(seg) {
			i++
		}
		b.WriteByte(seg[i])
	}
	return b.String()
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// Match reports whether the repository-relative, slash-separated path p is
// inside scope. A glob that names a directory (no wildcard, or ending in
// '/') covers everything below it.
func Match(scope, p string) bool {
	p = strings.TrimPrefix(path.Clean(p), "./")
	for _, g := range Split(scope) {
		if ok, _ := doublestar.Match(g, p); ok {
			return true
		}
		dir := strings.TrimSuffix(g, "/")
		if ok, _ := doublestar.Match(dir+"/**", p); ok && (strings.HasSuffix(g, "/") || !hasMeta(g)) {
			return true
		}
	}
	return false
}

// Outside returns the paths not covered by scope, in input order.
func Outside(scope string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if !Match(scope, p) {
			out = append(out, p)
		}
	}
	return out
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[{\\") }

// Names reports whether one of scope's globs is the path p itself,
// written out without wildcards: what a plan must say for a change that
// a wide glob such as ** must not let through.
func Names(scope, p string) bool {
	p = strings.TrimPrefix(path.Clean(p), "./")
	for _, g := range Split(scope) {
		if !hasMeta(g) && path.Clean(strings.TrimSuffix(g, "/")) == p {
			return true
		}
	}
	return false
}

// literalLead is the leading segments of glob g that hold no wildcard,
// joined: "" for "**" or "*.go", ".github/workflows" for
// ".github/workflows/*.yml" and for ".github/workflows/".
func literalLead(g string) string {
	var lead []string
	for _, seg := range strings.Split(strings.TrimSuffix(g, "/"), "/") {
		if hasMeta(seg) {
			break
		}
		lead = append(lead, seg)
	}
	return path.Clean("/" + strings.Join(lead, "/"))[1:]
}

// writtenFor reports whether glob g is written for dir: its leading
// segments without wildcards are dir or a path below it.
func writtenFor(g, dir string) bool {
	lead := literalLead(g)
	return lead == dir || strings.HasPrefix(lead, dir+"/")
}

// Targets reports whether one of scope's globs covers p and is written for
// dir (its leading segments without wildcards are dir or below it): what a
// plan must say for a change in a folder that a wide glob reaching it by
// chance (**, .github/**, **/*.yml) must not let through.
func Targets(scope, dir, p string) bool {
	for _, g := range Split(scope) {
		if writtenFor(g, dir) && Match(g, p) {
			return true
		}
	}
	return false
}

// TargetsDir reports whether one of scope's globs is written for dir.
func TargetsDir(scope, dir string) bool {
	for _, g := range Split(scope) {
		if writtenFor(g, dir) {
			return true
		}
	}
	return false
}
