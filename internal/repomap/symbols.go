package repomap

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Symbol is a definition found in a file.
type Symbol struct {
	Name string
	// Parent is the enclosing type or class of a method, if known.
	Parent string `json:",omitempty"`
	// Line is the 1-based line the symbol is declared on.
	Line int32
	// Kind is one of func, method, type, class, interface, var, module.
	// A byte and a 32-bit line keep a symbol at 40 bytes (a large map
	// holds over a million).
	Kind SymbolKind
}

// SymbolKind is what a symbol declares.
type SymbolKind uint8

// The kinds of symbol; their order is the one locate's index file stores.
const (
	KindNone SymbolKind = iota
	KindClass
	KindType
	KindInterface
	KindFunc
	KindMethod
	KindVar
	KindModule
)

var kindNames = [...]string{"", "class", "type", "interface", "func", "method", "var", "module"}

// String is the kind's name ("" for KindNone or an unknown kind).
func (k SymbolKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return ""
}

// MarshalText writes the kind's name, so JSON and gob show "func", not 4.
func (k SymbolKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name; an unknown one is an error.
func (k *SymbolKind) UnmarshalText(b []byte) error {
	for i, n := range kindNames {
		if n == string(b) {
			*k = SymbolKind(i)
			return nil
		}
	}
	return fmt.Errorf("unknown symbol kind %q", b)
}

// parsed is what the per-language scanners extract from one file.
type parsed struct {
	symbols []Symbol
	imports []string
	pkg     string // Go package name
	isMain  bool   // Go main package, Python __main__ guard, Java main method
}

func parseFile(lang, p string, data []byte) parsed {
	var ps fileParser
	return ps.parse(lang, p, data)
}

// fileParser is one worker's reusable scratch for parsing files.
type fileParser struct {
	goToks []goTok
}

// parse is parseFile with the worker's scratch.
func (ps *fileParser) parse(lang, p string, data []byte) parsed {
	var out parsed
	switch lang {
	case LangGo:
		out, ps.goToks = parseGoBuf(data, ps.goToks)
	case LangPython:
		out = parsePython(data)
	case LangJavaScript, LangTypeScript:
		out = parseJS(data)
	case LangJava:
		out = parseJava(data)
	case LangRust:
		out = parseRust(data)
	}
	// Names and import paths are cut out of the raw bytes: one cut inside
	// a multi-byte character, or a Go identifier of bytes that are not
	// UTF-8 (both found by FuzzParseFile), must not carry invalid UTF-8
	// into the map and its JSON cache.
	for i, imp := range out.imports {
		out.imports[i] = validUTF8(imp)
	}
	for i := range out.symbols {
		out.symbols[i].Name, out.symbols[i].Parent = validUTF8(out.symbols[i].Name), validUTF8(out.symbols[i].Parent)
	}
	return out
}

// eachLine calls fn with each line (without the newline) and its 1-based number.
func eachLine(data []byte, fn func(n int, line []byte)) {
	n := 0
	for line := range bytes.Lines(data) {
		n++
		fn(n, bytes.TrimRight(line, "\r\n"))
	}
}

var (
	pyAssign    = regexp.MustCompile(`^([A-Za-z_]\w*)\s*(?::[^=]+)?=[^=]`)
	pyImport    = regexp.MustCompile(`^\s*import\s+(.+)`)
	pyMainGuard = regexp.MustCompile(`^if\s+__name__\s*==\s*["']__main__["']`)
)

// pyParser holds parsePython's state between lines.
type pyParser struct {
	out parsed
	// classes tracks the indentation of enclosing classes, so defs below a
	// class are recorded as its methods.
	classes     []pyClassOpen
	inFromParen bool
	fromMod     string
}

type pyClassOpen struct {
	indent int
	name   string
}

func parsePython(data []byte) parsed {
	var p pyParser
	eachLine(data, p.line)
	return p.out
}

// line reads line n.
func (p *pyParser) line(n int, line []byte) {
	if p.inFromParen {
		p.fromContinuation(line)
		return
	}
	trimmed := bytes.TrimLeft(line, " \t")
	if len(trimmed) == 0 || trimmed[0] == '#' {
		return
	}
	indent := len(line) - len(trimmed)
	for len(p.classes) > 0 && indent <= p.classes[len(p.classes)-1].indent {
		p.classes = p.classes[:len(p.classes)-1]
	}
	if p.statement(n, line, trimmed, indent) {
		return
	}
	if indent == 0 && bytes.IndexByte(line, '=') > 0 {
		if m := pyAssign.FindSubmatch(line); m != nil {
			p.out.symbols = append(p.out.symbols, Symbol{Name: string(m[1]), Kind: KindVar, Line: int32(n)})
		}
	}
}

// fromContinuation reads a continuation of "from x import (a, b," – names
// only.
func (p *pyParser) fromContinuation(line []byte) {
	s := string(line)
	end := strings.Contains(s, ")")
	s = strings.SplitN(s, ")", 2)[0]
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(strings.SplitN(strings.TrimSpace(name), " ", 2)[0])
		if name != "" && !strings.HasPrefix(name, "#") {
			p.out.imports = append(p.out.imports, p.fromMod+":"+name)
		}
	}
	p.inFromParen = !end
}

// statement records a def, class, import, from or __main__ guard on line
// n, reporting whether it found one.
func (p *pyParser) statement(n int, line, trimmed []byte, indent int) bool {
	switch trimmed[0] {
	// Cheap prefix tests keep the regular expressions off most lines.
	case 'd', 'a':
		if bytes.HasPrefix(trimmed, []byte("def")) || bytes.HasPrefix(trimmed, []byte("async")) {
			return p.def(n, line)
		}
	case 'c':
		if bytes.HasPrefix(trimmed, []byte("class")) {
			return p.class(n, line, indent)
		}
	case 'i':
		if bytes.HasPrefix(trimmed, []byte("import ")) && p.importLine(line) {
			return true
		}
		if indent == 0 && bytes.HasPrefix(trimmed, []byte("if")) && pyMainGuard.Match(line) {
			p.out.isMain = true
			return true
		}
	case 'f':
		if bytes.HasPrefix(trimmed, []byte("from")) {
			return p.fromLine(line, trimmed)
		}
	}
	return false
}

func (p *pyParser) def(n int, line []byte) bool {
	name := pyDeclName(line, "def", true)
	if name == nil {
		return false
	}
	s := Symbol{Name: string(name), Kind: KindFunc, Line: int32(n)}
	if len(p.classes) > 0 {
		s.Kind, s.Parent = KindMethod, p.classes[len(p.classes)-1].name
	}
	p.out.symbols = append(p.out.symbols, s)
	return true
}

func (p *pyParser) class(n int, line []byte, indent int) bool {
	name := pyDeclName(line, "class", false)
	if name == nil {
		return false
	}
	s := Symbol{Name: string(name), Kind: KindClass, Line: int32(n)}
	if len(p.classes) > 0 {
		s.Parent = p.classes[len(p.classes)-1].name
	}
	p.out.symbols = append(p.out.symbols, s)
	p.classes = append(p.classes, pyClassOpen{indent, s.Name})
	return true
}

// pyDeclName returns the name a def or class line declares, or nil: what
// `^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)` (async only for def) captures,
// without a regular expression, since every def line of every Python file
// goes through it.
func pyDeclName(line []byte, keyword string, async bool) []byte {
	i := skipRESpace(line, 0)
	if async && bytes.HasPrefix(line[i:], []byte("async")) {
		// "async" must be followed by space and then the keyword.
		j := i + len("async")
		if k := skipRESpace(line, j); k > j {
			i = k
		}
	}
	if !bytes.HasPrefix(line[i:], []byte(keyword)) {
		return nil
	}
	j := i + len(keyword)
	k := skipRESpace(line, j)
	if k == j || k == len(line) || !(isUpper(line[k]) || isLower(line[k]) || line[k] == '_') {
		return nil
	}
	end := k + 1
	for end < len(line) && IsIdentByte(line[end]) {
		end++
	}
	return line[k:end]
}

// pyFromParts returns what `^\s*from\s+(\.*[\w.]*)\s+import\s+\(?\s*([^#]*)`
// captures in line (the module and the names up to a comment), without a
// regular expression: every from line of every Python file goes through
// it. The module is the longest run of word bytes and dots after the
// space (no shorter run is followed by the space the pattern needs next),
// or, when that fails, empty between two of the spaces ("from  import x").
func pyFromParts(line []byte) (mod, rest []byte, ok bool) {
	i := skipRESpace(line, 0)
	if !bytes.HasPrefix(line[i:], []byte("from")) {
		return nil, nil, false
	}
	j := i + len("from")
	k := skipRESpace(line, j)
	if k == j {
		return nil, nil, false
	}
	end := k
	for end < len(line) && (IsIdentByte(line[end]) || line[end] == '.') {
		end++
	}
	if rest, ok := pyImportNames(line, end); ok {
		return line[k:end], rest, true
	}
	if k-j >= 2 {
		if rest, ok := pyImportNames(line, k-1); ok {
			return line[k-1 : k-1], rest, true
		}
	}
	return nil, nil, false
}

// pyImportNames matches `\s+import\s+\(?\s*([^#]*)` at line[i:] and
// returns the group.
func pyImportNames(line []byte, i int) ([]byte, bool) {
	j := skipRESpace(line, i)
	if j == i || !bytes.HasPrefix(line[j:], []byte("import")) {
		return nil, false
	}
	j += len("import")
	k := skipRESpace(line, j)
	if k == j {
		return nil, false
	}
	if k < len(line) && line[k] == '(' {
		k = skipRESpace(line, k+1)
	}
	end := bytes.IndexByte(line[k:], '#')
	if end < 0 {
		return line[k:], true
	}
	return line[k : k+end], true
}

// skipRESpace skips what \s matches in a regular expression from line[i].
func skipRESpace(line []byte, i int) int {
	for i < len(line) {
		switch line[i] {
		case ' ', '\t', '\n', '\f', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func (p *pyParser) importLine(line []byte) bool {
	m := pyImport.FindSubmatch(line)
	if m == nil {
		return false
	}
	for _, part := range strings.Split(string(m[1]), ",") {
		f := strings.Fields(part)
		if len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			p.out.imports = append(p.out.imports, f[0])
		}
	}
	return true
}

func (p *pyParser) fromLine(line, trimmed []byte) bool {
	modBytes, restBytes, ok := pyFromParts(line)
	if !ok {
		return false
	}
	mod := string(modBytes)
	rest := string(restBytes)
	if strings.Contains(string(trimmed), "(") && !strings.Contains(rest, ")") {
		p.inFromParen, p.fromMod = true, mod
	}
	rest = strings.SplitN(rest, ")", 2)[0]
	for _, name := range strings.Split(rest, ",") {
		name = strings.TrimSpace(strings.SplitN(strings.TrimSpace(name), " ", 2)[0])
		if name != "" && name != "\\" {
			p.out.imports = append(p.out.imports, mod+":"+name)
		}
	}
	return true
}

var (
	jsFunc      = regexp.MustCompile(`^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)`)
	jsClass     = regexp.MustCompile(`^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)`)
	jsTSType    = regexp.MustCompile(`^\s*(?:export\s+)?(?:declare\s+)?(interface|type|enum)\s+([A-Za-z_$][\w$]*)`)
	jsConstFn   = regexp.MustCompile(`^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)`)
	jsMethod    = regexp.MustCompile(`^\s+(?:(?:public|private|protected|static|async|readonly|override|get|set)\s+)*([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\([^)]*\)\s*(?::\s*[^{]+)?\{\s*$`)
	jsImport    = regexp.MustCompile(`(?:^|\s)(?:import|export)\s+(?:[^'"]*?\s+from\s+)?['"]([^'"]+)['"]`)
	jsRequire   = regexp.MustCompile(`\brequire\(\s*['"]([^'"]+)['"]\s*\)`)
	jsKeywordFn = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true, "function": true, "return": true, "constructor": false}
)

func parseJS(data []byte) parsed {
	var out parsed
	eachLine(data, func(n int, line []byte) {
		if len(line) > 1000 {
			return
		}
		if m := jsFunc.FindSubmatch(line); m != nil {
			out.symbols = append(out.symbols, Symbol{Name: string(m[1]), Kind: KindFunc, Line: int32(n)})
		} else if m := jsClass.FindSubmatch(line); m != nil {
			out.symbols = append(out.symbols, Symbol{Name: string(m[1]), Kind: KindClass, Line: int32(n)})
		} else if m := jsTSType.FindSubmatch(line); m != nil {
			kind := KindType
			if string(m[1]) == "interface" {
				kind = KindInterface
			}
			out.symbols = append(out.symbols, Symbol{Name: string(m[2]), Kind: kind, Line: int32(n)})
		} else if m := jsConstFn.FindSubmatch(line); m != nil {
			out.symbols = append(out.symbols, Symbol{Name: string(m[1]), Kind: KindFunc, Line: int32(n)})
		} else if m := jsMethod.FindSubmatch(line); m != nil && !jsKeywordFn[string(m[1])] {
			out.symbols = append(out.symbols, Symbol{Name: string(m[1]), Kind: KindMethod, Line: int32(n)})
		}
		if bytes.Contains(line, []byte("import")) || bytes.Contains(line, []byte("export")) {
			for _, m := range jsImport.FindAllSubmatch(line, -1) {
				out.imports = append(out.imports, string(m[1]))
			}
		}
		if bytes.Contains(line, []byte("require(")) {
			for _, m := range jsRequire.FindAllSubmatch(line, -1) {
				out.imports = append(out.imports, string(m[1]))
			}
		}
	})
	return out
}

var (
	javaType   = regexp.MustCompile(`^\s*(?:(?:public|private|protected|static|final|abstract|sealed|non-sealed|strictfp)\s+)*(class|interface|enum|record|@interface)\s+([A-Za-z_]\w*)`)
	javaMethod = regexp.MustCompile(`^\s+(?:(?:public|private|protected|static|final|abstract|synchronized|native|default)\s+)+(?:<[^>]+>\s+)?[\w.<>\[\],? ]+?\s+([a-z_]\w*)\s*\(`)
	javaImport = regexp.MustCompile(`^\s*import\s+(?:static\s+)?([\w.]+(?:\.\*)?)\s*;`)
	javaMain   = regexp.MustCompile(`public\s+static\s+void\s+main\s*\(`)
)

func parseJava(data []byte) parsed {
	var out parsed
	var current string
	eachLine(data, func(n int, line []byte) {
		if m := javaImport.FindSubmatch(line); m != nil {
			out.imports = append(out.imports, string(m[1]))
		} else if m := javaType.FindSubmatch(line); m != nil {
			kind := KindClass
			if string(m[1]) == "interface" || string(m[1]) == "@interface" {
				kind = KindInterface
			}
			current = string(m[2])
			out.symbols = append(out.symbols, Symbol{Name: current, Kind: kind, Line: int32(n)})
		} else if m := javaMethod.FindSubmatch(line); m != nil {
			out.symbols = append(out.symbols, Symbol{Name: string(m[1]), Kind: KindMethod, Parent: current, Line: int32(n)})
		}
		if javaMain.Match(line) {
			out.isMain = true
		}
	})
	return out
}

var (
	rustFn   = regexp.MustCompile(`^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+([A-Za-z_]\w*)`)
	rustType = regexp.MustCompile(`^\s*(?:pub(?:\([^)]*\))?\s+)?(struct|enum|trait|type|union|mod)\s+([A-Za-z_]\w*)`)
	rustImpl = regexp.MustCompile(`^\s*impl(?:<[^>]*>)?\s+(?:[\w:<>, ]+\s+for\s+)?([A-Za-z_]\w*)`)
	rustUse  = regexp.MustCompile(`^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;{]+)`)
	rustMod  = regexp.MustCompile(`^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_]\w*)\s*;`)
)

func parseRust(data []byte) parsed {
	var out parsed
	var impl string
	eachLine(data, func(n int, line []byte) {
		if m := rustImpl.FindSubmatch(line); m != nil {
			impl = string(m[1])
			return
		}
		if len(line) > 0 && line[0] == '}' {
			impl = ""
		}
		if m := rustFn.FindSubmatch(line); m != nil {
			s := Symbol{Name: string(m[1]), Kind: KindFunc, Line: int32(n)}
			if impl != "" && len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
				s.Kind, s.Parent = KindMethod, impl
			}
			if s.Name == "main" {
				out.isMain = true
			}
			out.symbols = append(out.symbols, s)
		} else if m := rustMod.FindSubmatch(line); m != nil {
			out.imports = append(out.imports, "mod:"+string(m[1]))
		} else if m := rustType.FindSubmatch(line); m != nil {
			kind := KindType // struct, enum, union, type
			switch string(m[1]) {
			case "trait":
				kind = KindInterface
			case "mod":
				kind = KindModule
			}
			out.symbols = append(out.symbols, Symbol{Name: string(m[2]), Kind: kind, Line: int32(n)})
		} else if m := rustUse.FindSubmatch(line); m != nil {
			out.imports = append(out.imports, strings.TrimSpace(string(m[1])))
		}
	})
	return out
}

// validUTF8 makes extracted strings safe to encode whatever the file's
// encoding was.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
