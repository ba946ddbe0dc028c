// Package mdtest parses Markdown planex renders with a real GFM parser
// (goldmark) so tests can check what a reader, and GitHub's mention and
// reference filters, would get: raw HTML, links, tables and their cells,
// code blocks, mentions, issue references and command-like paragraphs.
// It is meant for tests only.
package mdtest

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"golang.org/x/net/html"
)

// Doc is a parsed document.
type Doc struct {
	Source []byte
	Root   ast.Node
	// HTML is goldmark's rendering (raw HTML omitted), parsed.
	HTML *html.Node
}

// Parse parses body as GitHub Flavored Markdown.
func Parse(body string) (*Doc, error) {
	m := goldmark.New(goldmark.WithExtensions(extension.GFM))
	d := &Doc{Source: []byte(body)}
	d.Root = m.Parser().Parse(text.NewReader(d.Source))
	var out bytes.Buffer
	if err := m.Renderer().Render(&out, d.Source, d.Root); err != nil {
		return nil, fmt.Errorf("rendering: %w", err)
	}
	h, err := html.Parse(&out)
	if err != nil {
		return nil, fmt.Errorf("parsing the rendering: %w", err)
	}
	d.HTML = h
	return d, nil
}

// Rules say what planex itself puts in a document.
type Rules struct {
	// OwnHTML is the text of every raw HTML node planex writes (its
	// markers, <details>, <summary>, <sub>), in order: the document must
	// hold exactly these.
	OwnHTML []string
	// Pings are the mentions and issue references planex makes on
	// purpose ("@octocat", "#7").
	Pings []string
	// Links are the destinations of the links planex writes.
	Links []string
	// Trigger is the command prefix ("/planex") no paragraph may start
	// with.
	Trigger string
}

var (
	// As GitHub's filters find them: after the start or a non-word
	// character.
	mentionRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(@[A-Za-z0-9][A-Za-z0-9-]*(?:/[A-Za-z0-9][A-Za-z0-9-]*)?)`)
	// owner/repo#N and #N; GH-N only on its own (GitHub has no
	// owner/repo GH-N form).
	issueRefRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])((?:[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)?#[0-9]+|(?:GH|gh)-[0-9]+)`)
)

// Problems lists what the document does that planex did not mean to:
// raw HTML other than r.OwnHTML, links and images written in Markdown,
// task list items, mentions and issue references not in r.Pings, and
// paragraphs that start with r.Trigger.
func (d *Doc) Problems(r Rules) []string {
	var probs []string
	if got := d.HTMLNodes(); strings.Join(got, "\x00") != strings.Join(r.OwnHTML, "\x00") {
		probs = append(probs, fmt.Sprintf("raw HTML %q, want %q", got, r.OwnHTML))
	}
	_ = ast.Walk(d.Root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindLink, ast.KindImage:
			if dest := destination(n); n.Kind() == ast.KindImage || !slices.Contains(r.Links, dest) {
				probs = append(probs, fmt.Sprintf("%s to %q", n.Kind(), dest))
			}
		case east.KindTaskCheckBox:
			probs = append(probs, "a task list item")
		case ast.KindParagraph:
			if t, ok := n.FirstChild().(*ast.Text); ok && r.Trigger != "" && strings.HasPrefix(string(t.Segment.Value(d.Source)), r.Trigger) {
				probs = append(probs, fmt.Sprintf("a paragraph starts with %q", r.Trigger))
			}
		}
		return ast.WalkContinue, nil
	})
	allowed := map[string]bool{}
	for _, p := range r.Pings {
		allowed[p] = true
	}
	for _, s := range d.shownText() {
		for _, re := range []*regexp.Regexp{mentionRe, issueRefRe} {
			for _, m := range re.FindAllStringSubmatch(s, -1) {
				if !allowed[m[1]] {
					probs = append(probs, fmt.Sprintf("%q pings in %q", m[1], s))
				}
			}
		}
	}
	return probs
}

// HTMLNodes returns the source text of every raw HTML node (blocks and
// inline), trimmed, in order.
func (d *Doc) HTMLNodes() []string {
	var out []string
	_ = ast.Walk(d.Root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && (n.Kind() == ast.KindHTMLBlock || n.Kind() == ast.KindRawHTML) {
			out = append(out, strings.TrimSpace(d.raw(n)))
		}
		return ast.WalkContinue, nil
	})
	return out
}

// raw is the source text of a raw HTML node.
func (d *Doc) raw(n ast.Node) string {
	var b strings.Builder
	switch x := n.(type) {
	case *ast.HTMLBlock:
		for i := 0; i < x.Lines().Len(); i++ {
			seg := x.Lines().At(i)
			b.Write(seg.Value(d.Source))
		}
		if x.HasClosure() {
			b.Write(x.ClosureLine.Value(d.Source))
		}
	case *ast.RawHTML:
		for i := 0; i < x.Segments.Len(); i++ {
			seg := x.Segments.At(i)
			b.Write(seg.Value(d.Source))
		}
	}
	return b.String()
}

func destination(n ast.Node) string {
	switch x := n.(type) {
	case *ast.Link:
		return string(x.Destination)
	case *ast.Image:
		return string(x.Destination)
	}
	return ""
}

// shownText is the text of every text node outside code, as GitHub's
// filters get it (entities decoded, one entry per line).
func (d *Doc) shownText() []string {
	var out []string
	var walk func(n *html.Node, inCode bool)
	walk = func(n *html.Node, inCode bool) {
		if n.Type == html.ElementNode && (n.Data == "code" || n.Data == "pre") {
			inCode = true
		}
		if n.Type == html.TextNode && !inCode {
			out = append(out, strings.Split(n.Data, "\n")...)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inCode)
		}
	}
	walk(d.HTML, false)
	return out
}

// Text is the text of an HTML node as a reader sees it (zero-width
// joiners are invisible).
func Text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.ReplaceAll(b.String(), "\u200d", "")
}

// Find returns the elements named tag, in document order.
func Find(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	if n.Type == html.ElementNode && n.Data == tag {
		out = append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, Find(c, tag)...)
	}
	return out
}

// Tables returns every table's body rows as the text of their cells.
func (d *Doc) Tables() [][][]string {
	var tables [][][]string
	for _, t := range Find(d.HTML, "table") {
		var rows [][]string
		for _, tr := range Find(t, "tr") {
			if len(Find(tr, "th")) > 0 {
				continue
			}
			var cells []string
			for _, td := range Find(tr, "td") {
				cells = append(cells, strings.TrimSpace(Text(td)))
			}
			rows = append(rows, cells)
		}
		tables = append(tables, rows)
	}
	return tables
}

// CodeBlocks returns the content of the fenced code blocks whose info
// string is info.
func (d *Doc) CodeBlocks(info string) []string {
	var out []string
	_ = ast.Walk(d.Root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if cb, ok := n.(*ast.FencedCodeBlock); ok && entering && string(cb.Language(d.Source)) == info {
			var b strings.Builder
			for i := 0; i < cb.Lines().Len(); i++ {
				seg := cb.Lines().At(i)
				b.Write(seg.Value(d.Source))
			}
			out = append(out, b.String())
		}
		return ast.WalkContinue, nil
	})
	return out
}

// Paragraphs returns the text of every paragraph as a reader sees it.
func (d *Doc) Paragraphs() []string {
	var out []string
	for _, p := range Find(d.HTML, "p") {
		out = append(out, Text(p))
	}
	return out
}
