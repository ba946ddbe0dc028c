// Package explore gives the pipeline its starting point from the
// repository map: a RepoContext for agents' prompts, and, with no model at
// all, exploration rows written from the map and the ranked files alone.
package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/locate"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/session"
)

// DefaultTopK is how many ranked files exploration starts from.
const DefaultTopK = 15

// Mapper builds RepoContexts from the repository map.
type Mapper struct {
	Options repomap.Options
	TopK    int
	Log     *slog.Logger
	// Memo, when set, keeps the last context Map built, for a checkout
	// nothing moves or edits while the process runs (the Action's own
	// clone of the repository: planex never checks anything out there,
	// and agents write only their tasks' worktrees): a job that plans and
	// then runs the plan maps the repository once.
	Memo *Memo
}

// Memo is the last RepoContext a Mapper built and what it was built
// for: the root and the query. A context for the same two is given
// again without mapping (the map's listing and history, and the ranking
// index, cost several gits and the CPU of reading every file), as it was
// before any agent of the job ran.
type Memo struct {
	mu  sync.Mutex
	key string
	rc  *engine.RepoContext
}

// Map implements engine.Mapper.
func (mp Mapper) Map(ctx context.Context, root, query string) (*engine.RepoContext, error) {
	key := root + "\x00" + query
	if rc := mp.Memo.get(key); rc != nil {
		return rc, nil
	}
	m, ranked, err := mp.Build(ctx, root, query)
	if err != nil {
		return nil, err
	}
	rc := Context(m, ranked)
	mp.Memo.put(key, rc)
	return rc, nil
}

// get returns a copy of the context kept for key, or nil.
func (mm *Memo) get(key string) *engine.RepoContext {
	if mm == nil {
		return nil
	}
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if mm.key != key || mm.rc == nil {
		return nil
	}
	return cloneContext(mm.rc)
}

// put keeps a copy of rc for key, in place of what was kept.
func (mm *Memo) put(key string, rc *engine.RepoContext) {
	if mm == nil {
		return
	}
	mm.mu.Lock()
	defer mm.mu.Unlock()
	mm.key, mm.rc = key, cloneContext(rc)
}

// cloneContext copies rc so that what a caller does with its copy leaves
// the memo's alone.
func cloneContext(rc *engine.RepoContext) *engine.RepoContext {
	c := *rc
	c.KeyFiles = slices.Clone(rc.KeyFiles)
	c.Discoveries = slices.Clone(rc.Discoveries)
	for i := range c.Discoveries {
		c.Discoveries[i].Data = slices.Clone(c.Discoveries[i].Data)
	}
	return &c
}

// Build maps the repository and ranks its files for query. An empty
// query gives a map with no ranking.
func (mp Mapper) Build(ctx context.Context, root, query string) (*repomap.Map, []locate.Ranked, error) {
	opts := mp.Options
	if opts.Logger == nil {
		opts.Logger = mp.Log
	}
	if strings.TrimSpace(query) == "" {
		m, err := repomap.Build(ctx, root, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("mapping the repository: %w", err)
		}
		return m, nil, nil
	}
	// locate builds the map with its ranking index, so the ranking has
	// the repository's history as well as its files.
	m, ix, err := locate.Build(ctx, root, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("mapping the repository: %w", err)
	}
	k := mp.TopK
	if k <= 0 {
		k = DefaultTopK
	}
	ranked, err := ix.Rank(query, k, locate.Options{Logger: mp.Log})
	if err != nil {
		return nil, nil, fmt.Errorf("ranking files: %w", err)
	}
	return m, ranked, nil
}

// Context turns a map and a ranking into what prompts start from.
func Context(m *repomap.Map, ranked []locate.Ranked) *engine.RepoContext {
	rc := &engine.RepoContext{Summary: m.Summary(), TestCommand: m.TestCommand()}
	for _, r := range ranked {
		rc.KeyFiles = append(rc.KeyFiles, r.Path)
	}
	for _, d := range m.Discoveries() {
		data, err := json.Marshal(d.Data)
		if err != nil {
			continue
		}
		rc.Discoveries = append(rc.Discoveries, session.Discovery{Type: d.Type, Data: data})
	}
	return rc
}

// angleKind groups angle names by what the map can say about them.
func angleKind(angle string) string {
	switch angle {
	case "testing", "edge-cases", "validation":
		return "tests"
	case "dependencies", "data-access", "dataflow", "modularity":
		return "deps"
	case "integration-points", "auth-patterns", "state-management", "caching":
		return "callers"
	}
	return "files"
}

// Rows writes exploration rows from the map alone: each angle's findings
// are facts the map holds about the ranked files, seen from that angle.
func Rows(m *repomap.Map, ranked []locate.Ranked, angles []string) []plan.ExploreRow {
	top := make([]string, 0, len(ranked))
	for _, r := range ranked {
		top = append(top, r.Path)
	}
	rows := make([]plan.ExploreRow, len(angles))
	for i, a := range angles {
		var findings string
		var keys []string
		switch angleKind(a) {
		case "tests":
			findings, keys = testFindings(m, top)
		case "deps":
			findings, keys = depFindings(m, top)
		case "callers":
			findings, keys = callerFindings(m, top)
		default:
			findings, keys = fileFindings(m, ranked)
		}
		rows[i] = plan.ExploreRow{
			ID: fmt.Sprintf("E%d", i+1), Angle: a, Focus: a, Wave: 1, Status: plan.StatusCompleted,
			Description: fmt.Sprintf("The %s angle, from the repository map (no agent)", a),
			Findings:    abbrev.Truncate(findings, 800), KeyFiles: keys,
		}
	}
	return rows
}

func fileFindings(m *repomap.Map, ranked []locate.Ranked) (string, []string) {
	if len(ranked) == 0 {
		return "No file matched the requirement's words; the repository map summary is the starting point.", nil
	}
	var parts, keys []string
	for i, r := range ranked {
		if i == 6 {
			break
		}
		keys = append(keys, r.Path)
		f, _ := m.File(r.Path)
		parts = append(parts, r.Path+symbolsNote(f))
	}
	return "Most relevant files: " + strings.Join(parts, "; ") + ".", keys
}

func symbolsNote(f repomap.File) string {
	var names []string
	for _, s := range f.Symbols {
		if s.Parent != "" {
			continue
		}
		names = append(names, s.Name)
		if len(names) == 4 {
			break
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

func testFindings(m *repomap.Map, top []string) (string, []string) {
	var tests []string
	seen := map[string]bool{}
	want := map[string]bool{}
	dirs := map[string]bool{}
	for i, p := range top {
		if i == 8 {
			break
		}
		want[p] = true
		dirs[path.Dir(p)] = true
	}
	for _, f := range m.Files() {
		if !f.Test || seen[f.Path] {
			continue
		}
		related := dirs[path.Dir(f.Path)]
		for _, d := range f.Deps {
			if want[m.DepPath(d)] {
				related = true
			}
		}
		if related {
			seen[f.Path] = true
			tests = append(tests, f.Path)
		}
	}
	sort.Strings(tests)
	if len(tests) > 8 {
		tests = tests[:8]
	}
	var b strings.Builder
	if cmd := m.TestCommand(); cmd != "" {
		fmt.Fprintf(&b, "Test command: `%s`. ", cmd)
	} else {
		b.WriteString("No test command detected. ")
	}
	if len(m.TestLayout) > 0 {
		fmt.Fprintf(&b, "Tests live in: %s. ", strings.Join(m.TestLayout, "; "))
	}
	if len(tests) > 0 {
		fmt.Fprintf(&b, "Tests near the relevant files: %s.", strings.Join(tests, ", "))
	} else {
		b.WriteString("No existing test covers the relevant files directly.")
	}
	return b.String(), tests
}

func depFindings(m *repomap.Map, top []string) (string, []string) {
	var parts, keys []string
	for i, p := range top {
		if i == 5 {
			break
		}
		f, ok := m.File(p)
		if !ok || len(f.Deps) == 0 {
			continue
		}
		var deps []string
		for _, d := range f.Deps[:min(len(f.Deps), 4)] {
			deps = append(deps, m.DepPath(d))
		}
		parts = append(parts, fmt.Sprintf("%s imports %s", p, strings.Join(deps, ", ")))
		keys = append(keys, p)
	}
	var b strings.Builder
	if len(m.Manifests) > 0 {
		fmt.Fprintf(&b, "Manifests: %s. ", strings.Join(m.Manifests, ", "))
	}
	if len(parts) > 0 {
		b.WriteString(strings.Join(parts, "; ") + ".")
	} else {
		b.WriteString("The relevant files import no other file of the repository.")
	}
	return b.String(), keys
}

func callerFindings(m *repomap.Map, top []string) (string, []string) {
	callers := map[string][]string{}
	want := map[string]bool{}
	for i, p := range top {
		if i == 5 {
			break
		}
		want[p] = true
	}
	for _, f := range m.Files() {
		for _, n := range f.Deps {
			if d := m.DepPath(n); want[d] && f.Path != d {
				callers[d] = append(callers[d], f.Path)
			}
		}
	}
	var parts, keys []string
	for _, p := range top {
		cs := callers[p]
		if len(cs) == 0 {
			continue
		}
		sort.Strings(cs)
		if len(cs) > 4 {
			cs = append(cs[:4], fmt.Sprintf("and %d more", len(callers[p])-4))
		}
		parts = append(parts, fmt.Sprintf("%s is used by %s", p, strings.Join(cs, ", ")))
		keys = append(keys, p)
	}
	var b strings.Builder
	if len(m.EntryPoints) > 0 {
		eps := m.EntryPoints
		if len(eps) > 5 {
			eps = eps[:5]
		}
		fmt.Fprintf(&b, "Entry points: %s. ", strings.Join(eps, ", "))
	}
	if len(parts) > 0 {
		b.WriteString(strings.Join(parts, "; ") + ".")
	} else {
		b.WriteString("No other file imports the relevant files.")
	}
	return b.String(), keys
}
