package scope

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Overlap reports whether some path could lie in both scopes. It is exact
// for literal segments and '**', and errs towards "overlap" when two
// wildcard segments meet, so two tasks that might write the same file are
// never scheduled side by side.
func Overlap(a, b string) bool {
	for _, ga := range expandAll(Split(a)) {
		for _, gb := range expandAll(Split(b)) {
			if globsIntersect(segments(ga), segments(gb)) {
				return true
			}
		}
	}
	return false
}

// expandAll expands braces and adds the "directory covers its contents"
// reading that Match applies to literal globs.
func expandAll(globs []string) []string {
	var out []string
	for _, g := range globs {
		for _, e := range expandBraces(g) {
			trimmed := strings.TrimSuffix(e, "/")
			out = append(out, trimmed)
			if strings.HasSuffix(e, "/") || !hasMeta(e) {
				out = append(out, trimmed+"/**")
			}
		}
	}
	return out
}

// expandBraces turns "src/{a,b}/*.go" into its alternatives.
func expandBraces(g string) []string {
	open := strings.IndexByte(g, '{')
	if open < 0 {
		return []string{g}
	}
	depth := 0
	for i := open; i < len(g); i++ {
		switch g[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				var out []string
				for _, alt := range splitTop(g[open+1 : i]) {
					out = append(out, expandBraces(g[:open]+alt+g[i+1:])...)
				}
				return out
			}
		}
	}
	return []string{g} // unbalanced: leave it to the matcher
}

func splitTop(s string) []string {
	var parts []string
	depth, last := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[last:i])
				last = i + 1
			}
		}
	}
	return append(parts, s[last:])
}

func segments(g string) []string { return strings.Split(g, "/") }

func globsIntersect(a, b []string) bool {
	switch {
	case len(a) == 0 && len(b) == 0:
		return true
	case len(a) > 0 && a[0] == "**":
		return globsIntersect(a[1:], b) || (len(b) > 0 && globsIntersect(a, b[1:]))
	case len(b) > 0 && b[0] == "**":
		return globsIntersect(a, b[1:]) || (len(a) > 0 && globsIntersect(a[1:], b))
	case len(a) == 0 || len(b) == 0:
		return false
	}
	return segmentsIntersect(a[0], b[0]) && globsIntersect(a[1:], b[1:])
}

// segmentsIntersect decides whether two single path segments can name the
// same file name.
func segmentsIntersect(a, b string) bool {
	am, bm := hasMeta(a), hasMeta(b)
	switch {
	case !am && !bm:
		return a == b
	case !am:
		ok, _ := doublestar.Match(b, a)
		return ok
	case !bm:
		ok, _ := doublestar.Match(a, b)
		return ok
	}
	// Both wildcards: compare the literal text before the first and after
	// the last wildcard; if either pair contradicts, no name fits both.
	ap, as := literalEnds(a)
	bp, bs := literalEnds(b)
	prefixOK := strings.HasPrefix(ap, bp) || strings.HasPrefix(bp, ap)
	suffixOK := strings.HasSuffix(as, bs) || strings.HasSuffix(bs, as)
	return prefixOK && suffixOK
}

func literalEnds(s string) (prefix, suffix string) {
	first := strings.IndexAny(s, "*?[{\\")
	last := strings.LastIndexAny(s, "*?]}\\")
	return s[:first], s[last+1:]
}
