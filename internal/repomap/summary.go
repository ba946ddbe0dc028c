package repomap

import (
	"fmt"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/plural"
)

// Discovery is a finding handed to the planning pipeline.
type Discovery struct {
	// Type is tech_stack, test_command, convention or code_pattern.
	Type string
	Data map[string]any
}

// LanguageCount is a language and how many kept files it has.
type LanguageCount struct {
	Language string
	Files    int
}

// TopLanguages returns languages by file count, code before docs and data.
func (m *Map) TopLanguages() []LanguageCount {
	var out []LanguageCount
	for l, n := range m.Languages {
		out = append(out, LanguageCount{l, n})
	}
	sort.Slice(out, func(i, j int) bool {
		ci, cj := IsCode(out[i].Language), IsCode(out[j].Language)
		if ci != cj {
			return ci
		}
		if out[i].Files != out[j].Files {
			return out[i].Files > out[j].Files
		}
		return out[i].Language < out[j].Language
	})
	return out
}

// CommandsOf returns the detected commands of one kind, best first.
func (m *Map) CommandsOf(kind string) []Command {
	var out []Command
	for _, c := range m.Commands {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

// TestCommand returns the best single test command, or "" when none was found.
func (m *Map) TestCommand() string {
	if cs := m.CommandsOf("test"); len(cs) > 0 {
		return cs[0].Command
	}
	return ""
}

// Summary is a readable multi-line description for people and prompts.
func (m *Map) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Repository map of %s: %s", m.Root, plural.Count(len(m.Entries), "file", "files"))
	if total := sumSkipped(m.Skipped); total > 0 {
		fmt.Fprintf(&b, " (%s)", skippedSummary(m.Skipped))
	}
	b.WriteString("\n")
	var langs []string
	for _, lc := range m.TopLanguages() {
		if IsCode(lc.Language) {
			langs = append(langs, fmt.Sprintf("%s %d", lc.Language, lc.Files))
		}
	}
	section(&b, "Languages", []string{strings.Join(langs, ", ")})
	section(&b, "Manifests", m.Manifests)
	for _, kind := range []string{"build", "lint", "test"} {
		var lines []string
		for _, c := range m.CommandsOf(kind) {
			lines = append(lines, fmt.Sprintf("%s  (from %s)", c.Command, c.Source))
		}
		section(&b, strings.ToUpper(kind[:1])+kind[1:]+" commands", lines)
	}
	section(&b, "Layout", m.layout())
	section(&b, "Entry points", m.EntryPoints)
	section(&b, "Test layout", m.TestLayout)
	section(&b, "CI", m.CIFiles)
	section(&b, "Conventions", m.Conventions)
	return b.String()
}

func sumSkipped(s map[string]int) int {
	n := 0
	for _, v := range s {
		n += v
	}
	return n
}

func section(b *strings.Builder, title string, lines []string) {
	var kept []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			kept = append(kept, l)
		}
	}
	if len(kept) == 0 {
		return
	}
	const maxLines = 12
	fmt.Fprintf(b, "%s:\n", title)
	for i, l := range kept {
		if i == maxLines {
			fmt.Fprintf(b, "  … and %d more\n", len(kept)-maxLines)
			break
		}
		fmt.Fprintf(b, "  %s\n", l)
	}
}

// layout lists the top-level directories with their file counts and main
// language, which is what a newcomer reads first.
func (m *Map) layout() []string {
	type dir struct {
		n     int
		langs map[string]int
	}
	dirs := map[string]*dir{}
	rootFiles := 0
	for _, f := range m.Entries {
		top, _, ok := strings.Cut(f.Path, "/")
		if !ok {
			rootFiles++
			continue
		}
		d := dirs[top]
		if d == nil {
			d = &dir{langs: map[string]int{}}
			dirs[top] = d
		}
		d.n++
		if IsCode(f.Lang) {
			d.langs[f.Lang]++
		}
	}
	names := sortedKeys(dirs)
	sort.SliceStable(names, func(i, j int) bool { return dirs[names[i]].n > dirs[names[j]].n })
	var out []string
	for _, n := range names {
		d := dirs[n]
		line := fmt.Sprintf("%s/ %s", n, plural.Count(d.n, "file", "files"))
		best, bestN := "", 0
		for _, l := range sortedKeys(d.langs) {
			if d.langs[l] > bestN {
				best, bestN = l, d.langs[l]
			}
		}
		if best != "" {
			line += ", mostly " + best
		}
		out = append(out, line)
	}
	if rootFiles > 0 {
		out = append(out, fmt.Sprintf("./ %s at the top level", plural.Count(rootFiles, "file", "files")))
	}
	return out
}

// Discoveries turns the map into findings for the planning pipeline.
func (m *Map) Discoveries() []Discovery {
	var out []Discovery
	manifestsByEco := map[string][]string{}
	for _, p := range m.Manifests {
		base := p[strings.LastIndexByte(p, '/')+1:]
		eco := manifestNames[base]
		manifestsByEco[eco] = append(manifestsByEco[eco], p)
	}
	for _, lc := range m.TopLanguages() {
		if !IsCode(lc.Language) {
			continue
		}
		data := map[string]any{"language": lc.Language, "files": lc.Files}
		if ms := manifestsByEco[lc.Language]; len(ms) > 0 {
			data["manifests"] = ms
		}
		out = append(out, Discovery{Type: "tech_stack", Data: data})
	}
	for _, c := range m.CommandsOf("test") {
		out = append(out, Discovery{Type: "test_command", Data: map[string]any{"command": c.Command, "source": c.Source}})
	}
	for _, c := range m.Commands {
		if c.Kind == "test" {
			continue
		}
		out = append(out, Discovery{Type: "convention", Data: map[string]any{
			"convention": fmt.Sprintf("%s with `%s`", c.Kind, c.Command), "command": c.Command, "kind": c.Kind, "source": c.Source}})
	}
	for _, t := range m.TestLayout {
		out = append(out, Discovery{Type: "convention", Data: map[string]any{"convention": "tests: " + t, "kind": "test_layout"}})
	}
	for _, c := range m.Conventions {
		out = append(out, Discovery{Type: "convention", Data: map[string]any{"convention": c}})
	}
	for _, e := range m.EntryPoints {
		out = append(out, Discovery{Type: "code_pattern", Data: map[string]any{"pattern": "entry point", "path": e}})
	}
	if len(m.CIFiles) > 0 {
		out = append(out, Discovery{Type: "code_pattern", Data: map[string]any{"pattern": "continuous integration", "files": m.CIFiles}})
	}
	return out
}
