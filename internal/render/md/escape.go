// Package md escapes text planex did not write (an agent's plan, a
// reviewer's findings, an issue's requirement, file names from a
// worktree) for the GitHub Flavored Markdown planex posts: plan and
// status comments, pull request bodies, reviews and the job summary.
//
// Each function serves one context: running text (Text), multi-line
// text (Block, Quote), a table cell (Cell), a code span (Code,
// CodeCell), a fenced code block (CodeBlock) and a Mermaid node label
// (MermaidLabel, MermaidID). Whatever the input, the output cannot
// open raw HTML or an HTML comment (so it can neither hide what
// follows nor forge one of planex's markers), cannot start a block of
// its own (heading, list, quote, fence, table, math), cannot leave its
// table cell, code span or code block, cannot make links or images,
// cannot mention a user or reference an issue (nor close one), cannot
// make a bare URL GitHub links (http://, https://, www.), and cannot begin a line
// with something that looks like a `/command`. Ordinary text still
// reads as written once rendered: backslash escapes and entities do not
// show, and code spans the author wrote stay code spans.
//
// Mentions are neutralised with a zero-width joiner after the "@" (and
// after the "#" of an issue reference) rather than by wrapping them in
// backticks: the text keeps its look and never turns into code in the
// middle of a sentence, the escape works the same in every context
// (inside a code span a backtick could not be used), and GitHub's
// mention and reference filters, which run on the rendered text, no
// longer see a name or a number right after the sign. Backslash escapes
// and HTML entities would not do: both are decoded before those
// filters run.
package md

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// zwj is the zero-width joiner that breaks mentions, references and
// comment openers without changing how the text looks.
const zwj = "\u200d"

// Text escapes s for running Markdown text: a paragraph, a list item,
// a heading or emphasis. Whitespace, line breaks included, collapses to
// single spaces, so the result is one line.
func Text(s string) string { return inline(s, false) }

// Cell escapes s for one cell of a GFM table: Text, with the pipes in
// code spans escaped too, so that nothing splits the cell.
func Cell(s string) string { return inline(s, true) }

// Code renders s as one inline code span (whitespace collapsed), with a
// delimiter longer than any backtick run in s so s cannot close it.
// An empty s gives "".
func Code(s string) string { return codeSpan(collapse(clean(s)), false) }

// CodeCell is Code for a table cell: pipes inside the span are escaped
// as GFM requires.
func CodeCell(s string) string { return codeSpan(collapse(clean(s)), true) }

// Block escapes multi-line text: every line is escaped as Text, so no
// line can start a block of its own; paragraphs (separated by blank
// lines) are kept, and so are line breaks, as hard breaks (two spaces),
// since a job summary or a Markdown file would join the lines.
func Block(s string) string {
	var paras [][]string
	cur := []string(nil)
	for _, line := range strings.Split(clean(s), "\n") {
		if t := Text(line); t != "" {
			cur = append(cur, t)
			continue
		}
		if cur != nil {
			paras = append(paras, cur)
			cur = nil
		}
	}
	if cur != nil {
		paras = append(paras, cur)
	}
	out := make([]string, len(paras))
	for i, p := range paras {
		out[i] = strings.Join(p, "  \n")
	}
	return strings.Join(out, "\n\n")
}

// Quote renders Block(s) as one block quote.
func Quote(s string) string {
	b := Block(s)
	if b == "" {
		return ">"
	}
	lines := strings.Split(b, "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "\n")
}

// CodeBlock renders s as a fenced code block with the info string info
// (e.g. "mermaid"; only letters, digits, "-", "_" and "+" are kept). The
// fence is longer than any backtick run in s, so no line of s closes it.
func CodeBlock(info string, s string) string {
	info = strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && (isAlnum(byte(r)) || r == '-' || r == '_' || r == '+') {
			return r
		}
		return -1
	}, info)
	s = defuseCommands(defuseComments(clean(s)))
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return fence + info + "\n" + s + fence
}

// MermaidLabel escapes s for a quoted Mermaid node label (`A["…"]`):
// whitespace collapses, and the characters Mermaid or the surrounding
// code block could read as syntax (quotes, angle brackets, backticks,
// "#" entities, "%%" directives) become Mermaid entity codes.
func MermaidLabel(s string) string {
	var b strings.Builder
	for _, r := range collapse(clean(s)) {
		switch r {
		case '"':
			b.WriteString("#quot;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '#', '%', '`', '&':
			// "#…;" is Mermaid's entity syntax, "%%" starts a comment or
			// a directive, backticks a Markdown label.
			b.WriteString("#" + strconv.Itoa(int(r)) + ";")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// MermaidID makes s usable as a Mermaid node id: only ASCII letters,
// digits and "_" are kept (plan ids, "T12", pass unchanged).
func MermaidID(s string) string {
	id := strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && (isAlnum(byte(r)) || r == '_') {
			return r
		}
		return -1
	}, s)
	if id == "" {
		return "_"
	}
	return id
}

// inline escapes one line of text; table says whether it sits in a GFM
// table cell.
func inline(s string, table bool) string {
	s = collapse(clean(s))
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			escapeText(&b, s, prevRune(&b))
			break
		}
		escapeText(&b, s[:i], prevRune(&b))
		s = s[i:]
		n := runLen(s, '`')
		if end := closingRun(s[n:], n); end >= 0 {
			// A code span the author wrote: kept as code.
			b.WriteString(codeContent(s[:n+end+n], table))
			s = s[n+end+n:]
			continue
		}
		// An unmatched run of backticks is literal text.
		b.WriteString(strings.Repeat("\\`", n))
		s = s[n:]
	}
	return escapeStart(b.String())
}

// escapeText escapes a stretch of text that holds no backtick. prev is
// the character before it in the output (0 at the start).
func escapeText(b *strings.Builder, s string, prev rune) {
	for i, r := range s {
		next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
		if i+utf8.RuneLen(r) >= len(s) {
			next = 0
		}
		escapeRune(b, r, prev, next)
		prev = r
	}
}

// escapeRune writes r escaped as its neighbours prev and next (0 at the
// ends) require.
func escapeRune(b *strings.Builder, r, prev, next rune) {
	switch r {
	case '\\', '*', '~', '[', ']', '|', '$':
		// Emphasis, strikethrough, links and images, footnotes,
		// table pipes, math, and escapes of the author's own.
		b.WriteByte('\\')
		b.WriteRune(r)
	case '_':
		// Inside a word (snake_case) "_" is never emphasis; elsewhere
		// it could be.
		if isWordRune(prev) && isWordRune(next) {
			b.WriteRune(r)
		} else {
			b.WriteString(`\_`)
		}
	case '<':
		// Raw HTML, HTML comments and autolinks all start here.
		b.WriteString("&lt;")
	case '&':
		// An entity could spell "<" or "@" after the escapes above.
		if next == '#' || next < utf8.RuneSelf && isAlpha(byte(next)) {
			b.WriteString("&amp;")
		} else {
			b.WriteRune(r)
		}
	case '@', '#', '-':
		escapeReference(b, r, prev, next)
	case ':':
		// http:// and https:// start a bare URL GitHub links (and an
		// issue's URL after "fixes" closes it).
		b.WriteRune(r)
		if low := strings.ToLower(tail(b.String(), 6)); next == '/' && (strings.HasSuffix(low, "http:") || strings.HasSuffix(low, "https:")) {
			b.WriteString(zwj)
		}
	case '.':
		// So does "www.".
		if strings.EqualFold(tail(b.String(), 3), "www") {
			b.WriteString(zwj)
		}
		b.WriteRune(r)
	default:
		b.WriteRune(r)
	}
}

// escapeReference writes r, one of the characters that start a mention
// or an issue reference, and breaks the reference with a zero-width
// joiner where GitHub would otherwise link (and notify or close).
func escapeReference(b *strings.Builder, r, prev, next rune) {
	digit := next >= '0' && next <= '9'
	switch r {
	case '@':
		// After a word character the "@" is an e-mail address's, which
		// pings nobody, unless the word already holds an "@": an address
		// before it ("a@b.c@user") becomes a link of its own, and the text
		// after that link starts with "@user", a mention to GitHub.
		afterWord := prev < utf8.RuneSelf && (isAlnum(byte(prev)) || prev == '_') && !strings.Contains(lastWord(b.String()), "@")
		b.WriteRune(r)
		if next < utf8.RuneSelf && isAlnum(byte(next)) && !afterWord {
			b.WriteString(zwj) // @user would notify the user
		}
	case '#':
		b.WriteRune(r)
		if digit {
			b.WriteString(zwj) // #12 links the issue and "fixes #12" closes it
		}
	case '-':
		ref := digit && endsWithGH(b.String())
		b.WriteRune(r)
		if ref {
			b.WriteString(zwj) // GH-12 is an issue reference too
		}
	}
}

// lastWord is the end of s from its last white space on.
func lastWord(s string) string {
	i := strings.LastIndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s
	}
	_, size := utf8.DecodeRuneInString(s[i:])
	return s[i+size:]
}

// escapeStart escapes what would start a block when s begins a line: a
// heading, quote, list item, setext underline or thematic break, and a
// word that looks like a slash command.
func escapeStart(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '#', '>', '-', '+', '=':
		return `\` + s
	case '/':
		if looksLikeCommand(s) {
			return "/" + zwj + s[1:]
		}
		return s
	}
	// "1. item" and "1) item" are ordered list items.
	i := 0
	for i < len(s) && i < 10 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		return s[:i] + `\` + s[i:]
	}
	return s
}

// looksLikeCommand says whether s starts like a slash command: "/"
// and a word not followed by another "/" (a path such as /usr/bin is
// left alone).
func looksLikeCommand(s string) bool {
	if len(s) < 2 || !isAlpha(s[1]) {
		return false
	}
	i := 1
	for i < len(s) && (isAlnum(s[i]) || s[i] == '-' || s[i] == '_' || s[i] == '.') {
		i++
	}
	return i == len(s) || s[i] != '/'
}

// codeContent renders a code span the author wrote (span includes its
// delimiters) for the output.
func codeContent(span string, table bool) string {
	n := runLen(span, '`')
	return codeWith(span[n:len(span)-n], strings.Repeat("`", n), table)
}

// codeSpan renders s as a new code span.
func codeSpan(s string, table bool) string {
	if s == "" {
		return ""
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	// A space on each side keeps a leading or trailing backtick apart
	// from the fence, and stays invisible: CommonMark strips one space
	// from each side when both are there.
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || (strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ")) {
		s = " " + s + " "
	}
	return codeWith(s, fence, table)
}

func codeWith(content, fence string, table bool) string {
	content = defuseComments(content)
	if table {
		content = escapeCodePipes(content)
	}
	return fence + content + fence
}

// escapeCodePipes escapes the pipes in a code span inside a table cell.
// GFM finds cell boundaries before it parses code spans, and only a pipe
// behind an odd run of backslashes is escaped (cmark-gfm pairs
// backslashes; goldmark looks at the one before), so each pipe gets one
// or two backslashes to make its run odd.
func escapeCodePipes(s string) string {
	var b strings.Builder
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '|' {
			if run%2 == 0 {
				b.WriteString(`\`)
			} else {
				b.WriteString(`\\`)
			}
		}
		if c == '\\' {
			run++
		} else {
			run = 0
		}
		b.WriteByte(c)
	}
	return b.String()
}

// defuseCommands breaks the slash commands that start a line of text
// shown literally (a code block) with a zero-width joiner after the
// "/": bots that read a comment's raw lines would take one for a
// command from planex's account.
func defuseCommands(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		rest := strings.TrimLeft(l, " \t")
		if strings.HasPrefix(rest, "/") && looksLikeCommand(rest) {
			lines[i] = l[:len(l)-len(rest)] + "/" + zwj + rest[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// defuseComments breaks "<!--" in text that is shown literally (code),
// where an entity would show: planex finds its markers by that string.
func defuseComments(s string) string { return strings.ReplaceAll(s, "<!--", "<"+zwj+"!--") }

// clean drops what has no business in posted text: control characters
// (a lone carriage return would end a line), NUL, and the bidirectional
// controls that make text display in another order than it reads.
func clean(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r' || r == '\v' || r == '\f' || r == '\u2028' || r == '\u2029' || r == '\u0085':
			return '\n'
		case r == utf8.RuneError, unicode.IsControl(r):
			return -1
		case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
			return -1
		case r >= 0xe0000 && r <= 0xe007f:
			// Tag characters: invisible, yet a model reads them.
			return -1
		}
		return r
	}, s)
}

// collapse turns every run of whitespace into one space and trims.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// closingRun finds the first run of exactly n backticks in s and
// returns its offset, or -1.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := runLen(s[i:], '`')
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func runLen(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// prevRune is the last character written to b (0 when none).
func prevRune(b *strings.Builder) rune {
	r, _ := utf8.DecodeLastRuneInString(b.String())
	if r == utf8.RuneError {
		return 0
	}
	return r
}

func endsWithGH(s string) bool {
	if len(s) < 2 {
		return false
	}
	g := s[len(s)-2:]
	if !strings.EqualFold(g, "gh") {
		return false
	}
	if len(s) == 2 {
		return true
	}
	c := s[len(s)-3]
	return !isAlnum(c) && c != '_'
}

// tail is the last n bytes of s (all of it when shorter).
func tail(s string, n int) string { return s[max(0, len(s)-n):] }

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }
