package plan

import (
	"fmt"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
)

// Planned is the part of a task that approval covers: the columns the plan
// says what to do with. The columns planex keeps up to date while a plan
// runs (wave, status, findings, files, tests, usage, commit) are not part
// of it.
type Planned struct {
	ID                  string   `json:"id"`
	Title               string   `json:"title"`
	Description         string   `json:"description"`
	Test                string   `json:"test"`
	AcceptanceCriteria  string   `json:"acceptance_criteria"`
	Scope               string   `json:"scope"`
	Hints               string   `json:"hints"`
	ExecutionDirectives string   `json:"execution_directives"`
	Deps                []string `json:"deps"`
	ContextFrom         []string `json:"context_from"`
}

// PlannedOf copies the planned columns of tasks, in id order.
func PlannedOf(tasks []Task) []Planned {
	sorted := append([]Task(nil), tasks...)
	SortByID(sorted)
	out := make([]Planned, len(sorted))
	for i, t := range sorted {
		out[i] = Planned{ID: t.ID, Title: t.Title, Description: t.Description, Test: t.Test,
			AcceptanceCriteria: t.AcceptanceCriteria, Scope: t.Scope, Hints: t.Hints.String(),
			ExecutionDirectives: t.ExecutionDirectives,
			Deps:                append([]string(nil), t.Deps...), ContextFrom: append([]string(nil), t.ContextFrom...)}
		if t.Deps != nil && len(t.Deps) == 0 {
			out[i].Deps = []string{}
		}
		if t.ContextFrom != nil && len(t.ContextFrom) == 0 {
			out[i].ContextFrom = []string{}
		}
	}
	return out
}

// HashPlanned is Hash of the tasks the planned columns describe.
func HashPlanned(ps []Planned) string {
	tasks := make([]Task, len(ps))
	for i, p := range ps {
		tasks[i] = Task{ID: p.ID, Title: p.Title, Description: p.Description, Test: p.Test,
			AcceptanceCriteria: p.AcceptanceCriteria, Scope: p.Scope, Hints: ParseHints(p.Hints),
			ExecutionDirectives: p.ExecutionDirectives, Deps: p.Deps, ContextFrom: p.ContextFrom}
	}
	return Hash(tasks)
}

// ChangeKind says how a task differs from its approved version.
type ChangeKind int

const (
	FieldChanged ChangeKind = iota
	TaskAdded
	TaskRemoved
	TaskRepeated // a second row with an approved task's id
)

// Change is one difference between an approved plan and a plan on disk.
type Change struct {
	Task  string
	Kind  ChangeKind
	Field string // the CSV column, for FieldChanged
	Was   string // the approved value
	Now   string
}

// String names the task and field: T2 field scope ("src/**" → "**").
func (c Change) String() string {
	switch c.Kind {
	case TaskAdded:
		return c.Task + " was added"
	case TaskRemoved:
		return c.Task + " was removed"
	case TaskRepeated:
		return c.Task + " has a second row"
	}
	return fmt.Sprintf("%s field %s (%s → %s)", c.Task, c.Field, quoteShort(c.Was), quoteShort(c.Now))
}

// Where names the task and field without the values: T2 field scope.
func (c Change) Where() string {
	if c.Kind == FieldChanged {
		return c.Task + " field " + c.Field
	}
	return c.String()
}

// quoteShort quotes a cell for a message, cutting long text.
func quoteShort(s string) string { return fmt.Sprintf("%q", abbrev.Truncate(s, 80)) }

// Compare lists how tasks differ from the approved plan in their planned
// columns: changed fields, added and removed tasks, in id order. An empty
// cell and an empty list are the same; so are row orders.
func Compare(approved []Planned, tasks []Task) []Change {
	now := map[string]Planned{}
	var out []Change
	for _, p := range PlannedOf(tasks) {
		if _, dup := now[p.ID]; dup {
			out = append(out, Change{Task: p.ID, Kind: TaskRepeated})
			continue
		}
		now[p.ID] = p
	}
	was := map[string]bool{}
	for _, a := range approved {
		was[a.ID] = true
		n, ok := now[a.ID]
		if !ok {
			out = append(out, Change{Task: a.ID, Kind: TaskRemoved})
			continue
		}
		for _, f := range plannedFields {
			if x, y := f.get(a), f.get(n); x != y {
				out = append(out, Change{Task: a.ID, Kind: FieldChanged, Field: f.name, Was: x, Now: y})
			}
		}
	}
	for id := range now {
		if !was[id] {
			out = append(out, Change{Task: id, Kind: TaskAdded})
		}
	}
	sortChanges(out)
	return out
}

// Changes joins changes for a message.
func Changes(cs []Change) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ")
}

var plannedFields = []struct {
	name string
	get  func(Planned) string
}{
	{"title", func(p Planned) string { return p.Title }},
	{"description", func(p Planned) string { return p.Description }},
	{"test", func(p Planned) string { return p.Test }},
	{"acceptance_criteria", func(p Planned) string { return p.AcceptanceCriteria }},
	{"scope", func(p Planned) string { return p.Scope }},
	{"hints", func(p Planned) string { return ParseHints(p.Hints).String() }}, // as read, so that spacing is no change
	{"execution_directives", func(p Planned) string { return p.ExecutionDirectives }},
	{"deps", func(p Planned) string { return JoinList(p.Deps) }},
	{"context_from", func(p Planned) string { return JoinList(p.ContextFrom) }},
}

// sortChanges orders changes by task id (numerically), keeping the field
// order within a task.
func sortChanges(cs []Change) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && idLess(cs[j].Task, cs[j-1].Task); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}
