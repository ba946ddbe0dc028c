package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/planexhq/planex/internal/plan"
)

// MaxCommentBytes is GitHub's limit on a comment body.
const MaxCommentBytes = 65536

// PlanMarker is the hidden, machine-readable part of a plan comment.
type PlanMarker struct {
	ID      string `json:"id"`
	SHA256  string `json:"sha256"`
	Session string `json:"session"`
	Base    string `json:"base,omitempty"`
}

const markerPrefix = "<!-- planex:plan "

// Marker renders the hidden marker line.
func (m PlanMarker) String() string {
	b, _ := json.Marshal(m) // four strings cannot fail to marshal
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
}

type wave struct {
	N     int
	Tasks []plan.Task
}

// PlanComment renders the plan comment, summarising it when the full
// text would not fit in one GitHub comment. It reports whether it had to.
func PlanComment(v PlanView) (body string, truncated bool) {
	hash := plan.Hash(v.Tasks)
	data := struct {
		PlanView
		Marker, PlanID, Hash, Mermaid string
		Waves                         []wave
		Full, Truncated               bool
	}{PlanView: v, Marker: PlanMarker{ID: plan.ID(hash), SHA256: hash, Session: v.Session, Base: v.Base}.String(),
		PlanID: plan.ID(hash), Hash: hash, Mermaid: Mermaid(v.Tasks), Waves: waves(v.Tasks), Full: true}
	if data.Trigger == "" {
		data.Trigger = "/planex"
	}
	t := template.Must(template.New("").Funcs(funcs()).ParseFS(templateFS, "templates/plan-comment.md.tmpl"))
	render := func() string {
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, "plan-comment.md.tmpl", data); err != nil {
			panic(fmt.Sprintf("rendering plan comment: %v", err))
		}
		return b.String()
	}
	out := render()
	if len(out) <= MaxCommentBytes {
		return out, false
	}
	// Drop the bulky parts first, then shorten findings.
	data.Full, data.Truncated = false, true
	data.Mermaid = "graph TD\n  note[\"dependency graph omitted: plan too large\"]\n"
	ex := make([]plan.ExploreRow, len(v.Explore))
	for i, e := range v.Explore {
		e.Findings = plan.Truncate(e.Findings, 200)
		e.KeyFiles = nil
		ex[i] = e
	}
	data.Explore = ex
	out = render()
	all := len(data.Waves)
	for len(out) > MaxCommentBytes && len(data.Waves) > 1 {
		// Keep the first waves whole and say how many are left out.
		data.Waves = data.Waves[:len(data.Waves)-1]
		data.Summary = strings.TrimSpace(v.Summary) + fmt.Sprintf("\n\n(%d more wave(s) not shown here.)", all-len(data.Waves))
		out = render()
	}
	return out, true
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
		fmt.Fprintf(&b, "  %s[\"%s: %s\"]\n", t.ID, t.ID, mermaidText(t.Title))
	}
	for _, t := range sorted {
		for _, d := range t.Deps {
			fmt.Fprintf(&b, "  %s --> %s\n", d, t.ID)
		}
	}
	return b.String()
}

func mermaidText(s string) string {
	s = plan.Truncate(strings.Join(strings.Fields(s), " "), 60)
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "`", "'").Replace(s)
}
