package repomap

import (
	"go/token"
	"strconv"
)

// Go files' declarations come from a one-pass lexer rather than go/parser:
// a map needs only the package name, imports and top-level names, and
// building a full syntax tree for every function body was most of a cold
// map's CPU. The lexer knows enough Go (comments, string, raw string and
// rune literals, bracket nesting, automatic semicolons) to find the
// top-level declarations of any file go/parser accepts; TestParseGoMatchesParser
// checks it against go/parser on real code.

// goTok is one Go token. kind is 'i' identifier, 's' string literal, 'n'
// number, 'r' rune literal, ';' (written or automatic), 0 at the end, or
// the punctuation byte itself.
type goTok struct {
	kind  byte
	text  []byte
	line  int
	depth int // bracket nesting within the spec being collected
}

type goLexer struct {
	data []byte
	pos  int
	line int
	// semi is set when a newline here would end the statement.
	semi bool
}

func isGoIdentByte(c byte) bool { return IsIdentByte(c) || c >= 0x80 }

func (l *goLexer) next() goTok {
	for l.pos < len(l.data) {
		c := l.data[l.pos]
		switch {
		// Blanks, newlines and identifiers, the commonest cases, stay here
		// rather than in calls.
		case isBlank(c):
			l.pos++
			continue
		case c == '\n':
			l.pos++
			l.line++
			if l.semi {
				l.semi = false
				return goTok{kind: ';', line: l.line - 1}
			}
			continue
		case l.atComment(c):
			if t, ok := l.comment(); ok {
				return t
			}
			continue
		}
		start, line := l.pos, l.line
		switch {
		case c == '"' || c == '\'':
			return l.quoted(c, start, line)
		case c == '`':
			return l.rawString(start, line)
		case l.atNumber(c):
			return l.number(start, line)
		case isGoIdentByte(c):
			for l.pos < len(l.data) && isGoIdentByte(l.data[l.pos]) {
				l.pos++
			}
			word := l.data[start:l.pos]
			l.semi = !goKeyword(word)
			return goTok{kind: 'i', text: word, line: line}
		}
		l.punct(c)
		return goTok{kind: c, text: l.data[start:l.pos], line: line}
	}
	if l.semi {
		l.semi = false
		return goTok{kind: ';', line: l.line}
	}
	return goTok{line: l.line}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// atNumber reports whether c at l.pos starts a number.
func (l *goLexer) atNumber(c byte) bool {
	return isDigit(c) || c == '.' && l.pos+1 < len(l.data) && isDigit(l.data[l.pos+1])
}

// atComment reports whether c at l.pos starts a comment.
func (l *goLexer) atComment(c byte) bool {
	return c == '/' && l.pos+1 < len(l.data) && (l.data[l.pos+1] == '/' || l.data[l.pos+1] == '*')
}

// comment consumes the comment at l.pos. It returns an automatic semicolon
// and true when a newline inside a general comment ends a statement.
func (l *goLexer) comment() (goTok, bool) {
	if l.data[l.pos+1] == '*' {
		return l.generalComment()
	}
	for l.pos < len(l.data) && l.data[l.pos] != '\n' {
		l.pos++
	}
	return goTok{}, false
}

// generalComment consumes a /* */ comment at l.pos.
func (l *goLexer) generalComment() (goTok, bool) {
	l.pos += 2
	newline := false
	for l.pos < len(l.data) && !(l.data[l.pos] == '*' && l.pos+1 < len(l.data) && l.data[l.pos+1] == '/') {
		if l.data[l.pos] == '\n' {
			l.line++
			newline = true
		}
		l.pos++
	}
	l.pos += 2
	if newline && l.semi {
		l.semi = false
		return goTok{kind: ';', line: l.line}, true
	}
	return goTok{}, false
}

// quoted scans a string or rune literal opened by quote c.
func (l *goLexer) quoted(c byte, start, line int) goTok {
	l.pos++
	for l.pos < len(l.data) && l.data[l.pos] != c && l.data[l.pos] != '\n' {
		if l.data[l.pos] == '\\' {
			l.pos++
		}
		l.pos++
	}
	if l.pos < len(l.data) && l.data[l.pos] == c {
		l.pos++
	}
	l.pos = min(l.pos, len(l.data))
	l.semi = true
	kind := byte('s')
	if c == '\'' {
		kind = 'r'
	}
	return goTok{kind: kind, text: l.data[start:l.pos], line: line}
}

// rawString scans a `raw string`.
func (l *goLexer) rawString(start, line int) goTok {
	l.pos++
	for l.pos < len(l.data) && l.data[l.pos] != '`' {
		if l.data[l.pos] == '\n' {
			l.line++
		}
		l.pos++
	}
	l.pos = min(l.pos+1, len(l.data))
	l.semi = true
	return goTok{kind: 's', text: l.data[start:l.pos], line: line}
}

// number scans a numeric literal.
func (l *goLexer) number(start, line int) goTok {
	for l.pos < len(l.data) && (isGoIdentByte(l.data[l.pos]) || l.data[l.pos] == '.') {
		l.pos++
	}
	l.semi = true
	return goTok{kind: 'n', text: l.data[start:l.pos], line: line}
}

// punct consumes one punctuation byte c (or ++ and --).
func (l *goLexer) punct(c byte) {
	l.pos++
	switch c {
	case ')', ']', '}':
		l.semi = true
	case '+', '-':
		l.semi = l.pos < len(l.data) && l.data[l.pos] == c
		if l.semi {
			l.pos++
		}
	default:
		l.semi = false
	}
}

// goKeyword reports keywords after which a newline does not end a
// statement (all but break, continue, fallthrough and return).
func goKeyword(w []byte) bool {
	switch string(w) {
	case "case", "chan", "const", "default", "defer", "else", "for", "func",
		"go", "goto", "if", "import", "interface", "map", "package", "range",
		"select", "struct", "switch", "type", "var":
		return true
	}
	return false
}

func opens(k byte) bool  { return k == '(' || k == '[' || k == '{' }
func closes(k byte) bool { return k == ')' || k == ']' || k == '}' }

// skipStatement consumes tokens up to the end of the statement t starts.
// Brackets it opens are skipped by skipNested, a byte at a time: a
// function's body is most of a Go file and nothing in it is kept.
func (l *goLexer) skipStatement(t goTok) {
	for ; t.kind != 0; t = l.next() {
		switch {
		case opens(t.kind):
			l.skipNested()
		case t.kind == ';':
			return
		}
	}
}

// skipNested consumes the text after an opening bracket up to and
// including its closing one (or to the end), leaving the lexer as next
// would have: literals and comments are consumed by the same functions,
// lines are counted the same, and only brackets, which no identifier,
// number or operator contains, are looked at. Inside brackets no newline
// ends a statement; after the closing bracket one does, as after any
// closing bracket; at the end nothing is pending.
func (l *goLexer) skipNested() {
	depth := 1
	for l.pos < len(l.data) {
		c := l.data[l.pos]
		switch {
		case c == '\n':
			l.line++
		case c == '"' || c == '\'':
			l.quoted(c, l.pos, l.line)
			continue
		case c == '`':
			l.rawString(l.pos, l.line)
			continue
		case l.atComment(c):
			l.comment()
			continue
		case opens(c):
			depth++
		case closes(c):
			if depth--; depth == 0 {
				l.pos++
				l.semi = true
				return
			}
		}
		l.pos++
	}
	l.semi = false
}

// spec collects the tokens of one spec starting with t, into buf. It stops
// at a ';' outside brackets or, inside a group, at the group's ')'; closed
// reports the latter.
func (l *goLexer) spec(t goTok, buf []goTok, group bool) (toks []goTok, closed bool) {
	depth := 0
	for ; t.kind != 0; t = l.next() {
		switch {
		case opens(t.kind):
			t.depth = depth
			depth++
		case closes(t.kind):
			if depth == 0 && group && t.kind == ')' {
				return buf, true
			}
			depth = max(depth-1, 0)
			t.depth = depth
		case t.kind == ';' && depth == 0:
			return buf, false
		default:
			t.depth = depth
		}
		buf = append(buf, t)
	}
	return buf, false
}

func parseGo(data []byte) parsed {
	out, _ := parseGoBuf(data, nil)
	return out
}

// parseGoBuf is parseGo collecting each spec's tokens into buf, which it
// returns (grown) for the next file: a worker reuses one buffer instead of
// growing a new one per file. The tokens left in it refer to data, which
// the caller drops with the buffer (see mergeVocabularies).
func parseGoBuf(data []byte, buf []goTok) (parsed, []goTok) {
	var out parsed
	l := &goLexer{data: data, line: 1}
	for t := l.next(); t.kind != 0; t = l.next() {
		if t.kind != 'i' {
			l.skipStatement(t)
			continue
		}
		switch string(t.text) {
		case "package":
			t = l.next()
			if t.kind == 'i' {
				out.pkg = string(t.text)
				out.isMain = out.pkg == "main"
			}
			l.skipStatement(t)
		case "func":
			out.symbols = l.funcDecl(t.line, out.symbols)
		case "import", "type", "var", "const":
			kw := string(t.text)
			t = l.next()
			group := t.kind == '('
			if group {
				t = l.next()
			}
			for t.kind != 0 {
				var closed bool
				buf, closed = l.spec(t, buf[:0], group)
				out = goSpec(kw, buf, out)
				if !group || closed {
					break
				}
				t = l.next()
			}
			if group {
				l.skipStatement(l.next())
			}
		default:
			l.skipStatement(t)
		}
	}
	return out, buf[:0]
}

// funcDecl reads a function or method declaration after its func keyword.
func (l *goLexer) funcDecl(line int, syms []Symbol) []Symbol {
	t := l.next()
	var recv []byte
	method := false
	if t.kind == '(' {
		// The receiver's type is its last name outside type arguments;
		// empty parentheses declare no receiver.
		for depth := 1; depth > 0; {
			t = l.next()
			method = method || depth > 1 || !closes(t.kind)
			switch {
			case t.kind == 0:
				return syms
			case opens(t.kind):
				depth++
			case closes(t.kind):
				depth--
			case t.kind == 'i' && depth == 1:
				recv = t.text
			}
		}
		t = l.next()
	}
	if t.kind == 'i' {
		s := Symbol{Name: string(t.text), Kind: KindFunc, Line: int32(line)}
		if method {
			s.Kind, s.Parent = KindMethod, receiverName(recv, syms)
		}
		syms = append(syms, s)
		t = l.next()
	}
	l.skipStatement(t)
	return syms
}

// receiverName is recv as a string, shared with the last symbol's parent
// when it is the same type (a file's methods mostly come together), so a
// type's many methods hold one copy of its name.
func receiverName(recv []byte, syms []Symbol) string {
	if len(syms) > 0 {
		last := &syms[len(syms)-1]
		if last.Parent == string(recv) {
			return last.Parent
		}
		if last.Name == string(recv) {
			return last.Name
		}
	}
	return string(recv)
}

// goSpec records what one import, type, var or const spec declares.
func goSpec(kw string, toks []goTok, out parsed) parsed {
	if len(toks) == 0 {
		return out
	}
	switch kw {
	case "import":
		out.imports = goImportSpec(toks, out.imports)
	case "type":
		out.symbols = goTypeSpec(toks, out.symbols)
	case "var", "const":
		out.symbols = goValueSpec(toks, out.symbols)
	}
	return out
}

// goImportSpec appends the path of an import spec.
func goImportSpec(toks []goTok, imports []string) []string {
	for _, t := range toks {
		if t.kind == 's' {
			if s, err := strconv.Unquote(string(t.text)); err == nil {
				imports = append(imports, s)
			}
			break
		}
	}
	return imports
}

// goTypeSpec appends the type a non-empty type spec declares.
func goTypeSpec(toks []goTok, syms []Symbol) []Symbol {
	if toks[0].kind != 'i' {
		return syms
	}
	i := 1
	if i+2 < len(toks) && toks[i].kind == '[' && typeParams(toks[i+1], toks[i+2]) {
		// Skip the type parameters.
		for i++; i < len(toks) && !(toks[i].kind == ']' && toks[i].depth == 0); i++ {
		}
		i++
	}
	if i < len(toks) && toks[i].kind == '=' {
		i++
	}
	kind := KindType
	if i < len(toks) && toks[i].kind == 'i' && string(toks[i].text) == "interface" {
		kind = KindInterface
	}
	return append(syms, Symbol{Name: string(toks[0].text), Kind: kind, Line: int32(toks[0].line)})
}

// goValueSpec appends the exported names a var or const spec declares.
func goValueSpec(toks []goTok, syms []Symbol) []Symbol {
	for i := 0; i < len(toks) && toks[i].kind == 'i'; i += 2 {
		if name := string(toks[i].text); name != "_" && token.IsExported(name) {
			syms = append(syms, Symbol{Name: name, Kind: KindVar, Line: int32(toks[i].line)})
		}
		if i+1 >= len(toks) || toks[i+1].kind != ',' {
			break
		}
	}
	return syms
}

// typeParams tells "type T[P any] ..." (a parameter name followed by a
// constraint or another name) from an array type "type T [N]int".
func typeParams(a, b goTok) bool {
	if a.kind != 'i' {
		return false
	}
	switch b.kind {
	case 'i', ',', '~', '[':
		return true
	}
	return false
}
