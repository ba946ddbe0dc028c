package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/render/md"
	"github.com/planexhq/planex/internal/tmpl"
)

// MaxCommentBytes is GitHub's limit on a comment body.
const MaxCommentBytes = 65536

// PlanMarker is the hidden, machine-readable part of a plan comment.
type PlanMarker struct {
	ID      string `json:"id"`
	SHA256  string `json:"sha256"`
	Session string `json:"session"`
	Base    string `json:"base,omitempty"`
	// Inputs is plan.InputsHash of the requirement and exploration the
	// plan was made from (empty in comments of older planex versions).
	Inputs string `json:"inputs,omitempty"`
	// Auto says the plan was posted to run at once, approved with its
	// request (-y) or by a setting (auto-approve, ci-fix auto); a plan
	// posted to wait for an approval is never approved by a setting.
	Auto bool `json:"auto,omitempty"`
	// For is, on a plan posted to run at once, whom it runs for: the
	// login its approval names (the one who asked, or planex for a CI
	// fix of its own push). A state ref naming another approver is not
	// this plan's approval.
	For string `json:"for,omitempty"`
}

const markerPrefix = "<!-- planex:plan "

// Marker renders the hidden marker line.
func (m PlanMarker) String() string {
	b, _ := json.Marshal(m) // strings and a bool cannot fail to marshal
	return markerPrefix + string(b) + " -->"
}

var markerRe = regexp.MustCompile(`^<!-- planex:plan (\{[^\n]*?\}) -->`)

// ParsePlanMarker reads the plan marker on the first line of a comment
// body. Only the first line counts: text the agents wrote, further down,
// cannot smuggle in a marker of its own.
func ParsePlanMarker(body string) (PlanMarker, bool) {
	m := markerRe.FindStringSubmatch(body)
	if m == nil {
		return PlanMarker{}, false
	}
	var pm PlanMarker
	if err := json.Unmarshal([]byte(m[1]), &pm); err != nil || pm.ID == "" || pm.SHA256 == "" {
		return PlanMarker{}, false
	}
	return pm, true
}

// PlanView is what a plan comment shows.
type PlanView struct {
	Summary, Approach string
	Type, Complexity  string
	Explore           []plan.ExploreRow
	Tasks             []plan.Task
	Session           string
	Base              string
	Estimate          string // e.g. "$0.42 (from exploration so far)"; empty when unknown
	Trigger           string // "/planex"
	StateRef          string // where the full plan lives
	Inputs            string // plan.InputsHash of the requirement and exploration, for the marker
	Auto              bool   // the plan runs at once (PlanMarker.Auto)
	For               string // whom a plan that runs at once runs for (PlanMarker.For)
}

type wave struct {
	N     int
	Tasks []plan.Task
}

// planData is what the plan comment template sees.
type planData struct {
	PlanView
	Marker, PlanID, Hash, Mermaid string
	Waves                         []wave
	// WorkflowTasks can change .github/workflows/, which needs a token
	// with the workflows permission.
	WorkflowTasks []string
	// SettingsTasks name .github/planex.yml in their scope: only they
	// may change planex's own settings.
	SettingsTasks []string
	// ConfigTasks may change local actions, action definitions,
	// CODEOWNERS, Dependabot's settings, .gitmodules or .lfsconfig
	// (plan.ConfigTasks).
	ConfigTasks []string
	// GuidanceTasks may change what coding agents read as the
	// repository's guidance (plan.GuidanceTasks).
	GuidanceTasks []string
	// Full shows the task details and the exploration's key files.
	Full bool
	// Truncated says the comment is a summary of the plan.
	Truncated bool
	// TitleMax and DepsMax shorten the task rows (runes, ids); IDsOnly
	// lists each wave's task ids without titles: the last resort that
	// still shows every task.
	TitleMax, DepsMax int
	IDsOnly           bool
}

// PlanComment renders the plan comment, summarising it when the full
// text would not fit in one GitHub comment. It reports whether it had to.
//
// Every task is listed whatever the plan holds: a summary drops the
// graph, the details and the exploration, then shortens titles, and at
// the last lists each wave's task ids alone, rather than leave a task
// out. (Text cannot hide a task either: everything the agents wrote is
// escaped.)
func PlanComment(v PlanView) (body string, truncated bool) {
	hash := plan.Hash(v.Tasks)
	data := planData{PlanView: v, Marker: PlanMarker{ID: plan.ID(hash), SHA256: hash, Session: v.Session, Base: v.Base, Inputs: v.Inputs, Auto: v.Auto, For: v.For}.String(),
		PlanID: plan.ID(hash), Hash: hash, Mermaid: Mermaid(v.Tasks), Waves: waves(v.Tasks), Full: true, TitleMax: 200, DepsMax: 50,
		WorkflowTasks: plan.WorkflowTasks(v.Tasks), SettingsTasks: plan.SettingsTasks(v.Tasks),
		ConfigTasks: plan.ConfigTasks(v.Tasks), GuidanceTasks: plan.GuidanceTasks(v.Tasks)}
	if data.Trigger == "" {
		data.Trigger = "/planex"
	}
	t := tmpl.Must(tmpl.ParseFS(templateFS, funcs(), "templates/plan-comment.md.tmpl"))
	render := func() string {
		var b bytes.Buffer
		if err := t.Execute(&b, "plan-comment.md.tmpl", data); err != nil {
			panic(fmt.Sprintf("rendering plan comment: %v", err))
		}
		return b.String()
	}
	out := render()
	if len(out) <= MaxCommentBytes {
		return out, false
	}
	// Drop the bulky parts first, then shorten what is left.
	steps := []func(){
		func() {
			data.Full, data.Truncated = false, true
			data.Mermaid = "graph TD\n  note[\"dependency graph omitted: plan too large\"]\n"
			data.Summary, data.Approach = abbrev.Truncate(v.Summary, 2000), abbrev.Truncate(v.Approach, 1000)
			ex := make([]plan.ExploreRow, len(v.Explore))
			for i, e := range v.Explore {
				e.Findings = abbrev.Truncate(e.Findings, 200)
				e.KeyFiles = nil
				ex[i] = e
			}
			data.Explore = ex
		},
		func() { data.Explore, data.TitleMax, data.DepsMax = nil, 80, 10 },
		func() {
			data.Summary, data.Approach, data.TitleMax, data.DepsMax = abbrev.Truncate(v.Summary, 300), "", 30, 3
		},
		func() { data.Summary, data.IDsOnly = abbrev.Truncate(v.Summary, 300), true },
	}
	for _, step := range steps {
		step()
		if out = render(); len(out) <= MaxCommentBytes {
			return out, true
		}
	}
	// Thousands of tasks with scattered ids: cut at a line, below the
	// limit, and say where the whole plan is.
	return strings.TrimRight(cutMarkdown(out, MaxCommentBytes-400), "\n") + fmt.Sprintf("\n\n> **This plan has %s: too many to list in a comment.** It is in the job summary and in %s.\n", plural.Count(len(v.Tasks), "task", "tasks"), md.Code(v.StateRef)), true
}

// capIDs keeps the first n ids and says how many more there are.
func capIDs(ids []string, n int) []string {
	if len(ids) <= n {
		return ids
	}
	return append(append([]string(nil), ids[:n]...), fmt.Sprintf("… (+%d)", len(ids)-n))
}

// idRanges lists the tasks' ids for running text, consecutive task
// numbers as one range ("T1–T40, T42").
func idRanges(tasks []plan.Task) string {
	var parts []string
	num := func(id string) int {
		n, err := strconv.Atoi(strings.TrimPrefix(id, "T"))
		if err != nil || !strings.HasPrefix(id, "T") || n <= 0 {
			return -1
		}
		return n
	}
	for i := 0; i < len(tasks); {
		j := i
		for j+1 < len(tasks) && num(tasks[j].ID) > 0 && num(tasks[j+1].ID) == num(tasks[j].ID)+1 {
			j++
		}
		if j > i+1 {
			parts = append(parts, tasks[i].ID+"–"+tasks[j].ID)
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, tasks[k].ID)
			}
		}
		i = j + 1
	}
	return md.Text(strings.Join(parts, ", "))
}

func waves(tasks []plan.Task) []wave {
	by := map[int][]plan.Task{}
	for _, t := range tasks {
		by[t.Wave] = append(by[t.Wave], t)
	}
	var ns []int
	for n := range by {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	out := make([]wave, len(ns))
	for i, n := range ns {
		ts := by[n]
		plan.SortByID(ts)
		out[i] = wave{N: n, Tasks: ts}
	}
	return out
}

// Mermaid renders the dependency graph.
func Mermaid(tasks []plan.Task) string {
	sorted := append([]plan.Task(nil), tasks...)
	plan.SortByID(sorted)
	var b strings.Builder
	b.WriteString("graph TD\n")
	for _, t := range sorted {
		fmt.Fprintf(&b, "  %s[\"%s: %s\"]\n", md.MermaidID(t.ID), md.MermaidLabel(t.ID), md.MermaidLabel(abbrev.Truncate(strings.Join(strings.Fields(t.Title), " "), 60)))
	}
	for _, t := range sorted {
		for _, d := range t.Deps {
			fmt.Fprintf(&b, "  %s --> %s\n", md.MermaidID(d), md.MermaidID(t.ID))
		}
	}
	return b.String()
}
