package plan

import (
	"fmt"
	"testing"
)

// wide builds n tasks in layers of 10, each depending on two tasks of the
// previous layer, with disjoint scopes.
func wide(n int) []Task {
	tasks := make([]Task, n)
	for i := range tasks {
		t := Task{ID: fmt.Sprintf("T%d", i+1), Title: "task", Description: "do the thing, carefully", Scope: fmt.Sprintf("pkg/m%d/**", i),
			Test: "unit tests pass", AcceptanceCriteria: "works", Hints: ParseHints("tip || a.go;b.go"), ExecutionDirectives: "go test ./...",
			Findings: "some findings, with a comma", Status: StatusCompleted, FilesModified: []string{"a.go", "b.go"}}
		if i >= 10 {
			t.Deps = []string{fmt.Sprintf("T%d", i-9), fmt.Sprintf("T%d", i-10+((i+3)%10)+1)}
		}
		tasks[i] = t
	}
	return tasks
}

func BenchmarkAssignWaves1000(b *testing.B) {
	tasks := wide(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := AssignWaves(tasks); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate1000(b *testing.B) {
	tasks := wide(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Validate("tasks.csv", tasks, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCSVRoundTrip1000(b *testing.B) {
	tasks := wide(1000)
	b.ReportAllocs()
	for b.Loop() {
		data := WriteTasks(tasks)
		b.SetBytes(int64(len(data)))
		if _, err := ReadTasks("tasks.csv", data); err != nil {
			b.Fatal(err)
		}
	}
}
