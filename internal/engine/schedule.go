package engine

import (
	"sort"

	"github.com/planexhq/planex/internal/plan"
	"github.com/planexhq/planex/internal/scope"
)

// schedule is the pure part of executing a plan: which task may start now
// and which finished task may be committed now. A task starts as soon as
// its prerequisites are done, not when its whole wave is; waves stay the
// plan's presentation and the unit of matrix mode.
//
// A task's prerequisites are its dependencies, plus the tasks of earlier
// waves that wave-by-wave execution would have finished before it and
// that it relies on: those it draws context from (their findings go into
// its prompt) and those whose scope overlaps its own (validation allows
// that across waves, and the later task must see the earlier one's files).
//
// Commits land one per task. A completed task is committed at once when a
// task waiting for it could then start; otherwise it waits until no task
// earlier in plan order (wave, then id) is still running, so tasks that
// run side by side are committed in plan order whenever that costs no
// time. Tasks that can overlap in time have disjoint scopes, so the
// branch's content does not depend on the order either way.
type schedule struct {
	tasks   []plan.Task // the caller's, updated in place as tasks finish
	prereq  [][]int
	rank    []int // position in plan order
	running map[int]bool
	held    map[int]bool // completed, not committed yet
}

func newSchedule(tasks []plan.Task) *schedule {
	return &schedule{tasks: tasks, prereq: prerequisites(tasks), rank: planOrder(tasks),
		running: map[int]bool{}, held: map[int]bool{}}
}

// prerequisites lists, for every task, the indices of the tasks it waits
// for (see schedule).
func prerequisites(tasks []plan.Task) [][]int {
	idx := plan.Index(tasks)
	out := make([][]int, len(tasks))
	for i, t := range tasks {
		seen := map[int]bool{}
		add := func(j int) {
			if j != i && !seen[j] {
				seen[j] = true
				out[i] = append(out[i], j)
			}
		}
		for _, d := range t.Deps {
			if j, ok := idx[d]; ok {
				add(j)
			}
		}
		for _, c := range t.ContextFrom {
			if j, ok := idx[c]; ok && tasks[j].Wave < t.Wave {
				add(j)
			}
		}
		for j, u := range tasks {
			if u.Wave < t.Wave && scope.Overlap(u.Scope, t.Scope) {
				add(j)
			}
		}
		sort.Ints(out[i])
	}
	return out
}

// planOrder ranks tasks by wave, then by id.
func planOrder(tasks []plan.Task) []int {
	order := make([]plan.Task, len(tasks))
	copy(order, tasks)
	plan.SortByID(order)
	sort.SliceStable(order, func(a, b int) bool { return order[a].Wave < order[b].Wave })
	idx := plan.Index(tasks)
	rank := make([]int, len(tasks))
	for r, t := range order {
		rank[idx[t.ID]] = r
	}
	return rank
}

// waiting reports whether task i has yet to run.
func (s *schedule) waiting(i int) bool {
	return !s.tasks[i].Status.Done() && !s.running[i] && !s.held[i]
}

// next returns the first task in plan order that may start now.
func (s *schedule) next() (int, bool) {
	best := -1
	for i := range s.tasks {
		if !s.waiting(i) || !s.ready(i, false) {
			continue
		}
		if best < 0 || s.rank[i] < s.rank[best] {
			best = i
		}
	}
	return best, best >= 0
}

// ready reports whether every prerequisite of i is done; withHeld counts
// completed tasks that are not committed yet as done.
func (s *schedule) ready(i int, withHeld bool) bool {
	for _, j := range s.prereq[i] {
		if !s.tasks[j].Status.Done() && !(withHeld && s.held[j]) {
			return false
		}
	}
	return true
}

// committable returns the held task to commit now, if any: the first in
// plan order that a waiting task needs, or that no running task precedes.
func (s *schedule) committable() (int, bool) {
	best := -1
	for i := range s.held {
		if !s.urgent(i) && s.runningBefore(i) {
			continue
		}
		if best < 0 || s.rank[i] < s.rank[best] {
			best = i
		}
	}
	return best, best >= 0
}

// urgent reports whether a waiting task needs held task h and could start
// once the held tasks are committed.
func (s *schedule) urgent(h int) bool {
	for i := range s.tasks {
		if s.waiting(i) && contains(s.prereq[i], h) && s.ready(i, true) {
			return true
		}
	}
	return false
}

func (s *schedule) runningBefore(h int) bool {
	for i := range s.running {
		if s.rank[i] < s.rank[h] {
			return true
		}
	}
	return false
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
