package plan

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/plural"
	"github.com/planexhq/planex/internal/scope"
)

var (
	taskIDRe    = regexp.MustCompile(`^T[1-9][0-9]*$`)
	exploreIDRe = regexp.MustCompile(`^E[1-9][0-9]*$`)
)

// Problems is every validation error of a plan, reported together so a
// hand-edited file can be fixed in one pass.
type Problems []error

func (p Problems) Error() string {
	msgs := make([]string, len(p))
	for i, e := range p {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Validate checks tasks (and their links into explore rows) and assigns
// waves. file names the CSV in messages. It returns the tasks with Wave
// set, or Problems.
func Validate(file string, tasks []Task, explore []ExploreRow) ([]Task, error) {
	if len(tasks) == 0 {
		return nil, Problems{&FileError{File: file, Msg: "the plan has no tasks"}}
	}
	// A plan tasks.csv could not hold (MaxRows) is refused before it is
	// saved, not found unreadable later.
	if len(tasks) > MaxRows {
		return nil, Problems{&FileError{File: file, Msg: fmt.Sprintf("the plan has %s, more than %d", plural.Count(len(tasks), "task", "tasks"), MaxRows)}}
	}
	tasks = append([]Task(nil), tasks...)
	for i := range tasks {
		if tasks[i].Status == "" {
			tasks[i].Status = StatusPending
		}
	}
	p := &problemList{file: file}
	seen := map[string]Task{}
	for _, t := range tasks {
		p.checkFields(t, seen)
	}
	exp := map[string]bool{}
	for _, e := range explore {
		exp[e.ID] = true
	}
	for _, t := range tasks {
		p.checkLinks(t, seen, exp)
	}
	if len(p.probs) > 0 {
		return nil, p.probs
	}
	out, err := AssignWaves(tasks)
	if err != nil {
		return nil, Problems{&FileError{File: file, Field: "deps", Msg: err.Error()}}
	}
	if probs := scopeOverlaps(file, out); len(probs) > 0 {
		return nil, probs
	}
	return out, nil
}

// problemList gathers the problems of one plan file.
type problemList struct {
	file  string
	probs Problems
}

func (p *problemList) add(t Task, field, format string, args ...any) {
	p.probs = append(p.probs, &FileError{File: p.file, Line: t.Line, Row: t.ID, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// checkFields checks t's own fields and records its id in seen (the first
// row with an id wins; later ones are duplicates).
func (p *problemList) checkFields(t Task, seen map[string]Task) {
	switch {
	case t.ID == "":
		p.add(t, "id", "id is empty")
	case !taskIDRe.MatchString(t.ID):
		p.add(t, "id", "%q is not a task id (T1, T2, …)", t.ID)
	default:
		if prev, dup := seen[t.ID]; dup {
			p.add(t, "id", "duplicate id %s (first defined on line %d)", t.ID, prev.Line)
		} else {
			seen[t.ID] = t
		}
	}
	if strings.TrimSpace(t.Title) == "" {
		p.add(t, "title", "title is empty")
	}
	if strings.TrimSpace(t.Description) == "" {
		p.add(t, "description", "description is empty")
	}
	if err := scope.Validate(t.Scope); err != nil {
		p.add(t, "scope", "%v", err)
	}
	if !t.Status.Done() && t.Status != StatusPending && t.Status != StatusRunning {
		p.add(t, "status", "%q is not a status (pending, completed, failed, skipped)", t.Status)
	}
}

// checkLinks checks that t's deps name other tasks and its context_from
// names known explorations or tasks.
func (p *problemList) checkLinks(t Task, tasks map[string]Task, explore map[string]bool) {
	for _, d := range t.Deps {
		switch {
		case d == t.ID:
			p.add(t, "deps", "%s depends on itself", t.ID)
		case !taskIDRe.MatchString(d):
			p.add(t, "deps", "%q is not a task id", d)
		default:
			if _, ok := tasks[d]; !ok {
				p.add(t, "deps", "unknown task %s", d)
			}
		}
	}
	for _, c := range t.ContextFrom {
		switch {
		case exploreIDRe.MatchString(c):
			if !explore[c] {
				p.add(t, "context_from", "unknown exploration %s", c)
			}
		case taskIDRe.MatchString(c):
			if _, ok := tasks[c]; !ok {
				p.add(t, "context_from", "unknown task %s", c)
			} else if c == t.ID {
				p.add(t, "context_from", "%s names itself", c)
			}
		default:
			p.add(t, "context_from", "%q is neither an exploration (E1…) nor a task (T1…) id", c)
		}
	}
}

// scopeOverlaps reports tasks of one wave whose scopes can touch the same
// file: they would run concurrently and their commits could conflict.
func scopeOverlaps(file string, tasks []Task) Problems {
	var probs Problems
	for i := range tasks {
		for j := i + 1; j < len(tasks); j++ {
			a, b := tasks[i], tasks[j]
			if a.Wave != b.Wave {
				continue
			}
			if scope.Overlap(a.Scope, b.Scope) {
				probs = append(probs, &FileError{File: file, Line: b.Line, Row: b.ID, Field: "scope",
					Msg: fmt.Sprintf("scope %q overlaps %s's scope %q in wave %d; make them disjoint or add a dependency", b.Scope, a.ID, a.Scope, a.Wave)})
			}
		}
	}
	return probs
}

// CycleError names the tasks on a dependency cycle.
type CycleError struct{ Path []string }

func (e *CycleError) Error() string {
	return "dependency cycle: " + strings.Join(e.Path, " → ")
}

// AssignWaves computes 1-based waves with Kahn's algorithm: a task's wave
// is one more than the latest wave among its dependencies. Unknown deps
// must have been rejected before.
func AssignWaves(tasks []Task) ([]Task, error) {
	idx := Index(tasks)
	indeg := make([]int, len(tasks))
	children := make([][]int, len(tasks))
	for i, t := range tasks {
		for _, d := range uniq(t.Deps) {
			j, ok := idx[d]
			if !ok {
				return nil, fmt.Errorf("%s: unknown dependency %s", t.ID, d)
			}
			indeg[i]++
			children[j] = append(children[j], i)
		}
	}
	out := make([]Task, len(tasks))
	copy(out, tasks)
	queue := make([]int, 0, len(tasks))
	for i := range out {
		out[i].Wave = 0
		if indeg[i] == 0 {
			out[i].Wave = 1
			queue = append(queue, i)
		}
	}
	done := 0
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		done++
		for _, c := range children[i] {
			if w := out[i].Wave + 1; w > out[c].Wave {
				out[c].Wave = w
			}
			if indeg[c]--; indeg[c] == 0 {
				queue = append(queue, c)
			}
		}
	}
	if done < len(out) {
		return nil, &CycleError{Path: findCycle(out, idx, indeg)}
	}
	return out, nil
}

// findCycle walks dependencies among the tasks Kahn could not order until
// it revisits one, and returns that loop, closed (T2 → T4 → T2).
func findCycle(tasks []Task, idx map[string]int, indeg []int) []string {
	start := -1
	for i := range tasks {
		if indeg[i] > 0 {
			start = i
			break
		}
	}
	pos := map[int]int{}
	var path []int
	for cur := start; ; {
		if p, ok := pos[cur]; ok {
			loop := path[p:]
			// Report the cycle in dependency order, starting at its smallest id.
			ids := make([]string, len(loop))
			for k, n := range loop {
				ids[len(loop)-1-k] = tasks[n].ID
			}
			min := 0
			for k := range ids {
				if idLess(ids[k], ids[min]) {
					min = k
				}
			}
			ids = append(ids[min:], ids[:min]...)
			return append(ids, ids[0])
		}
		pos[cur] = len(path)
		path = append(path, cur)
		next := -1
		for _, d := range tasks[cur].Deps {
			if j, ok := idx[d]; ok && indeg[j] > 0 {
				next = j
				break
			}
		}
		if next < 0 {
			return []string{tasks[start].ID}
		}
		cur = next
	}
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// idLess orders ids numerically within a prefix (T2 < T10).
func idLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// SortByID orders tasks by id, numerically.
func SortByID(tasks []Task) {
	sort.SliceStable(tasks, func(i, j int) bool { return idLess(tasks[i].ID, tasks[j].ID) })
}

// IsProblems reports whether err is a validation failure (as opposed to an
// I/O error).
func IsProblems(err error) bool {
	var p Problems
	var f *FileError
	return errors.As(err, &p) || errors.As(err, &f)
}
