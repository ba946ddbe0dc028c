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
		if path.IsAbs(g) || g == ".." || strings.HasPrefix(g, "../") || strings.Contains(g, "/../") {
			return fmt.Errorf("scope glob %q leaves the repository", g)
		}
	}
	return nil
}

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
