package gfm

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
	"golang.org/x/net/html"
)

// Fetched are the absolute addresses (http, https or scheme-relative
// "//host/…") of the images GitHub fetches from outside when it shows the
// Markdown text src: the destinations of Markdown images (inline and by
// reference) and the sources of the raw HTML elements GitHub keeps that
// load one (img, picture's source, video's poster, …), and every address
// in a mermaid diagram, which may draw one. GitHub's image
// proxy fetches each one, with its query, as soon as someone views the
// file, so an address is a message to its host. Relative addresses are
// the repository's own and are not listed. In order of appearance, each
// once.
func Fetched(src []byte) []string {
	d := parseWithFootnotes(src)
	var found addresses
	add := found.add
	_ = ast.Walk(d.Root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Image:
			add(destination(n.Destination))
		case *ast.HTMLBlock:
			segs := segmentsOf(n.Lines())
			if n.HasClosure() {
				segs = append(segs, n.ClosureLine)
			}
			htmlSources(join(d.Source, segs), add)
		case *ast.RawHTML:
			htmlSources(join(d.Source, segmentsOf(n.Segments)), add)
		case *ast.FencedCodeBlock:
			// GitHub draws a mermaid block, and a diagram may show an
			// image from an address (an image shape, an icon, an
			// <img> in a label): every address in one counts.
			if lang := n.Language(d.Source); strings.EqualFold(string(lang), "mermaid") {
				text := string(join(d.Source, segmentsOf(n.Lines())))
				for _, t := range []string{text, mermaidDecode(text)} {
					for _, u := range anyAddress.FindAllString(t, -1) {
						add(u)
					}
				}
			}
		}
		return ast.WalkContinue, nil
	})
	return found.list
}

// parseWithFootnotes parses src as GitHub does for a file, footnotes
// too: GitHub shows a footnote's text, images and all, where goldmark's
// GFM alone reads "[^1]: …" as a link's definition.
func parseWithFootnotes(src []byte) *Doc {
	s := strings.ReplaceAll(strings.ReplaceAll(string(src), "\r\n", "\n"), "\r", "\n")
	b := []byte(s)
	md := goldmark.New(goldmark.WithExtensions(extension.GFM, extension.Footnote))
	return &Doc{Source: b, Root: md.Parser().Parse(text.NewReader(b))}
}

// destination is an image's address as GitHub reads it: goldmark keeps
// the backslash escapes and character references of the source, which
// GitHub resolves ("https&#58;//host" is "https://host"). Resolving them
// twice only ever finds more.
func destination(raw []byte) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' && i+1 < len(raw) && strings.IndexByte(asciiPunct, raw[i+1]) >= 0 {
			i++
		}
		b.WriteByte(raw[i])
	}
	return html.UnescapeString(b.String())
}

// mermaidEntity is Mermaid's spelling of a character ("#58;", "#quot;").
var mermaidEntity = regexp.MustCompile(`#([0-9]{1,7}|[A-Za-z][A-Za-z0-9]{0,31});`)

// mermaidDecode is a diagram's text with Mermaid's entity codes and then
// HTML's character references resolved, as a label's HTML reaches the
// page: "https#58;#47;#47;host" is an address there.
func mermaidDecode(s string) string {
	s = mermaidEntity.ReplaceAllStringFunc(s, func(e string) string {
		code := e[1 : len(e)-1]
		if code[0] >= '0' && code[0] <= '9' {
			return "&#" + code + ";"
		}
		return "&" + code + ";"
	})
	return html.UnescapeString(s)
}

// asciiPunct are the characters a backslash escapes in CommonMark.
const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// anyAddress finds absolute and scheme-relative addresses in text.
var anyAddress = regexp.MustCompile(`(?i)(?:https?:)?//[^\s"'<>()\[\]{}|` + "`" + `]+`)

// loadingAttrs are the attributes of HTML elements that make a browser
// load what they name when the element is shown (srcset lists several).
var loadingAttrs = map[string]bool{"src": true, "srcset": true, "poster": true, "background": true, "data": true, "lowsrc": true, "dynsrc": true}

// htmlSources hands add every address a loading attribute of the HTML
// in buf names.
func htmlSources(buf []byte, add func(string)) {
	htmlSourcesDepth(buf, add, 0)
}

// maxRawDepth bounds how deep htmlSources reads raw text as HTML.
const maxRawDepth = 4

// htmlSourcesDepth is htmlSources, depth raw texts down. The tokenizer
// reads the text of <xmp>, <noembed>, <noscript>, <iframe>, <textarea>,
// … as text, but a sanitizer that drops such an element may keep what it
// parsed inside: that text is read for images too.
func htmlSourcesDepth(buf []byte, add func(string), depth int) {
	z := html.NewTokenizer(bytes.NewReader(buf))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return
		}
		if tt == html.TextToken && depth < maxRawDepth && bytes.IndexByte(z.Raw(), '<') >= 0 {
			htmlSourcesDepth(bytes.Clone(z.Raw()), add, depth+1)
			continue
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		_, more := z.TagName()
		for more {
			var key, val []byte
			key, val, more = z.TagAttr()
			if !loadingAttrs[strings.ToLower(string(key))] {
				continue
			}
			if strings.EqualFold(string(key), "srcset") {
				for _, u := range srcsetURLs(string(val)) {
					add(u)
				}
				continue
			}
			add(string(val))
		}
	}
}

// srcsetURLs are the addresses of a srcset's candidates as browsers read
// them (the HTML standard's parsing): an address runs to the next white
// space, commas inside it included and trailing ones dropped, so
// "//a.example,@b.example/p 1x" is an image from b.example; the
// descriptors after it run to a comma outside parentheses.
func srcsetURLs(v string) []string {
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
	var out []string
	i := 0
	for i < len(v) {
		for i < len(v) && (space(v[i]) || v[i] == ',') {
			i++
		}
		start := i
		for i < len(v) && !space(v[i]) {
			i++
		}
		if start == i {
			break
		}
		u := v[start:i]
		if trimmed := strings.TrimRight(u, ","); trimmed != u {
			out = append(out, trimmed) // no descriptors
			continue
		}
		out = append(out, u)
		for inParens := false; i < len(v); i++ {
			c := v[i]
			if c == ',' && !inParens {
				i++
				break
			}
			inParens = c == '(' || inParens && c != ')'
		}
	}
	return out
}

// outside says whether u names another host: an address with an http(s)
// scheme (with or without its slashes: "http:host" leads to the host
// from an https page), or one relative to the scheme ("//host/…", with
// backslashes too, which browsers read as slashes). Tabs and line breaks
// inside, which URL parsers drop, and leading spaces and control
// characters are not looked at.
func outside(u string) bool {
	u = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, u)
	l := strings.ToLower(strings.TrimLeft(u, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "))
	if strings.HasPrefix(l, "http:") || strings.HasPrefix(l, "https:") {
		return true
	}
	return len(l) >= 2 && (l[0] == '/' || l[0] == '\\') && (l[1] == '/' || l[1] == '\\')
}

// Host is the host an address Fetched lists leads to, in lower case
// ("" when it names none).
func Host(u string) string {
	u = strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\r':
			return -1
		case '\\':
			return '/'
		}
		return r
	}, u)
	u = strings.ToLower(strings.TrimLeft(u, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "))
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https:"), "http:")
	u = strings.TrimLeft(u, "/")
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		u = u[:i]
	}
	if i := strings.LastIndexByte(u, '@'); i >= 0 {
		u = u[i+1:]
	}
	if strings.HasPrefix(u, "[") {
		if i := strings.IndexByte(u, ']'); i > 0 {
			return u[1:i]
		}
	}
	if i := strings.LastIndexByte(u, ':'); i >= 0 {
		u = u[:i]
	}
	return strings.TrimSuffix(u, ".")
}

// markupImage finds image addresses in the other markups GitHub renders
// (reStructuredText's image and figure directives and substitutions,
// AsciiDoc's image macros and an absolute imagesdir).
var markupImage = regexp.MustCompile(`(?i)(?:\.\.\s+(?:\|[^|]*\|\s+)?(?:image|figure)::\s*|image::?\s*|:(?:imagesdir|iconsdir):\s*)(\S+?)(?:\[|\s|$)`)

// rstImage finds reStructuredText's image and figure directives with
// their whole argument: docutils takes the address from the first line
// and the indented lines after it, up to an option or a blank line, with
// the white space taken out ("https://a.example" and "@b.example/x" on
// the next line are an image from b.example).
var rstImage = regexp.MustCompile(`(?im)^[ \t]*\.\.[ \t]+(?:\|[^|\n]*\|[ \t]+)?(?:image|figure)::([^\n]*(?:\n[ \t]+[^:\s][^\n]*)*)`)

// attributeEntry finds AsciiDoc's attribute entries (":name: value"),
// and attributeRef the references to one ("{name}").
var (
	attributeEntry = regexp.MustCompile(`(?m)^:([A-Za-z0-9_][A-Za-z0-9_-]*)!?:[ \t]*(.*)$`)
	attributeRef   = regexp.MustCompile(`\{([A-Za-z0-9_][A-Za-z0-9_-]*)\}`)
)

// maxExpanded bounds what expanding an image's target may make of it.
// A target that grows past it is taken for one from tooLong, a host
// nothing allows: cutting it could keep an allowed host's name and drop
// the "@" after which another host begins.
const maxExpanded = 2 << 10

const tooLong = "//asciidoc-attributes-too-long.invalid/"

// attributes are a document's AsciiDoc attribute entries, by name, each
// name's in order.
type attributes map[string][]attribute

type attribute struct {
	at    int
	value string
}

func readAttributes(src []byte) attributes {
	a := attributes{}
	for _, m := range attributeEntry.FindAllSubmatchIndex(src, -1) {
		name := strings.ToLower(string(src[m[2]:m[3]]))
		value := src[m[4]:m[5]]
		if len(value) > maxExpanded+1 {
			value = value[:maxExpanded+1] // too long to expand all the same
		}
		a[name] = append(a[name], attribute{m[0], strings.TrimSpace(string(value))})
	}
	return a
}

// expand replaces the attribute references in s, found at offset at, by
// the values the attributes last had before it (a value's own
// references too, a few rounds deep): AsciiDoc substitutes them in an
// image's target and in imagesdir, so "image::{base}/a.png[]" shows an
// image from wherever base names.
func (a attributes) expand(s string, at int) string {
	for range 4 {
		if !strings.Contains(s, "{") {
			break
		}
		next, ok := a.expandOnce(s, at)
		if !ok {
			return tooLong
		}
		if next == s {
			break
		}
		s = next
	}
	return s
}

// expandOnce is one round of expand; false when the result would be
// longer than maxExpanded.
func (a attributes) expandOnce(s string, at int) (string, bool) {
	var b strings.Builder
	last := 0
	for _, m := range attributeRef.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(s[last:m[0]])
		b.WriteString(a.valueAt(strings.ToLower(s[m[2]:m[3]]), at, s[m[0]:m[1]]))
		last = m[1]
		if b.Len() > maxExpanded {
			return "", false
		}
	}
	b.WriteString(s[last:])
	return b.String(), b.Len() <= maxExpanded
}

// valueAt is the value the attribute name last had before offset at, or
// ref when it had none.
func (a attributes) valueAt(name string, at int, ref string) string {
	list := a[name]
	i := sort.Search(len(list), func(i int) bool { return list[i].at >= at })
	if i == 0 {
		return ref
	}
	return list[i-1].value
}

// FetchedMarkup is Fetched for reStructuredText and AsciiDoc text: the
// absolute addresses of their images, with AsciiDoc's attribute
// references resolved (an imagesdir or iconsdir that is one is listed
// itself: every image, or admonition icon, below it is fetched from that
// host).
// Raw HTML counts too, wherever it lies: reStructuredText's raw
// directive and AsciiDoc's passthroughs hand it to the page, and GitHub
// keeps its images.
func FetchedMarkup(src []byte) []string {
	var found addresses
	add := found.add
	for _, m := range rstImage.FindAllSubmatch(src, -1) {
		add(strings.Join(strings.Fields(string(m[1])), ""))
	}
	attrs := readAttributes(src)
	for _, m := range markupImage.FindAllSubmatchIndex(src, -1) {
		target := attrs.expand(string(src[m[2]:m[3]]), m[0])
		// Asciidoctor writes a target into the page's src as it is, so a
		// character reference in it is its character there.
		add(target)
		add(html.UnescapeString(target))
	}
	htmlSources(src, add)
	return found.list
}

// FetchedAny is Fetched for the markups GitHub renders whose image
// syntax planex does not parse (Textile, Org, RDoc, Creole, MediaWiki,
// Pod): every absolute address the text holds, and those of its raw
// HTML, may be an image.
func FetchedAny(src []byte) []string {
	var found addresses
	add := found.add
	// A markup may pass a character reference to the page as written,
	// where it stands for its character ("https&#58;//host").
	for _, t := range []string{string(src), html.UnescapeString(string(src))} {
		for _, u := range anyAddress.FindAllString(t, -1) {
			add(u)
		}
	}
	htmlSources(src, add)
	return found.list
}

// FetchedNotebook is Fetched for a Jupyter notebook, which GitHub renders
// cell by cell: the images of its Markdown cells, of its raw cells (read
// as Markdown and as HTML) and of the Markdown and HTML its cells'
// outputs hold. Keys are matched exactly, as a notebook's
// readers match them (Go's decoding into a struct takes "Cells" for
// "cells" too, and the last of the two). Text that is not a notebook of
// that shape (JSON Go refuses but another reader takes, with NaN in it;
// the older format's worksheets) counts every address it holds.
func FetchedNotebook(src []byte) []string {
	cells, ok := notebookCells(src)
	if !ok {
		return FetchedAny(src)
	}
	var found addresses
	add := func(list []string) {
		for _, u := range list {
			found.add(u)
		}
	}
	for _, c := range cells {
		switch c.kind {
		case "markdown":
			add(Fetched([]byte(notebookText(c.source))))
		case "raw":
			// A raw cell of HTML (or Markdown) is shown as it is by
			// nbconvert's HTML; read it both ways.
			src := []byte(notebookText(c.source))
			add(Fetched(src))
			htmlSources(src, found.add)
		}
		for _, data := range c.outputs {
			for kind, v := range data {
				switch kind {
				case "text/markdown":
					add(Fetched([]byte(notebookText(v))))
				case "text/html", "image/svg+xml":
					var found []string
					htmlSources([]byte(notebookText(v)), func(u string) {
						if outside(u) {
							found = append(found, strings.TrimSpace(u))
						}
					})
					add(found)
				}
			}
		}
	}
	return found.list
}

// notebookCell is what FetchedNotebook reads of a cell: its type, its
// source and its outputs' data by kind.
type notebookCell struct {
	kind    string
	source  json.RawMessage
	outputs []map[string]json.RawMessage
}

// notebookCells reads a notebook's cells by their exact keys; false when
// src is not a notebook of the current format's shape.
func notebookCells(src []byte) ([]notebookCell, bool) {
	var nb map[string]json.RawMessage
	var raw []map[string]json.RawMessage
	if json.Unmarshal(src, &nb) != nil || json.Unmarshal(nb["cells"], &raw) != nil {
		return nil, false
	}
	cells := make([]notebookCell, 0, len(raw))
	for _, m := range raw {
		var c notebookCell
		var outputs []map[string]json.RawMessage
		if json.Unmarshal(m["cell_type"], &c.kind) != nil && m["cell_type"] != nil {
			return nil, false
		}
		if m["outputs"] != nil && json.Unmarshal(m["outputs"], &outputs) != nil {
			return nil, false
		}
		for _, o := range outputs {
			var data map[string]json.RawMessage
			if o["data"] != nil && json.Unmarshal(o["data"], &data) != nil {
				return nil, false
			}
			c.outputs = append(c.outputs, data)
		}
		c.source = m["source"]
		cells = append(cells, c)
	}
	return cells, true
}

// notebookText is a notebook's text field: a string, or a list of the
// lines to join.
func notebookText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var lines []string
	if json.Unmarshal(raw, &lines) == nil {
		return strings.Join(lines, "")
	}
	return ""
}

// addresses collects the outside addresses found, in order, each once.
type addresses struct {
	list []string
	seen map[string]bool
}

// add notes u (trimmed) when it names another host and is new.
func (a *addresses) add(u string) {
	u = strings.TrimSpace(u)
	if !outside(u) || a.seen[u] {
		return
	}
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	a.seen[u] = true
	a.list = append(a.list, u)
}
