// Package gfm reads GitHub Flavored Markdown the way GitHub shows it. It
// parses comments with a CommonMark/GFM parser (goldmark) and knows which
// parts of the source a reader never sees: HTML comments, link reference
// definitions, raw HTML tags and the content of elements GitHub drops
// (<script>, <style>, …), image alt texts, link titles, math that draws
// itself invisible ($\color{white}…$, \phantom, …), and invisible Unicode
// (zero-width, bidi controls, the tag block, variation selectors). Text people wrote on
// GitHub reaches agents only through Visible, so what an agent is asked to
// do is what the approver could read.
//
// The package is pure: no I/O.
package gfm

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"golang.org/x/net/html"
)

// Doc is a parsed Markdown text.
type Doc struct {
	// Source is the text as parsed (line endings made "\n"); node
	// segments index into it.
	Source []byte
	// Root is the document node; its children are the top-level blocks.
	Root ast.Node
	// hidden are the byte ranges of Source GitHub does not display,
	// sorted and merged.
	hidden []span
}

type span struct{ start, end int }

// Parse parses s as GitHub Flavored Markdown.
func Parse(s string) *Doc {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	src := []byte(s)
	refs := &refDefRecorder{}
	p := parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		// In place of goldmark's own link reference transformer: the same
		// work, plus a note of the lines it took out.
		parser.WithParagraphTransformers(util.Prioritized(refs, 100)),
	)
	md := goldmark.New(goldmark.WithParser(p), goldmark.WithExtensions(extension.GFM))
	root := md.Parser().Parse(text.NewReader(src))
	d := &Doc{Source: src, Root: root}
	d.hidden = merge(append(append(refs.removed, hiddenHTML(src, root)...), hiddenInline(src, root)...))
	return d
}

// Visible is what GitHub displays of the Markdown text s, as Markdown
// source: hidden parts removed, invisible characters dropped, runs of
// blank lines shortened, surrounding space trimmed.
func Visible(s string) string {
	return strings.TrimSpace(Parse(s).VisibleFrom(0))
}

// VisibleFrom is the visible source from byte offset off to the end.
func (d *Doc) VisibleFrom(off int) string {
	return d.visible(off, len(d.Source))
}

// VisibleRange is the visible source of Source[start:end].
func (d *Doc) VisibleRange(start, end int) string {
	return d.visible(start, end)
}

// Hidden reports whether the byte at off is hidden.
func (d *Doc) Hidden(off int) bool {
	i := sort.Search(len(d.hidden), func(i int) bool { return d.hidden[i].end > off })
	return i < len(d.hidden) && d.hidden[i].start <= off
}

func (d *Doc) visible(start, end int) string {
	start, end = max(start, 0), min(end, len(d.Source))
	var b bytes.Buffer
	pos := start
	for _, h := range d.hidden {
		if h.end <= pos {
			continue
		}
		if h.start >= end {
			break
		}
		if h.start > pos {
			b.Write(d.Source[pos:h.start])
		}
		pos = max(pos, h.end)
	}
	if pos < end {
		b.Write(d.Source[pos:end])
	}
	return tidy(StripInvisible(b.String()))
}

var blankRun = regexp.MustCompile(`\n{3,}`)

// tidy drops trailing space on each line and shortens runs of blank lines
// that removed parts leave behind.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return blankRun.ReplaceAllString(strings.Join(lines, "\n"), "\n\n")
}

// StripInvisible removes characters that display as nothing (or change
// how neighbouring text displays): format characters such as zero-width
// spaces and joiners, bidi controls, the tag block U+E0000–U+E007F and the
// soft hyphen; variation selectors; Hangul fillers; control characters
// other than tab and newline; and bytes that are not UTF-8. It is for
// plain text (an issue title); Markdown goes through Visible.
func StripInvisible(s string) string {
	s = strings.ToValidUTF8(s, "")
	if !strings.ContainsFunc(s, Invisible) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if Invisible(r) {
			return -1
		}
		return r
	}, s)
}

// Invisible reports whether r displays as nothing.
func Invisible(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || (r >= 0x7f && r <= 0x9f): // C0 and C1 controls
		return true
	case r >= 0xE0000 && r <= 0xE007F: // tag block (with its unassigned code points)
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF: // variation selectors
		return true
	case r == 0x034F, r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0: // grapheme joiner, Hangul fillers
		return true
	}
	// Cf: U+00AD soft hyphen, U+200B–U+200F zero-width and direction marks,
	// U+202A–U+202E and U+2066–U+2069 bidi controls, U+2060–U+2064 word
	// joiner and invisible operators, U+FEFF, U+061C, U+180E, …
	return unicode.Is(unicode.Cf, r)
}

// refDefRecorder is goldmark's link reference definition transformer that
// also remembers the lines it removed: definitions are never displayed.
type refDefRecorder struct {
	removed []span
}

func (r *refDefRecorder) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	before := append([]text.Segment(nil), lines.Sliced(0, lines.Len())...)
	parser.LinkReferenceParagraphTransformer.Transform(node, reader, pc)
	kept := map[int]bool{}
	if node.Parent() != nil {
		after := node.Lines()
		for i := 0; i < after.Len(); i++ {
			kept[after.At(i).Start] = true
		}
	}
	for _, s := range before {
		if !kept[s.Start] {
			r.removed = append(r.removed, span{s.Start, s.Stop})
		}
	}
}

// hidingElements lose their content on GitHub (the sanitizer removes it,
// or a browser never shows it).
var hidingElements = map[string]bool{
	"script": true, "style": true, "template": true, "noscript": true, "iframe": true, "noembed": true,
	"noframes": true, "object": true, "svg": true, "math": true, "title": true, "textarea": true,
	"select": true, "xmp": true, "plaintext": true, "head": true,
}

var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true, "input": true,
	"link": true, "meta": true, "source": true, "track": true, "wbr": true, "param": true, "keygen": true,
}

// htmlHider walks the raw HTML of a document in order: tags, comments and
// doctypes are hidden, and so is everything (Markdown included) between
// the start and the end of an element that hides its content.
type htmlHider struct {
	src    []byte
	hidden []span
	// hideStart is where the open hiding element's content starts, or -1;
	// open are the element names opened since (open[0] is the hiding one).
	hideStart int
	open      []string
}

func hiddenHTML(src []byte, root ast.Node) []span {
	h := &htmlHider{src: src, hideStart: -1}
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.HTMLBlock:
			segs := segmentsOf(n.Lines())
			if n.HasClosure() {
				segs = append(segs, n.ClosureLine)
			}
			h.scan(segs)
		case *ast.RawHTML:
			h.scan(segmentsOf(n.Segments))
		case *ast.Text:
			if _, inCode := n.Parent().(*ast.CodeSpan); !inCode {
				h.entities(n.Segment)
			}
		}
		return ast.WalkContinue, nil
	})
	if h.hideStart >= 0 {
		h.hide(h.hideStart, len(src))
	}
	return h.hidden
}

func segmentsOf(s *text.Segments) []text.Segment {
	return append([]text.Segment(nil), s.Sliced(0, s.Len())...)
}

// join is the source bytes of segs, one after the other (without the
// padding goldmark adds for tabs).
func join(src []byte, segs []text.Segment) []byte {
	var buf []byte
	for _, s := range segs {
		buf = append(buf, src[s.Start:s.Stop]...)
	}
	return buf
}

func (h *htmlHider) hide(start, end int) {
	if end > start {
		h.hidden = append(h.hidden, span{start, end})
	}
}

// scan tokenizes the HTML held by segs (in source order, possibly with
// container markers such as "> " between them).
func (h *htmlHider) scan(segs []text.Segment) {
	buf := join(h.src, segs)
	// toSource maps an offset in buf to one in src.
	toSource := func(off int) int {
		for _, s := range segs {
			if n := s.Stop - s.Start; off < n {
				return s.Start + off
			} else {
				off -= n
			}
		}
		if len(segs) == 0 {
			return 0
		}
		return segs[len(segs)-1].Stop
	}
	// hideBuf hides buf[a:b] and whatever container markers ("> ")
	// lie between its pieces in the source.
	hideBuf := func(a, b int) {
		if b > a {
			h.hide(toSource(a), toSource(b-1)+1)
		}
	}
	z := html.NewTokenizer(bytes.NewReader(buf))
	pos := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return
		}
		raw := len(z.Raw())
		start, end := pos, pos+raw
		pos = end
		switch tt {
		case html.CommentToken, html.DoctypeToken:
			hideBuf(start, end)
		case html.StartTagToken, html.SelfClosingTagToken:
			hideBuf(start, end)
			name, hasAttr := z.TagName()
			hiddenAttr := false
			for hasAttr {
				var key []byte
				key, _, hasAttr = z.TagAttr()
				if string(key) == "hidden" {
					hiddenAttr = true
				}
			}
			h.startTag(string(name), tt == html.SelfClosingTagToken, hiddenAttr, toSource(end))
		case html.EndTagToken:
			hideBuf(start, end)
			name, _ := z.TagName()
			h.endTag(string(name), toSource(start))
		}
	}
}

func (h *htmlHider) startTag(name string, selfClosing, hiddenAttr bool, contentStart int) {
	if selfClosing || voidElements[name] {
		return
	}
	if h.hideStart >= 0 {
		h.open = append(h.open, name)
		return
	}
	if hidingElements[name] || hiddenAttr {
		h.hideStart, h.open = contentStart, []string{name}
	}
}

func (h *htmlHider) endTag(name string, tagStart int) {
	if h.hideStart < 0 {
		return
	}
	for i := len(h.open) - 1; i >= 0; i-- {
		if h.open[i] == name {
			h.open = h.open[:i]
			break
		}
	}
	if len(h.open) == 0 {
		h.hide(h.hideStart, tagStart)
		h.hideStart = -1
	}
}

var entityRe = regexp.MustCompile(`&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});`)

// entities hides character references that stand for invisible
// characters (&#x200B;, &zwj;, &#xE0041;), which GitHub would display as
// nothing.
func (h *htmlHider) entities(seg text.Segment) {
	v := h.src[seg.Start:seg.Stop]
	if bytes.IndexByte(v, '&') < 0 {
		return
	}
	for _, m := range entityRe.FindAllIndex(v, -1) {
		dec := html.UnescapeString(string(v[m[0]:m[1]]))
		r, size := utf8.DecodeRuneInString(dec)
		if size == len(dec) && dec != string(v[m[0]:m[1]]) && Invisible(r) {
			h.hide(seg.Start+m[0], seg.Start+m[1])
		}
	}
}

// merge sorts spans and joins overlapping or touching ones.
func merge(in []span) []span {
	sort.Slice(in, func(i, j int) bool { return in[i].start < in[j].start })
	var out []span
	for _, s := range in {
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// InertHTML reports whether an HTML block shows nothing and leaves no
// element open: only comments, whitespace and complete elements without
// text. Text after such a block is still the start of a comment.
func (d *Doc) InertHTML(b *ast.HTMLBlock) bool {
	segs := segmentsOf(b.Lines())
	if b.HasClosure() {
		segs = append(segs, b.ClosureLine)
	}
	z := html.NewTokenizer(bytes.NewReader(join(d.Source, segs)))
	depth := 0
	for {
		switch tt := z.Next(); tt {
		case html.ErrorToken:
			return depth == 0
		case html.TextToken:
			if strings.TrimSpace(StripInvisible(string(z.Text()))) != "" {
				return false
			}
		case html.StartTagToken:
			if name, _ := z.TagName(); !voidElements[string(name)] {
				depth++
			}
		case html.EndTagToken:
			depth--
		}
	}
}
