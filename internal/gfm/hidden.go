package gfm

import (
	"bytes"
	"regexp"

	"github.com/yuin/goldmark/ast"
)

// Parts of Markdown GitHub renders but nobody reads: an image's alt text
// (shown only when the image fails to load), a link's title (a tooltip),
// and math that draws itself invisible (white on white, phantoms, boxes of
// no size). Visible drops them as it drops HTML comments.

// mathHiding are the TeX commands that can make math text invisible or
// move it out of sight, or show only part of what is written (macro
// definitions whose body or argument is never shown, labels,
// \mathchoice's other styles, MathJax's tooltips and toggles), and the
// comment sign % (not escaped: after an even run of backslashes); math
// that uses one is hidden whole.
var mathHiding = regexp.MustCompile(`\\(?:color|textcolor|colorbox|fcolorbox|pagecolor|phantom|hphantom|vphantom|smash|llap|rlap|clap|mathllap|mathrlap|mathclap|style|class|cssId|tiny|scriptsize|scriptscriptstyle|hspace|hskip|mspace|kern|mkern|mskip|raise|lower|moveleft|moveright|opacity|def|gdef|edef|xdef|let|newcommand|renewcommand|newenvironment|renewenvironment|DeclareMathOperator|label|mathchoice|mathtip|texttip|toggle|mmlToken)(?:[^A-Za-z]|$)|(?:^|[^\\])(?:\\\\)*%`)

// maxMath bounds how far an inline math span may reach.
const maxMath = 4096

// hiddenInline returns the spans of alt texts, link titles and hiding
// math in the document.
func hiddenInline(src []byte, root ast.Node) []span {
	var out []span
	var code []span // code GitHub shows as written: no math there
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Image:
			if s, ok := textExtent(n); ok {
				out = append(out, s)
			}
			out = append(out, linkTitle(src, n, n.Title)...)
		case *ast.Link:
			out = append(out, linkTitle(src, n, n.Title)...)
		case *ast.CodeSpan:
			if s, ok := textExtent(n); ok {
				// $`…`$ is GitHub's other inline math syntax.
				if s.start > 1 && s.end+1 < len(src) && src[s.start-2] == '$' && src[s.end+1] == '$' && mathHiding.Match(src[s.start:s.end]) {
					out = append(out, span{s.start - 2, s.end + 2})
				}
				code = append(code, span{s.start - 1, s.end + 1})
			}
		case *ast.FencedCodeBlock:
			lines := n.Lines()
			if lines.Len() == 0 {
				return ast.WalkContinue, nil
			}
			s := span{lines.At(0).Start, lines.At(lines.Len() - 1).Stop}
			if string(n.Language(src)) == "math" && mathHiding.Match(src[s.start:s.end]) {
				out = append(out, s)
			}
			code = append(code, s)
		case *ast.CodeBlock:
			if lines := n.Lines(); lines.Len() > 0 {
				code = append(code, span{lines.At(0).Start, lines.At(lines.Len() - 1).Stop})
			}
		}
		return ast.WalkContinue, nil
	})
	return append(out, hidingMath(src, merge(code))...)
}

// textExtent is the source range of the text under n.
func textExtent(n ast.Node) (span, bool) {
	s := span{start: -1}
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			if s.start < 0 || t.Segment.Start < s.start {
				s.start = t.Segment.Start
			}
			s.end = max(s.end, t.Segment.Stop)
		}
		return ast.WalkContinue, nil
	})
	return s, s.start >= 0 && s.end > s.start
}

// linkTitle finds the title of an inline link or image in the source:
// after the text's "]", the "(", the destination, then the title in
// quotes or parentheses. A reference link's title lives in its
// definition, which is hidden already.
func linkTitle(src []byte, n ast.Node, title []byte) []span {
	if len(title) == 0 {
		return nil
	}
	i, ok := linkTextEnd(n)
	if !ok {
		return nil
	}
	start := i
	for i < len(src) && src[i] != ']' && i-start < 64 {
		i++ // the closing marks of emphasis or code inside the text
	}
	if i+1 >= len(src) || src[i] != ']' || src[i+1] != '(' {
		return nil
	}
	i = skipSpace(src, i+2)
	i = skipDestination(src, i)
	i = skipSpace(src, i)
	if i >= len(src) {
		return nil
	}
	closer := map[byte]byte{'"': '"', '\'': '\'', '(': ')'}[src[i]]
	if closer == 0 {
		return nil
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case closer:
			return []span{{i, j + 1}}
		}
	}
	return nil
}

// linkTextEnd is where the text of link or image n ends in the source,
// or, when it has none ("[](…)"), where the node starts as best the
// nodes before it tell.
func linkTextEnd(n ast.Node) (int, bool) {
	if s, ok := textExtent(n); ok {
		return s.end, true
	}
	for c := n; c != nil; c = c.Parent() {
		for p := c.PreviousSibling(); p != nil; p = p.PreviousSibling() {
			if s, ok := textExtent(p); ok {
				return s.end, true
			}
		}
		if c.Parent() != nil && c.Parent().Type() == ast.TypeBlock {
			if lines := c.Parent().Lines(); lines != nil && lines.Len() > 0 {
				return lines.At(0).Start, true
			}
		}
	}
	return 0, false
}

func skipSpace(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n') {
		i++
	}
	return i
}

// skipDestination passes a link destination: <…>, or a run without
// spaces whose parentheses balance.
func skipDestination(src []byte, i int) int {
	if i < len(src) && src[i] == '<' {
		if j := bytes.IndexByte(src[i:], '>'); j >= 0 {
			return i + j + 1
		}
		return i
	}
	depth := 0
	for ; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
		case c == '(':
			depth++
		case c == ')':
			if depth == 0 {
				return i
			}
			depth--
		case c == ' ' || c == '\t' || c == '\n':
			return i
		}
	}
	return i
}

// hidingMath finds $…$ and $$…$$ outside code whose content uses a
// command of mathHiding.
func hidingMath(src []byte, code []span) []span {
	var out []span
	inCode := func(i int) (int, bool) {
		for _, c := range code {
			if i >= c.start && i < c.end {
				return c.end, true
			}
		}
		return 0, false
	}
	var dead [3]int // by delimiter length: no unbounded search before
	for i := 0; i < len(src); i++ {
		if end, ok := inCode(i); ok {
			i = end - 1
			continue
		}
		if src[i] == '\\' {
			i++
			continue
		}
		if src[i] != '$' {
			continue
		}
		delim := []byte("$")
		if i+1 < len(src) && src[i+1] == '$' {
			delim = []byte("$$")
		}
		body := i + len(delim)
		limit := min(len(src), body+maxMath)
		end, stop := closingDollar(src, body, delim, limit)
		if end < 0 && stop == limit && limit < len(src) && body >= dead[len(delim)] && mathHiding.Match(src[body:limit]) {
			// Hiding math longer than the bound: find its end anyway.
			// Openers before where this search failed would fail there too.
			if end, stop = closingDollar(src, body, delim, len(src)); end < 0 {
				dead[len(delim)] = stop
			}
		}
		if end < 0 {
			i = body - 1
			continue
		}
		if mathHiding.Match(src[body:end]) {
			out = append(out, span{i, end + len(delim)})
		}
		i = end + len(delim) - 1
	}
	return out
}

// closingDollar is where delim closes math that starts at from, or -1:
// not escaped, before limit, and inline math not past a blank line. stop
// is where the search ended.
func closingDollar(src []byte, from int, delim []byte, limit int) (end, stop int) {
	for j := from; j < limit; j++ {
		switch {
		case src[j] == '\\':
			j++
		case len(delim) == 1 && src[j] == '\n' && j+1 < len(src) && src[j+1] == '\n':
			return -1, j
		case bytes.HasPrefix(src[j:], delim) && j > from:
			return j, j
		}
	}
	return -1, limit
}
