package locate

import (
	"cmp"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"
)

// mentions are the names an issue quotes explicitly.
type mentions struct {
	// paths are file paths as written, in order of appearance.
	paths []pathMention
	// shortFrames are the files of the frames of Python's short traceback
	// formats (IPython's and pytest's), outermost first, normalised as
	// paths are. Their paths are in paths too, as quoted paths: only the
	// innermost is read from here.
	shortFrames []string
	// dotted are dotted names such as pkg.module.Class.method.
	dotted []string
	// idents maps code-looking identifiers to how strongly they look like
	// code (backticked > snake/camel case > capitalised word).
	idents map[string]float64
}

type pathMention struct {
	path string
	// frame is the traceback frame number (1 = outermost), 0 when the
	// path was not in a traceback.
	frame int
}

var (
	urlRe       = regexp.MustCompile(`https?://\S+`)
	tracebackRe = regexp.MustCompile(`File "([^"\n]+)", line \d+(?:, in ([A-Za-z_]\w*))?`)
	pathRe      = regexp.MustCompile(`(?:^|[^\w.-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:py|pyi|pyx|go|js|jsx|mjs|ts|tsx|java|kt|rs|rb|php|c|h|cc|cpp|hpp|cs|scala|swift|sh|sql|ya?ml|toml|json|cfg|ini|md|rst|txt))(?::\d+)?\b`)
	dottedRe    = regexp.MustCompile(`\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b`)
	identRe     = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	backtickRe  = regexp.MustCompile("`([^`\n]+)`")
	fenceRe     = regexp.MustCompile("(?s)```.*?```")
	// envLineRe is a "name: value" line as in version and environment
	// reports (python: 3.8.1, OS: Linux, - Sphinx version: 3.1).
	// innerFirstFrameRe is a stack frame line of a language that prints
	// the innermost frame first, capturing its file: Go (a tab, then
	// /src/pkg/file.go:12 +0x1d), JavaScript and TypeScript (at f
	// (src/x.ts:12:5), at webpack:///./src/x.js:3:1) and Rust backtraces
	// (at ./src/lib.rs:12:5).
	innerFirstFrameRe = regexp.MustCompile(`(?m)^[ \t]*(?:at[ \t]+(?:[^\s(]+[ \t]+\()?)?(?:[a-z]+:/+)?([\w.@~+/\\-]*\.(?:go|js|jsx|mjs|cjs|ts|tsx|rs)):\d+(?::\d+)?\)?(?:[ \t]+\+0x[0-9a-f]+)?[ \t]*\r?$`)
	// javaFrameRe is a JVM stack frame, at pkg.Class.method(Class.java:12),
	// capturing the class's dotted name and its file.
	javaFrameRe = regexp.MustCompile(`(?m)^[ \t]*at[ \t]+((?:[\w$]+\.)+)[\w$<>]+\(([\w$]+\.(?:java|kt|scala)):\d+\)`)
	// shortFrameRe is a frame line of the traceback formats that print
	// the outermost frame first without Python's File "…", line n: IPython
	// 8 (File ~/env/pkg/mod.py:72, in f(x)), IPython before 8
	// (~/env/pkg/mod.py in f(self, x)) and pytest (src/pkg/mod.py:34: in f).
	shortFrameRe = regexp.MustCompile(`(?m)^[ \t]*(?:File[ \t]+([^\s",]+\.py):\d+,[ \t]+in[ \t]|([^\s",]+\.py)[ \t]+in[ \t]+[\w<>.]+\(|([^\s",]+\.py):\d+:[ \t]+in[ \t]+[\w<>.]+[ \t]*\r?$)`)
	envLineRe    = regexp.MustCompile(`^\s*(?:[-*]\s+)?[A-Za-z][\w .()/-]{0,40}:\s*\S.{0,80}$`)
)

// envRunMin is how many "name: value" lines in a row make a block an
// environment report.
const envRunMin = 4

// dropEnvironment removes environment and version reports (runs of short
// "name: value" lines, as show_versions() or an issue template's
// "Environment" section print them) from an issue text. They name the
// same installed packages in every issue, so their words point at whatever
// file prints versions rather than at the fault.
func dropEnvironment(q string) string {
	lines := strings.Split(q, "\n")
	keep := make([]bool, len(lines))
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && envLineRe.MatchString(lines[j]) && !frameLine(lines[j]) {
			j++
		}
		if j-i < envRunMin {
			for k := i; k < j; k++ {
				keep[k] = true
			}
			if j == i {
				keep[i] = true
				j++
			}
		}
		i = j
	}
	var b strings.Builder
	for i, l := range lines {
		if keep[i] {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// frameLine says whether a line is a stack frame (Python's File "…",
// a JavaScript, TypeScript, Rust or JVM frame), which reads as a
// "name: value" line but is the trace an environment report is not.
func frameLine(l string) bool {
	return strings.Contains(l, "File \"") || innerFirstFrameRe.MatchString(l) || javaFrameRe.MatchString(l)
}

var fileExts = map[string]bool{
	"py": true, "pyi": true, "go": true, "js": true, "ts": true, "tsx": true, "jsx": true, "java": true,
	"rs": true, "rb": true, "php": true, "c": true, "h": true, "cpp": true, "md": true, "rst": true,
	"txt": true, "json": true, "yml": true, "yaml": true, "toml": true, "cfg": true, "ini": true, "sh": true,
	"html": true, "com": true, "org": true, "io": true, "net": true,
}

func extractMentions(q string) mentions {
	ms := mentions{}
	var frameFuncs []string
	ms.paths, frameFuncs = mentionedPaths(q)
	ms.shortFrames = shortFrames(q)
	// Names below come from prose and code, not from links.
	text := urlRe.ReplaceAllString(q, " ")
	ms.dotted = dottedMentions(text)
	ms.idents = identMentions(text, frameFuncs)
	return ms
}

// mentionedPaths returns the file paths q quotes, traceback frames first,
// and the functions those frames are in.
func mentionedPaths(q string) (paths []pathMention, frameFuncs []string) {
	seen := map[string]bool{}
	frame := 0
	for _, m := range tracebackRe.FindAllStringSubmatch(q, -1) {
		frame++
		p := normPath(m[1])
		paths = append(paths, pathMention{path: p, frame: frame})
		seen[p] = true
		if m[2] != "" && m[2] != "module" {
			frameFuncs = append(frameFuncs, m[2])
		}
	}
	// Frames of the languages that print the innermost first are
	// numbered after Python's, from the last printed (outermost) up.
	inner := innerFirstFrames(q)
	for i, p := range inner {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, pathMention{path: p, frame: frame + len(inner) - i})
		}
		// A JVM frame also prints its file's bare name, the same file.
		seen[path.Base(p)] = true
	}
	for _, m := range pathRe.FindAllStringSubmatch(q, -1) {
		p := normPath(m[1])
		if seen[p] || strings.Count(p, ".") == len(p) {
			continue
		}
		seen[p] = true
		paths = append(paths, pathMention{path: p})
	}
	return paths, frameFuncs
}

// shortFrames returns the files of q's frames in Python's short traceback
// formats (shortFrameRe), outermost first as printed.
func shortFrames(q string) []string {
	var out []string
	for _, m := range shortFrameRe.FindAllStringSubmatch(q, -1) {
		for _, p := range m[1:] {
			if p != "" {
				out = append(out, normPath(p))
			}
		}
	}
	return out
}

// innerFirstFrames returns the files of the stack frames in q of the
// languages that print the innermost frame first (Go, JavaScript and
// TypeScript, Rust, the JVM's), in the order printed. A JVM frame names
// its class's package, which is the file's directory: at
// com.acme.audit.EventClient.replay(EventClient.java:21) is in
// com/acme/audit/EventClient.java.
func innerFirstFrames(q string) []string {
	type hit struct {
		at   int
		path string
	}
	var hits []hit
	for _, m := range innerFirstFrameRe.FindAllStringSubmatchIndex(q, -1) {
		hits = append(hits, hit{m[0], normPath(q[m[2]:m[3]])})
	}
	for _, m := range javaFrameRe.FindAllStringSubmatchIndex(q, -1) {
		class := strings.Split(strings.TrimSuffix(q[m[2]:m[3]], "."), ".")
		dir := strings.Join(class[:len(class)-1], "/")
		p := q[m[4]:m[5]]
		if dir != "" {
			p = dir + "/" + p
		}
		hits = append(hits, hit{m[0], p})
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(a.at, b.at) })
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.path)
	}
	return out
}

// dottedMentions returns the distinct dotted names in text that are not
// file names, abbreviations or version numbers.
func dottedMentions(text string) []string {
	var dotted []string
	dseen := map[string]bool{}
	for _, d := range dottedRe.FindAllString(text, -1) {
		parts := strings.Split(d, ".")
		if fileExts[parts[len(parts)-1]] || dseen[d] {
			continue
		}
		// "e.g", "i.e" and version-ish fragments carry nothing.
		if allShort(parts) {
			continue
		}
		dseen[d] = true
		dotted = append(dotted, d)
	}
	return dotted
}

// allShort says whether every part is at most two bytes long.
func allShort(parts []string) bool {
	for _, p := range parts {
		if len(p) > 2 {
			return false
		}
	}
	return true
}

// identMentions maps the code-looking identifiers of text, and the
// functions of traceback frames, to how strongly they look like code.
func identMentions(text string, frameFuncs []string) map[string]float64 {
	idents := map[string]float64{}
	counts := map[string]int{}
	bump := func(id string, strength float64) {
		if len(id) < 3 || strings.Trim(id, "_") == "" {
			return
		}
		counts[id]++
		if strength > idents[id] {
			idents[id] = strength
		}
	}
	// The functions a traceback passes through are code names as sure as
	// backticked ones.
	for _, f := range frameFuncs {
		bump(f, 0.9)
	}
	for _, m := range backtickRe.FindAllStringSubmatch(text, -1) {
		for _, id := range identRe.FindAllString(m[1], -1) {
			bump(id, 1.0)
		}
	}
	for _, block := range fenceRe.FindAllString(text, -1) {
		for _, id := range identRe.FindAllString(block, -1) {
			if s := identShape(id); s > 0 {
				bump(id, math.Max(s, 0.6))
			} else if len(id) > 3 {
				bump(id, 0.5)
			}
		}
	}
	for _, loc := range identRe.FindAllStringIndex(text, -1) {
		id := text[loc[0]:loc[1]]
		s := identShape(id)
		if loc[1] < len(text) && text[loc[1]] == '(' {
			s = math.Max(s, 0.8)
		}
		if s > 0 {
			bump(id, s)
		}
	}
	for id, s := range idents {
		// Repetition is evidence, with diminishing returns.
		idents[id] = s * (1 + 0.25*math.Log(float64(counts[id])))
	}
	return idents
}

// identShape says how much a word looks like a code identifier.
func identShape(id string) float64 {
	c := identCases(id)
	switch {
	case c.underscore && (c.lower || c.upper):
		return 0.8
	case c.hump:
		return 0.8
	case c.upper && !c.lower && len(id) >= 3:
		// ALLCAPS words are mostly shouting or acronyms in prose.
		return 0.2
	case c.upper && id[0] >= 'A' && id[0] <= 'Z':
		return 0.4
	}
	return 0
}

// letterCases is what identCases finds in a word.
type letterCases struct {
	// lower and upper: an ASCII letter of that case; underscore: one
	// inside the word; hump: a capital after a lower-case letter.
	lower, upper, underscore, hump bool
}

// identCases scans id for the letter cases and separators identShape
// weighs.
func identCases(id string) letterCases {
	var lc letterCases
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z':
			lc.lower = true
		case c >= 'A' && c <= 'Z':
			lc.upper = true
			if i > 0 && id[i-1] >= 'a' && id[i-1] <= 'z' {
				lc.hump = true
			}
		case c == '_':
			if i > 0 && i < len(id)-1 {
				lc.underscore = true
			}
		}
	}
	return lc
}

// normPath trims what precedes a repository path in quoted text.
func normPath(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	p = strings.TrimPrefix(p, "./")
	p = strings.TrimLeft(p, "/")
	// site-packages/pkg/mod.py -> pkg/mod.py
	for _, marker := range []string{"site-packages/", "dist-packages/"} {
		if i := strings.LastIndex(p, marker); i >= 0 {
			p = p[i+len(marker):]
		}
	}
	return p
}
