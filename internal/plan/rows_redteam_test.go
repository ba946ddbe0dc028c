package plan

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestRedTeamPlanRowsBounded: a clone commits the tasks.csv a user
// imports (16 MiB at most), or whoever can push writes one into a state
// ref (64 MiB at most), as 900,000 empty rows: each row became a map of
// every column and a task, 1.6 GiB of the 16 MiB file. A file of more
// than MaxRows rows is refused, naming the line, having read no further;
// one of MaxRows is read. Not parallel: it measures the process's
// allocations.
func TestRedTeamPlanRowsBounded(t *testing.T) {
	flood := func(cols []string, size int) []byte {
		var b strings.Builder
		b.WriteString(strings.Join(cols, ",") + "\n")
		row := "T" + strings.Repeat(",", len(cols)-1) + "\n"
		for b.Len() < size {
			b.WriteString(row)
		}
		return []byte(b.String())
	}
	for name, read := range map[string]func([]byte) (int, error){
		"tasks.csv": func(b []byte) (int, error) { ts, err := ReadTasks("tasks.csv", b); return len(ts), err },
		"explore.csv": func(b []byte) (int, error) {
			rs, err := ReadExplore("explore.csv", b)
			return len(rs), err
		},
	} {
		cols := TaskColumns
		if name == "explore.csv" {
			cols = ExploreColumns
		}
		data := flood(cols, 16<<20)
		var err error
		got := allocatedBy(func() { _, err = read(data) })
		var fe *FileError
		if !errors.As(err, &fe) || !strings.Contains(fe.Msg, fmt.Sprint(MaxRows)) {
			t.Errorf("%s of 16 MiB of empty rows: %v, want a FileError naming the bound", name, err)
		}
		if got > 64<<20 {
			t.Errorf("%s: reading the flood allocated %d MiB; want at most 64 MiB", name, got>>20)
		}
	}
	var b strings.Builder
	b.WriteString(strings.Join(TaskColumns, ",") + "\n")
	for i := range MaxRows {
		fmt.Fprintf(&b, "T%d%s\n", i, strings.Repeat(",", len(TaskColumns)-1))
	}
	if ts, err := ReadTasks("tasks.csv", []byte(b.String())); err != nil || len(ts) != MaxRows {
		t.Errorf("a plan of %d tasks: %d read, %v", MaxRows, len(ts), err)
	}
	// A planner's plan that tasks.csv could not hold is refused when
	// checked, before it is saved.
	many := make([]Task, MaxRows+1)
	for i := range many {
		many[i] = Task{ID: fmt.Sprintf("T%d", i+1), Title: "t", Scope: "a/**"}
	}
	if _, err := Validate("tasks.csv", many, nil); err == nil || !strings.Contains(err.Error(), fmt.Sprint(MaxRows)) {
		t.Errorf("validating a plan of %d tasks: %v, want refused naming the bound", len(many), err)
	}
}

// allocatedBy is how many bytes fn allocated.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
