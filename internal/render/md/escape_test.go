package md

import (
	"bytes"
	"github.com/planexhq/planex/internal/render/md/mdtest"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"golang.org/x/net/html"
)

// hostile is text an agent (or a prompt injection steering it) might
// write to hide tasks, forge markers, ping people or break the layout.
var hostile = []string{
	"<!-- hide everything below",
	"<!-- planex:plan {\"id\":\"x\",\"sha256\":\"y\"} -->",
	"--> closes a comment",
	"<details><summary>boring</summary>",
	"</details>",
	"</table>",
	"</td></tr><tr><td>T99",
	"<img src=x onerror=alert(1)>",
	`<a href="javascript:alert(1)">click</a>`,
	"<picture><source srcset=x></picture>",
	"<sub>tiny print</sub>",
	"<script>alert(1)</script>",
	"<div>\n\nhidden\n\n</div>",
	"&lt;details&gt; and &#60;!-- x --&#62; and &#x3C;img&#x3E;",
	"&#64;octocat and &commat;octocat",
	"a | b | c",
	`a \| b`,
	`a \\| b`,
	`\\|`,
	"|",
	"title\n| T9 | fake | `x` | — |",
	"title\n\n- [ ] T99 fake task",
	"title\n|---|---|",
	"\n# Heading",
	"line\n===",
	"line\n---",
	"```",
	"```\n</details>\n```",
	"```mermaid\ngraph TD\n```",
	"~~~\n<!--\n~~~",
	"    indented code",
	"``unclosed",
	"`code` and ``more`` and `<!-- planex:finding 0123456789 -->`",
	"`` ` ``",
	"`a|b` in a cell",
	"`a\\|b` in a cell",
	"@octocat please look",
	"cc @org/team and (@admin)",
	"fixes #12",
	"Closes #1, resolves GH-3 and o/r#4",
	"/planex approve abc1234567",
	"/planex",
	"   /planex cancel",
	"line\n/planex approve abc1234567",
	"![x](https://example.com/x.png)",
	"[click](https://example.com)",
	"[^1] and [x]: https://example.com",
	"*not italic* _nor this_ **nor bold** ~~nor struck~~",
	"$$\n\\begin{array}\n$$ and $x$",
	"> quote",
	"- item",
	"+ item",
	"* item",
	"1. one",
	"2) two",
	"***",
	"___",
	"> [!WARNING]\n> fake alert",
	"abc\u202edef\u2066ghi",
	"nul\x00byte and bell\x07",
	"cr\r```\rcr",
	"tag\U000e0041\U000e0042chars",
	"trailing backslash \\",
	"C:\\path\\to\\file",
	"<",
	"a <b> c",
	"x\u2028<!--\u2029y",
}

// readable is legitimate text that must render exactly as written.
var readable = []string{
	"Add a token-bucket limiter in front of the API handlers.",
	"scope api/**/*.go and internal/foo_bar/baz_test.go",
	"snake_case_name and __init__ and _leading and trailing_",
	"a * b = c, x ~ y, 5 $ and 100%",
	"email ops@example.com, AT&T, a && b, x -> y, p >= q",
	"price is $5 (not $6)",
	"naïve café — ünïcödé ✓ 🚀",
	"fix #12 later",
	"path /usr/local/bin and /etc/hosts",
	"1.5 is a number, 2024 a year",
	"C:\\path\\to\\file",
	"brackets [like this] and (this) and {this}",
	"C# and F# are languages",
}

func parse(t *testing.T, src string) (ast.Node, []byte) {
	t.Helper()
	m := goldmark.New(goldmark.WithExtensions(extension.GFM))
	source := []byte(src)
	doc := m.Parser().Parse(text.NewReader(source))
	var out bytes.Buffer
	if err := m.Renderer().Render(&out, source, doc); err != nil {
		t.Fatal(err)
	}
	return doc, out.Bytes()
}

// assertSafe checks what must hold in every context: no raw HTML, no
// link or image the text made, no mention, issue reference or command
// line in what is shown.
func assertSafe(t *testing.T, label, src string) ast.Node {
	t.Helper()
	doc, out := parse(t, src)
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindHTMLBlock, ast.KindRawHTML:
			t.Errorf("%s: raw HTML node %s in\n%s", label, n.Kind(), src)
		case ast.KindLink, ast.KindImage:
			t.Errorf("%s: %s node in\n%s", label, n.Kind(), src)
		case east.KindTaskCheckBox:
			t.Errorf("%s: a task list item in\n%s", label, src)
		}
		return ast.WalkContinue, nil
	})
	if bytes.Contains(out, []byte("<!--")) {
		t.Errorf("%s: HTML comment in the rendering:\n%s", label, out)
	}
	checkShownText(t, label, src, out)
	return doc
}

var (
	// As GitHub finds them: after the start or a non-word character.
	mentionRe  = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])@[A-Za-z0-9]`)
	issueRefRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(?:#|GH-)[0-9]`)
)

// checkShownText looks at the text GitHub's mention and reference
// filters would see (outside code) and the start of every paragraph.
func checkShownText(t *testing.T, label, src string, out []byte) {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *html.Node, inCode bool)
	walk = func(n *html.Node, inCode bool) {
		switch n.Type {
		case html.CommentNode:
			t.Errorf("%s: HTML comment %q", label, n.Data)
		case html.ElementNode:
			switch n.Data {
			case "html", "head", "body", "p", "code", "pre", "table", "thead", "tbody", "tr", "th", "td", "blockquote", "ul", "li", "h3", "strong", "em", "br",
				"a": // bare URLs are links on GitHub too; the AST check above refuses [text](url)
			default:
				t.Errorf("%s: element <%s> rendered from\n%s", label, n.Data, src)
			}
			inCode = inCode || n.Data == "code" || n.Data == "pre"
			if n.Data == "p" {
				if s := rawText(n); strings.HasPrefix(strings.TrimSpace(s), "/planex") {
					t.Errorf("%s: a paragraph starts with a command: %q", label, s)
				}
			}
		case html.TextNode:
			if !inCode {
				for _, line := range strings.Split(n.Data, "\n") {
					if mentionRe.MatchString(line) || issueRefRe.MatchString(line) {
						t.Errorf("%s: mention or issue reference in shown text %q", label, line)
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inCode)
		}
	}
	walk(root, false)
}

// textOf is the text of n as a reader sees it (zero-width joiners are
// invisible).
func textOf(n *html.Node) string { return strings.ReplaceAll(rawText(n), zwj, "") }

// rawText is the text of n as a program reading it sees it.
func rawText(n *html.Node) string {
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
	return b.String()
}

// kinds lists the kinds of n's children.
func kinds(n ast.Node) []string {
	var ks []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		ks = append(ks, c.Kind().String())
	}
	return ks
}

func allInputs() []string { return append(append([]string(nil), hostile...), readable...) }

func TestTextStaysOneParagraph(t *testing.T) {
	for _, s := range allInputs() {
		out := Text(s)
		if strings.ContainsAny(out, "\n\r") {
			t.Errorf("Text(%q) = %q spans lines", s, out)
		}
		if out == "" {
			continue
		}
		for _, src := range []string{"before\n\n" + out + "\n\nafter", out} {
			doc := assertSafe(t, "Text", src)
			want := "Paragraph"
			if strings.HasPrefix(src, "before") {
				want = "Paragraph,Paragraph,Paragraph"
			}
			if got := strings.Join(kinds(doc), ","); got != want {
				t.Errorf("Text(%q) = %q parses as %s", s, out, got)
			}
		}
		// In a heading and in a list item it stays inside them.
		doc := assertSafe(t, "heading", "### T1: "+out+"\n\nafter")
		if got := strings.Join(kinds(doc), ","); got != "Heading,Paragraph" {
			t.Errorf("heading with %q parses as %s", out, got)
		}
		doc = assertSafe(t, "list", "- **T1**: "+out+"\n- **T2**: next\n\nafter")
		if got := strings.Join(kinds(doc), ","); got != "List,Paragraph" || doc.FirstChild().ChildCount() != 2 {
			t.Errorf("list with %q parses as %s", out, got)
		}
		for item := doc.FirstChild().FirstChild(); item != nil; item = item.NextSibling() {
			if got := strings.Join(kinds(item), ","); got != "TextBlock" {
				t.Errorf("list item with %q holds %s", out, got)
			}
		}
	}
}

func TestTextReadsAsWritten(t *testing.T) {
	cases := map[string]string{
		"`code` and ``more``":    "code and more",
		"call `f(a|b)` now":      "call f(a|b) now",
		"a `<!--` b":             "a <!-- b",
		"``unclosed":             "``unclosed",
		"x ` y":                  "x ` y",
		"**bold** stays literal": "**bold** stays literal",
		"tab\tand\nnewline":      "tab and newline",
		"<details>":              "<details>",
		"&lt;b&gt;":              "&lt;b&gt;",
		"/planex approve x":      "/planex approve x",
		"@octocat":               "@octocat",
		"- item":                 "- item",
		"10. ten":                "10. ten",
		"$$ math $$":             "$$ math $$",
		"[x](y)":                 "[x](y)",
		"a\u202eb":               "ab",
		"GH-12 and gh-3, xGH-4":  "GH-12 and gh-3, xGH-4",
		"trailing backslash \\":  "trailing backslash \\",
		"back\\`tick` and more`": "back\\tick and more`",
		"C:\\path\\to\\file":     "C:\\path\\to\\file",
		"#12 at the start":       "#12 at the start",
		"=== underline":          "=== underline",
	}
	for _, s := range readable {
		cases[s] = s
	}
	for in, want := range cases {
		_, out := parse(t, Text(in))
		root, err := html.Parse(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(root); strings.TrimSpace(got) != want {
			t.Errorf("Text(%q) = %q renders as %q, want %q", in, Text(in), got, want)
		}
	}
}

func TestTextKeepsCodeSpans(t *testing.T) {
	src := []byte(Text("run `go test ./...` then `<b>` and ``a ` b``"))
	doc, _ := parse(t, string(src))
	var spans []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && n.Kind() == ast.KindCodeSpan {
			spans = append(spans, nodeText(n, src))
		}
		return ast.WalkContinue, nil
	})
	if strings.Join(spans, "|") != "go test ./...|<b>|a ` b" {
		t.Errorf("code spans %q", spans)
	}
}

func TestMentionsAndReferencesAreNeutral(t *testing.T) {
	for in, want := range map[string]string{
		"@octocat":          "@" + zwj + "octocat",
		"(@admin)":          "(@" + zwj + "admin)",
		"ops@example.com":   "ops@example.com",
		"a@b.c.d@user":      "a@b.c.d@" + zwj + "user",
		"0@0.0@0":           "0@0.0@" + zwj + "0",
		"a@b.c @user":       "a@b.c @" + zwj + "user",
		"fixes #12":         "fixes #" + zwj + "12",
		"GH-3":              "GH-" + zwj + "3",
		"C# rocks":          "C# rocks",
		"/planex approve":   "/" + zwj + "planex approve",
		"/usr/bin":          "/usr/bin",
		"x /planex approve": "x /planex approve",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCellStaysInItsCell(t *testing.T) {
	for _, s := range allInputs() {
		for name, cell := range map[string]string{"Cell": Cell(s), "CodeCell": CodeCell(s), "Cell+Code": Cell(s) + " " + CodeCell(s)} {
			src := "| Task | Title | Status |\n|---|---|---|\n| T1 | " + cell + " | done |\n| T2 | second | pending |\n\nafter\n"
			doc := assertSafe(t, name, src)
			if got := strings.Join(kinds(doc), ","); got != "Table,Paragraph" {
				t.Errorf("%s(%q) = %q: document is %s", name, s, cell, got)
				continue
			}
			table := doc.FirstChild()
			if table.ChildCount() != 3 {
				t.Errorf("%s(%q) = %q: %d rows, want header and 2", name, s, cell, table.ChildCount())
			}
			for row := table.FirstChild(); row != nil; row = row.NextSibling() {
				if row.ChildCount() != 3 {
					t.Errorf("%s(%q) = %q: a row has %d cells", name, s, cell, row.ChildCount())
				}
			}
			_, out := parse(t, src)
			root, _ := html.Parse(bytes.NewReader(out))
			tds := findAll(root, "td")
			if len(tds) != 6 || textOf(tds[0]) != "T1" || textOf(tds[2]) != "done" || textOf(tds[3]) != "T2" {
				t.Errorf("%s(%q) = %q: cells are wrong:\n%s", name, s, cell, out)
			}
		}
	}
}

func TestCellReadsAsWritten(t *testing.T) {
	cases := map[string]string{"a | b": "a | b", `a \| b`: `a \| b`, "`a|b`": "a|b", "`a\\\\|b`": "a\\\\|b"}
	for _, s := range readable {
		cases[s] = s
	}
	for in, want := range cases {
		_, out := parse(t, "| x |\n|---|\n| "+Cell(in)+" |\n")
		root, _ := html.Parse(bytes.NewReader(out))
		tds := findAll(root, "td")
		if len(tds) != 1 || textOf(tds[0]) != want {
			t.Errorf("Cell(%q) = %q renders as %q, want %q", in, Cell(in), out, want)
		}
	}
}

func TestCodeIsOneSpan(t *testing.T) {
	for _, s := range allInputs() {
		out := Code(s)
		want := strings.ReplaceAll(collapse(clean(s)), "<!--", "<"+zwj+"!--")
		if want == "" {
			if out != "" {
				t.Errorf("Code(%q) = %q, want empty", s, out)
			}
			continue
		}
		doc := assertSafe(t, "Code", "see "+out+" end")
		var spans []string
		_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if entering && n.Kind() == ast.KindCodeSpan {
				spans = append(spans, nodeText(n, []byte("see "+out+" end")))
			}
			return ast.WalkContinue, nil
		})
		if len(spans) != 1 || spans[0] != want {
			t.Errorf("Code(%q) = %q gives spans %q, want one %q", s, out, spans, want)
		}
		cell := CodeCell(s)
		src := "| a |\n|---|\n| " + cell + " |\n"
		_, html := parse(t, src)
		if !bytes.Contains(html, []byte("<td><code>")) {
			t.Errorf("CodeCell(%q) = %q is not one code cell: %s", s, cell, html)
		}
	}
}

func TestBlockKeepsParagraphsOnly(t *testing.T) {
	for _, s := range allInputs() {
		out := Block(s)
		if out == "" {
			continue
		}
		doc := assertSafe(t, "Block", "before\n\n"+out+"\n\nafter")
		for _, k := range kinds(doc) {
			if k != "Paragraph" {
				t.Errorf("Block(%q) = %q makes a %s", s, out, k)
			}
		}
		if nodeText(doc.FirstChild(), []byte("before\n\n"+out+"\n\nafter")) != "before" {
			t.Errorf("Block(%q) changed the paragraph before it", s)
		}
		doc = assertSafe(t, "Quote", "before\n\n"+Quote(s)+"\n\nafter")
		if got := strings.Join(kinds(doc), ","); got != "Paragraph,Blockquote,Paragraph" {
			t.Errorf("Quote(%q) = %q parses as %s", s, Quote(s), got)
		}
	}
	if got := Block("\n\none\ntwo\n\n\n\nthree\n\n"); got != "one  \ntwo\n\nthree" {
		t.Errorf("Block kept the wrong breaks: %q", got)
	}
}

func TestCodeBlockCannotBeClosed(t *testing.T) {
	for _, s := range allInputs() {
		out := CodeBlock("text", s)
		src := "before\n\n" + out + "\n\nafter"
		doc := assertSafe(t, "CodeBlock", src)
		if got := strings.Join(kinds(doc), ","); got != "Paragraph,FencedCodeBlock,Paragraph" {
			t.Errorf("CodeBlock(%q) = %q parses as %s", s, out, got)
			continue
		}
		var body strings.Builder
		lines := doc.FirstChild().NextSibling().Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			body.Write(seg.Value([]byte(src)))
		}
		want := defuseCommands(strings.ReplaceAll(clean(s), "<!--", "<"+zwj+"!--"))
		if want != "" && !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		if body.String() != want {
			t.Errorf("CodeBlock(%q) holds %q, want %q", s, body.String(), want)
		}
	}
	if got := CodeBlock("mer`maid\n", "x"); !strings.HasPrefix(got, "```mermaid\n") {
		t.Errorf("info string not cleaned: %q", got)
	}
}

func TestMermaidLabelStaysInItsNode(t *testing.T) {
	for _, s := range allInputs() {
		label := MermaidLabel(s)
		if strings.ContainsAny(label, "\"\n\r<>`%") || strings.Contains(label, "-->") {
			t.Errorf("MermaidLabel(%q) = %q keeps Mermaid syntax", s, label)
		}
		src := "```mermaid\ngraph TD\n  " + MermaidID("T1") + "[\"T1: " + label + "\"]\n```\n\nafter\n"
		doc := assertSafe(t, "Mermaid", src)
		if got := strings.Join(kinds(doc), ","); got != "FencedCodeBlock,Paragraph" || doc.FirstChild().Lines().Len() != 2 {
			t.Errorf("MermaidLabel(%q) = %q breaks the block: %s", s, label, got)
		}
	}
	if got := MermaidLabel(`say "hi" <b> #1 %%{init}%% a-->b`); got != `say #quot;hi#quot; #lt;b#gt; #35;1 #37;#37;{init}#37;#37; a--#gt;b` {
		t.Errorf("MermaidLabel = %q", got)
	}
	for in, want := range map[string]string{"T12": "T12", "T1\"]\n  X": "T1X", "": "_", "a-b": "ab"} {
		if got := MermaidID(in); got != want {
			t.Errorf("MermaidID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNoOutputCarriesAMarker(t *testing.T) {
	fns := map[string]func(string) string{"Text": Text, "Cell": Cell, "Code": Code, "CodeCell": CodeCell, "Block": Block, "Quote": Quote,
		"CodeBlock": func(s string) string { return CodeBlock("", s) }, "MermaidLabel": MermaidLabel}
	for name, f := range fns {
		for _, s := range allInputs() {
			out := f(s)
			if strings.Contains(out, "<!--") || strings.ContainsAny(out, "\r\x00\u202e") {
				t.Errorf("%s(%q) = %q", name, s, out)
			}
		}
	}
}

func findAll(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	if n.Type == html.ElementNode && n.Data == tag {
		out = append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, findAll(c, tag)...)
	}
	return out
}

// nodeText is the text of n's inline content as written in src.
func nodeText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// cmarkCells splits a table row the way cmark-gfm (GitHub's parser)
// does: a backslash escapes any ASCII punctuation, so "\\|" is an
// escaped backslash and then a cell boundary, where goldmark would see
// an escaped pipe. Only cmark-gfm's rule is stricter, so it is checked
// here on its own.
func cmarkCells(row string) int {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	n := 1
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", row[i+1]) >= 0:
			i++
		case row[i] == '|' && i < len(row)-1:
			n++
		}
	}
	return n
}

func TestCellsSplitLikeCmarkGFM(t *testing.T) {
	if cmarkCells(`| a \\| b |`) != 2 || cmarkCells(`| a \| b |`) != 1 {
		t.Fatal("the cmark-gfm model is wrong")
	}
	inputs := append(allInputs(), `\|`, `\\|`, `\\\|`, "`\\|`", "`\\\\|`", "`\\\\\\|`", "`|\\`", "x `\\|` y `|` z")
	for _, s := range inputs {
		for name, cell := range map[string]string{"Cell": Cell(s), "CodeCell": CodeCell(s)} {
			if n := cmarkCells("| " + cell + " |"); n != 1 {
				t.Errorf("%s(%q) = %q is %d cells for cmark-gfm", name, s, cell, n)
			}
		}
	}
}

// TestBareURLsAndClosingReferencesAreNeutral: agent text that names an
// issue by URL or by owner/repo#N, after a closing keyword or not, links
// nothing and closes nothing, and reads as written.
func TestBareURLsAndClosingReferencesAreNeutral(t *testing.T) {
	t.Parallel()
	cases := []string{
		"Fixes https://github.com/octo/demo/issues/12",
		"closes HTTP://github.com/octo/demo/pull/3 and resolves www.github.com/octo/demo/issues/4",
		"Closes octo/demo#12, fixes octo/other#7",
		"see https://evil.example/x?a=b#frag (and http://localhost:8080/)",
		"mail ops@example.com or visit WWW.example.com.",
		"`https://in.code/span` stays code, outside https://is.neutral",
	}
	for _, in := range cases {
		out := Text(in)
		doc, err := mdtest.Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		if probs := doc.Problems(mdtest.Rules{}); len(probs) > 0 {
			t.Errorf("Text(%q) = %q: %v", in, out, probs)
		}
		if got := strings.ReplaceAll(strings.Join(doc.Paragraphs(), "\n"), zwj, ""); got != strings.ReplaceAll(in, "`", "") {
			t.Errorf("Text(%q) reads %q", in, got)
		}
	}
	for in, want := range map[string]string{
		"https://x.example": "https:" + zwj + "//x.example",
		"www.x.example":     "www" + zwj + ".x.example",
		"awww.x":            "awww" + zwj + ".x",
		"xhttps://y":        "xhttps:" + zwj + "//y",
		"ratio 3:2/4":       "ratio 3:2/4",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRedTeamCodeBlockCarriesNoCommand: text planex quotes in a code
// block (a CI log excerpt the agent's code printed, an error) puts a
// bot's slash command at the start of a line. Other bots on the
// repository (Prow's /lgtm, /approve, /retest; /planex itself in another
// installation) read the comment's raw lines, code blocks included, and
// planex's account, a writer of the repository, would be the one asking.
func TestRedTeamCodeBlockCarriesNoCommand(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"/lgtm", "ok\n/approve\n", "  /merge", "\t/retest all", "x\n/planex approve 0123456789\n", "/assign @someone"} {
		for _, line := range strings.Split(CodeBlock("text", s), "\n") {
			if l := strings.TrimLeft(line, " \t"); strings.HasPrefix(l, "/") && looksLikeCommand(l) {
				t.Errorf("CodeBlock(%q) has the line %q", s, line)
			}
		}
	}
	// Paths are left as they are.
	if got := CodeBlock("", "/usr/bin/env go\n"); got != "```\n/usr/bin/env go\n```" {
		t.Errorf("CodeBlock changed a path: %q", got)
	}
}
