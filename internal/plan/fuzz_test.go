package plan

import (
	"reflect"
	"strings"
	"testing"
)

func headerOf(cols []string) string { return strings.Join(cols, ",") + "\n" }

// normalTasks and normalRows forget the line each row was read from,
// which a rewrite may move.
func normalTasks(ts []Task) []Task {
	out := append([]Task(nil), ts...)
	for i := range out {
		out[i].Line = 0
	}
	return out
}

func normalRows(rs []ExploreRow) []ExploreRow {
	out := append([]ExploreRow(nil), rs...)
	for i := range out {
		out[i].Line = 0
	}
	return out
}

// FuzzReadTasks: a tasks.csv that reads writes back to one that reads the
// same tasks (and a second write is byte for byte the first).
func FuzzReadTasks(f *testing.F) {
	f.Add([]byte(headerOf(TaskColumns) + "T1,a,b,c,d,a/**,,go test ./...,,E1,1,pending,,,,,\n"))
	f.Add([]byte(headerOf(TaskColumns) + "T1,\"quoted, with comma\",\"multi\nline\",,,**,,,T0;T2,,,,,,,,\n"))
	f.Add([]byte("id,title\nT1,x\n"))
	f.Add([]byte("\xef\xbb\xbf" + headerOf(TaskColumns)))
	f.Fuzz(func(t *testing.T, data []byte) {
		tasks, err := ReadTasks("tasks.csv", data)
		if err != nil {
			return
		}
		out := WriteTasks(tasks)
		again, err := ReadTasks("tasks.csv", out)
		if err != nil {
			t.Fatalf("written tasks do not read back: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(normalTasks(tasks), normalTasks(again)) {
			t.Fatalf("round trip changed the tasks:\n%#v\n%#v", tasks, again)
		}
		if string(WriteTasks(again)) != string(out) {
			t.Fatal("a second write differs from the first")
		}
	})
}

// FuzzReadExplore: the same for explore.csv.
func FuzzReadExplore(f *testing.F) {
	f.Add([]byte(headerOf(ExploreColumns) + "E1,patterns,find them,code,pending,,,\n"))
	f.Add([]byte(headerOf(ExploreColumns) + "E1,\"a,b\",\"x\ny\",,,,,\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ReadExplore("explore.csv", data)
		if err != nil {
			return
		}
		out := WriteExplore(rows)
		again, err := ReadExplore("explore.csv", out)
		if err != nil {
			t.Fatalf("written rows do not read back: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(normalRows(rows), normalRows(again)) {
			t.Fatalf("round trip changed the rows:\n%#v\n%#v", rows, again)
		}
	})
}
