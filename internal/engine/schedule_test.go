package engine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/plan"
)

func task(id, scope string, deps ...string) plan.Task {
	return plan.Task{ID: id, Title: id, Description: id, Scope: scope, Deps: deps, Status: plan.StatusPending}
}

func waved(t *testing.T, tasks ...plan.Task) []plan.Task {
	t.Helper()
	out, err := plan.Validate("tasks.csv", tasks, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPrerequisites(t *testing.T) {
	ctx := task("T3", "c/**", "T2")
	ctx.ContextFrom = []string{"T1", "T4"}
	cases := []struct {
		name  string
		tasks []plan.Task
		want  [][]int
	}{
		{"dependencies only", []plan.Task{task("T1", "a/**"), task("T2", "b/**", "T1")}, [][]int{nil, {0}}},
		{"context from an earlier wave, not from a later one",
			[]plan.Task{task("T1", "a/**"), task("T2", "b/**"), ctx, task("T4", "d/**", "T3")}, [][]int{nil, nil, {0, 1}, {2}}},
		{"a scope overlapping an earlier wave's",
			[]plan.Task{task("T1", "a/**"), task("T2", "b/**"), task("T3", "a/x.go", "T2")}, [][]int{nil, nil, {0, 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := prerequisites(waved(t, c.tasks...)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("prerequisites = %v, want %v", got, c.want)
			}
		})
	}
}

// simulate drives a schedule as execution does, with tasks finishing in
// the given order ("T2" completes, "T2!" fails), and returns what started
// and what was committed, in order.
func simulate(t *testing.T, tasks []plan.Task, concurrency int, finish []string) string {
	t.Helper()
	s := newSchedule(tasks)
	var log []string
	startAll := func() {
		for len(s.running) < concurrency {
			i, ok := s.next()
			if !ok {
				return
			}
			s.running[i] = true
			log = append(log, "start "+tasks[i].ID)
		}
	}
	startAll()
	for _, f := range finish {
		id, failed := strings.CutSuffix(f, "!")
		i := plan.Index(tasks)[id]
		if !s.running[i] {
			t.Fatalf("%s finishes but is not running (%s)", id, strings.Join(log, ", "))
		}
		delete(s.running, i)
		if failed {
			tasks[i].Status = plan.StatusFailed
			log = append(log, "fail "+id)
			for _, sk := range plan.Cascade(tasks) {
				log = append(log, "skip "+sk)
			}
		} else {
			s.held[i] = true
		}
		for {
			j, ok := s.committable()
			if !ok {
				break
			}
			delete(s.held, j)
			tasks[j].Status = plan.StatusCompleted
			log = append(log, "commit "+tasks[j].ID)
		}
		startAll()
	}
	if len(s.running) > 0 || len(s.held) > 0 {
		t.Fatalf("left running %v, held %v (%s)", s.running, s.held, strings.Join(log, ", "))
	}
	return strings.Join(log, ", ")
}

func TestScheduleOrder(t *testing.T) {
	issue := func() []plan.Task {
		return []plan.Task{task("T1", "a/**"), task("T2", "b/**"), task("T3", "c/**", "T2"), task("T4", "d/**", "T3")}
	}
	diamond := func() []plan.Task {
		return []plan.Task{task("T1", "a/**"), task("T2", "b/**", "T1"), task("T3", "c/**", "T1"), task("T4", "d/**", "T2", "T3")}
	}
	cases := []struct {
		name        string
		tasks       []plan.Task
		concurrency int
		finish      []string
		want        string
	}{
		{"a chain runs beside a long task, committed as it goes; the rest in plan order",
			issue(), 2, []string{"T2", "T3", "T4", "T1"},
			"start T1, start T2, commit T2, start T3, commit T3, start T4, commit T1, commit T4"},
		{"one at a time is plan order",
			issue(), 1, []string{"T1", "T2", "T3", "T4"},
			"start T1, commit T1, start T2, commit T2, start T3, commit T3, start T4, commit T4"},
		{"side by side tasks commit in plan order when nothing waits on one alone",
			diamond(), 4, []string{"T1", "T3", "T2", "T4"},
			"start T1, commit T1, start T2, start T3, commit T2, commit T3, start T4, commit T4"},
		{"a failure skips its dependents and lets the held task through",
			diamond(), 4, []string{"T1", "T3", "T2!"},
			"start T1, commit T1, start T2, start T3, fail T2, skip T4, commit T3"},
		{"a task waits for an earlier wave's task whose scope overlaps its own",
			[]plan.Task{task("T1", "a/**"), task("T2", "b/**"), task("T3", "a/x.go", "T2")}, 2, []string{"T2", "T1", "T3"},
			"start T1, start T2, commit T1, commit T2, start T3, commit T3"},
		{"the concurrency limit holds back the next ready task",
			[]plan.Task{task("T1", "a/**"), task("T2", "b/**"), task("T3", "c/**")}, 2, []string{"T2", "T1", "T3"},
			"start T1, start T2, start T3, commit T1, commit T2, commit T3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := simulate(t, waved(t, c.tasks...), c.concurrency, c.finish); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestPlanOrder(t *testing.T) {
	tasks := waved(t, task("T10", "a/**"), task("T2", "b/**", "T10"), task("T3", "c/**"))
	got := fmt.Sprint(planOrder(tasks))
	if got != "[1 2 0]" { // T3 (wave 1) before T10 (wave 1) numerically; T2 is wave 2
		t.Errorf("planOrder = %s", got)
	}
}
