package plan

import (
	"fmt"
	"strings"
)

// PrevContext builds a task's prev_context: the findings of the completed
// rows it names in context_from, E-rows first in the order given.
func PrevContext(t Task, explore []ExploreRow, tasks []Task) string {
	eidx := map[string]ExploreRow{}
	for _, e := range explore {
		eidx[e.ID] = e
	}
	tidx := map[string]Task{}
	for _, x := range tasks {
		tidx[x.ID] = x
	}
	var parts []string
	for _, id := range t.ContextFrom {
		if e, ok := eidx[id]; ok && e.Status == StatusCompleted {
			s := fmt.Sprintf("[Explore %s] %s", e.Angle, strings.TrimSpace(e.Findings))
			if len(e.KeyFiles) > 0 {
				s += "\nFiles: " + JoinList(e.KeyFiles)
			}
			parts = append(parts, s)
		}
		if x, ok := tidx[id]; ok && x.Status == StatusCompleted {
			s := fmt.Sprintf("[Task %s: %s] %s", x.ID, x.Title, strings.TrimSpace(x.Findings))
			if len(x.FilesModified) > 0 {
				s += "\nFiles: " + JoinList(x.FilesModified)
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}

// Cascade marks pending tasks whose dependencies failed or were skipped as
// skipped, transitively, and returns the ids it changed.
func Cascade(tasks []Task) []string {
	idx := Index(tasks)
	var changed []string
	for again := true; again; {
		again = false
		for i := range tasks {
			t := &tasks[i]
			if t.Status.Done() {
				continue
			}
			for _, d := range t.Deps {
				j, ok := idx[d]
				if !ok {
					continue
				}
				if s := tasks[j].Status; s == StatusFailed || s == StatusSkipped {
					t.Status = StatusSkipped
					t.Error = fmt.Sprintf("dependency %s %s", d, s) // the status column says skipped
					changed = append(changed, t.ID)
					again = true
					break
				}
			}
		}
	}
	return changed
}

// Ready returns the pending tasks of the lowest wave that still has work,
// in id order, and that wave's number (0 when nothing is left).
func Ready(tasks []Task) ([]Task, int) {
	wave := 0
	for _, t := range tasks {
		if !t.Status.Done() && (wave == 0 || t.Wave < wave) {
			wave = t.Wave
		}
	}
	if wave == 0 {
		return nil, 0
	}
	var out []Task
	for _, t := range tasks {
		if t.Wave == wave && !t.Status.Done() {
			out = append(out, t)
		}
	}
	SortByID(out)
	return out, wave
}

// Counts tallies task statuses.
type Counts struct{ Total, Completed, Failed, Skipped, Pending int }

// Count tallies tasks.
func Count(tasks []Task) Counts {
	c := Counts{Total: len(tasks)}
	for _, t := range tasks {
		switch t.Status {
		case StatusCompleted:
			c.Completed++
		case StatusFailed:
			c.Failed++
		case StatusSkipped:
			c.Skipped++
		default:
			c.Pending++
		}
	}
	return c
}
