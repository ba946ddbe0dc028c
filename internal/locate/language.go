package locate

import (
	"maps"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/planexhq/planex/internal/repomap"
)

// An issue is fixed in the language its evidence points at: the frames of
// its traceback, the extensions of the paths it quotes, the language of its
// code blocks, the way its names are spelled, and the language of the
// files that define those names. A repository that mixes languages (a Go
// service with a Python SDK and a TypeScript frontend) is no reason to hold
// back any of them; an issue that shows a Python traceback is.

// langFamily folds languages that share code and stack traces into one:
// a TypeScript project's traces name its compiled .js files, a C++
// project's headers end in .h.
func langFamily(lang string) string {
	switch lang {
	case repomap.LangTypeScript:
		return repomap.LangJavaScript
	case "C++", "Objective-C":
		return "C"
	case "Kotlin":
		return repomap.LangJava
	}
	return lang
}

// fileFamily is the language family of a repository path, "" for files
// that are not code.
func fileFamily(p string) string {
	l := repomap.DetectLanguage(p)
	if !repomap.IsCode(l) {
		return ""
	}
	return langFamily(l)
}

// familyMemo is fileFamily for a run of paths, remembering the last
// extension's family: the index lists paths in order, so the files of a
// directory mostly share one extension, and a walk of every file then
// looks up each run's family once instead of each file's.
type familyMemo struct {
	ext, family string
	set         bool
}

// of is fileFamily(p). A name whose language DetectLanguage reads from
// more than its extension (a Makefile, a Dockerfile, a name without an
// extension) is looked up on its own and not remembered.
func (m *familyMemo) of(p string) string {
	base := path.Base(p)
	ext := path.Ext(base)
	if ext == "" || strings.HasPrefix(base, "Dockerfile") {
		return fileFamily(p)
	}
	if !m.set || ext != m.ext {
		m.ext, m.family, m.set = ext, fileFamily(p), true
	}
	return m.family
}

// langVotes is how strongly an issue points at each language family.
type langVotes map[string]float64

func (v langVotes) add(family string, w float64) {
	if family != "" && w > 0 {
		v[family] += w
	}
}

// Weights of each kind of language evidence: an error format or a code
// block's declared language is near-certain; a quoted path is good
// evidence, one per path; a name's spelling says little on its own.
const (
	voteFormat   = 2.0
	voteFence    = 1.5
	votePath     = 1.0
	voteStyle    = 0.2
	voteStyleMax = 1.0
	// voteDefined is what one name the issue uses adds, shared among the
	// families of the files that define it (times how code-like the name
	// looks): a name only Python files define is as good as a quoted path.
	voteDefined = 1.0
	// votePrior is the weight of the repository's own mix of languages,
	// spread by each family's share of its code: a weak prior, which sets
	// the direction when the issue has no evidence.
	votePrior = 0.5
	// priorHold is the hold-back's strength with no evidence from the
	// issue; voteScale is the evidence that takes it most of the way to
	// full strength (1-(1-priorHold)/e).
	priorHold = 0.2
	voteScale = 1.0
)

// formatCue is a line shape that one language's runtime or toolchain
// prints.
type formatCue struct {
	re     *regexp.Regexp
	family string
}

var formatCues = []formatCue{
	{regexp.MustCompile(`Traceback \(most recent call last\)`), repomap.LangPython},
	{regexp.MustCompile(`(?m)^\s*>>> \S`), repomap.LangPython},
	{regexp.MustCompile(`(?m)^\s*In \[\d+\]: \S`), repomap.LangPython},
	// Only exception names no other common runtime uses (Ruby has
	// NameError, KeyError and IndexError too).
	{regexp.MustCompile(`\b(?:AttributeError|ModuleNotFoundError|ImportError|NoneType)\b`), repomap.LangPython},
	{regexp.MustCompile(`(?m)^panic: |\bgoroutine \d+ \[|^fatal error: all goroutines`), repomap.LangGo},
	{regexp.MustCompile(`(?m)^\s+at (?:async )?[\w$.<>\[\] ]+ \(.*\.(?:[cm]?js|jsx|tsx?):\d+:\d+\)|Cannot read propert(?:y|ies) of (?:undefined|null)|\bis not a function\b|\bUncaught \w*Error\b`), repomap.LangJavaScript},
	{regexp.MustCompile(`(?m)^\s+at [\w$.]+\([\w$]+\.(?:java|kt):\d+\)|Exception in thread "|\bjava\.lang\.\w+`), repomap.LangJava},
	{regexp.MustCompile(`thread '[^'\n]*' panicked at|\berror\[E\d{4}\]|RUST_BACKTRACE`), repomap.LangRust},
}

// fenceLang names the language of a fenced block's info string.
var fenceLang = map[string]string{
	"python": repomap.LangPython, "py": repomap.LangPython, "python3": repomap.LangPython, "pycon": repomap.LangPython,
	"pytb": repomap.LangPython, "ipython": repomap.LangPython, "ipython3": repomap.LangPython,
	"go": repomap.LangGo, "golang": repomap.LangGo,
	"js": repomap.LangJavaScript, "javascript": repomap.LangJavaScript, "jsx": repomap.LangJavaScript,
	"ts": repomap.LangJavaScript, "typescript": repomap.LangJavaScript, "tsx": repomap.LangJavaScript,
	"node": repomap.LangJavaScript,
	"java": repomap.LangJava, "kotlin": repomap.LangJava, "kt": repomap.LangJava,
	"rust": repomap.LangRust, "rs": repomap.LangRust,
	"c": "C", "cpp": "C", "c++": "C", "h": "C",
	"ruby": "Ruby", "rb": "Ruby", "php": "PHP", "csharp": "C#", "cs": "C#", "c#": "C#",
	"swift": "Swift", "scala": "Scala",
}

var fenceInfoRe = regexp.MustCompile("(?m)^\\s*```+\\s*([\\w#+-]+)")

// nameStyle is a convention for spelling function and method names.
type nameStyle int

const (
	styleNone       nameStyle = iota // fits every language
	styleSnake                       // lower_case_with_underscores
	styleCamel                       // lowerCamelCase
	stylePascalCall                  // pkg.Exported( and value.Method(
)

// styleFamilies are the language families whose conventions spell a
// function or method each way.
var styleFamilies = [...][]string{
	styleSnake:      {repomap.LangPython, repomap.LangRust, "Ruby", "C"},
	styleCamel:      {repomap.LangJavaScript, repomap.LangJava, repomap.LangGo, "Swift"},
	stylePascalCall: {repomap.LangGo, "C#"},
}

// calledRe finds a name right before "(", with what precedes it.
var calledRe = regexp.MustCompile(`(\.)?\b([A-Za-z_][A-Za-z0-9_]*)\(`)

// issueLanguageVotes gathers the language evidence of the issue's text
// alone: error formats, code blocks' declared languages, quoted paths'
// extensions and how called names are spelled.
func issueLanguageVotes(q string, ms mentions) langVotes {
	v := langVotes{}
	for _, c := range formatCues {
		if c.re.MatchString(q) {
			v.add(c.family, voteFormat)
		}
	}
	for _, m := range fenceInfoRe.FindAllStringSubmatch(q, -1) {
		v.add(fenceLang[strings.ToLower(m[1])], voteFence)
	}
	for _, pm := range ms.paths {
		v.add(fileFamily(pm.path), votePath)
	}
	var styles [len(styleFamilies)]float64
	for _, m := range calledRe.FindAllStringSubmatch(urlRe.ReplaceAllString(q, " "), -1) {
		if s := callStyle(m[2], m[1] != ""); s != styleNone {
			styles[s] = math.Min(voteStyleMax, styles[s]+voteStyle)
		}
	}
	for s, w := range styles {
		fams := styleFamilies[s]
		for _, f := range fams {
			v.add(f, w/float64(len(fams)))
		}
	}
	return v
}

// callStyle names the spelling convention of a called name; a
// capitalised name counts as a method or package function only after a
// dot (alone it may be any language's class or constructor).
func callStyle(name string, afterDot bool) nameStyle {
	c := identCases(name)
	switch {
	case c.underscore && c.lower && !c.upper:
		return styleSnake
	case c.hump && name[0] >= 'a' && name[0] <= 'z' && !c.underscore:
		return styleCamel
	case afterDot && c.lower && !c.underscore && name[0] >= 'A' && name[0] <= 'Z':
		return stylePascalCall
	}
	return styleNone
}

// codeFamilies counts the repository's non-test code files per language
// family.
func (ix *Index) codeFamilies() map[string]int {
	counts := map[string]int{}
	var memo familyMemo
	// A run of files of one family is counted, then added once.
	run, n := "", 0
	for i := range ix.files {
		d := &ix.files[i]
		if !d.code() || d.test() || d.doc() {
			continue
		}
		f := memo.of(d.path)
		if f != run {
			if run != "" {
				counts[run] += n
			}
			run, n = f, 0
		}
		n++
	}
	if run != "" {
		counts[run] += n
	}
	return counts
}

// definedVotes adds, for each code-like name the issue uses, the
// families of the files that define it, shared by their counts: a name
// only Python files define says Python.
func (ix *Index) definedVotes(ms mentions, v langVotes) {
	names := map[string]float64{}
	for id, s := range ms.idents {
		if s >= 0.8 {
			names[id] = math.Min(s, 1)
		}
	}
	for _, d := range ms.dotted {
		for _, p := range strings.Split(d, ".") {
			if identShape(p) >= 0.4 && names[p] < 0.8 {
				names[p] = 0.8
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		counts := map[string]float64{}
		total := 0.0
		for _, d := range ix.definitions(name) {
			if f := fileFamily(ix.files[d.file].path); f != "" {
				counts[f]++
				total++
			}
		}
		for _, f := range slices.Sorted(maps.Keys(counts)) {
			v.add(f, voteDefined*names[name]*counts[f]/total)
		}
	}
}

// langHoldBack is, per language family of the repository, how far the
// issue's evidence points away from it: 0 for the family it points at
// most, up to 1 for one it does not point at, scaled by how much evidence
// there is (priorHold with none). Evidence for families the repository
// has no code in is ignored, and the repository's own mix counts as a
// weak prior.
func (ix *Index) langHoldBack(query string, ms mentions) (holdBack map[string]float64, votes langVotes) {
	counts := ix.codeFamilies()
	total := 0
	for _, n := range counts {
		total += n
	}
	votes = langVotes{}
	if total == 0 {
		return map[string]float64{}, votes
	}
	issue := issueLanguageVotes(query, ms)
	ix.definedVotes(ms, issue)
	evidence, best := 0.0, 0.0
	// In a fixed order: a float sum in map order differs in its last
	// bits from run to run, and ties between files could flip with it.
	for _, f := range slices.Sorted(maps.Keys(counts)) {
		n := counts[f]
		evidence += issue[f]
		votes[f] = issue[f] + votePrior*float64(n)/float64(total)
		best = math.Max(best, votes[f])
	}
	strength := 1 - (1-priorHold)*math.Exp(-evidence/voteScale)
	holdBack = make(map[string]float64, len(counts))
	for f := range counts {
		holdBack[f] = strength * (1 - votes[f]/best)
	}
	return holdBack, votes
}

// leading is the family the votes point at most ("" for none or a tie).
func (v langVotes) leading() string {
	best, bestV, tie := "", 0.0, false
	for f, x := range v {
		switch {
		case x > bestV:
			best, bestV, tie = f, x, false
		case x == bestV:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}
