package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

const header = "id,title,description,test,acceptance_criteria,scope,hints,execution_directives,deps,context_from,wave,status,findings,files_modified,tests_passed,acceptance_met,error\n"

func diamond() []Task {
	return []Task{
		{ID: "T1", Title: "base", Description: "d", Scope: "a/**"},
		{ID: "T2", Title: "left", Description: "d", Scope: "b/**", Deps: []string{"T1"}},
		{ID: "T3", Title: "right", Description: "d", Scope: "c/**", Deps: []string{"T1"}, ContextFrom: []string{"E1", "T1"}},
		{ID: "T4", Title: "join", Description: "d", Scope: "d/**", Deps: []string{"T2", "T3"}},
	}
}

func TestWavesDiamond(t *testing.T) {
	got, err := Validate("tasks.csv", diamond(), []ExploreRow{{ID: "E1"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"T1": 1, "T2": 2, "T3": 2, "T4": 3}
	for _, task := range got {
		if task.Wave != want[task.ID] {
			t.Errorf("%s wave = %d, want %d", task.ID, task.Wave, want[task.ID])
		}
	}
}

func TestValidateErrors(t *testing.T) {
	cases := []struct {
		name string
		csv  string
		want []string
	}{
		{"duplicate id", "T1,a,d,,,x/**,,,,,,,,,,,\nT1,b,d,,,y/**,,,,,,,,,,,\n",
			[]string{"tasks.csv line 3 (T1), field \"id\": duplicate id T1 (first defined on line 2)"}},
		{"unknown dep", "T1,a,d,,,x/**,,,T9,,,,,,,,\n", []string{"line 2 (T1), field \"deps\": unknown task T9"}},
		{"unknown context", "T1,a,d,,,x/**,,,,E7;T5,,,,,,,\n",
			[]string{"field \"context_from\": unknown exploration E7", "field \"context_from\": unknown task T5"}},
		{"cycle", "T1,a,d,,,x/**,,,,,,,,,,,\nT2,b,d,,,y/**,,,T4,,,,,,,,\nT3,c,d,,,z/**,,,T1,,,,,,,,\nT4,d,d,,,w/**,,,T2,,,,,,,,\n",
			[]string{"dependency cycle: T2 → T4 → T2"}},
		{"overlap", "T1,a,d,,,src/**,,,,,,,,,,,\nT2,b,d,,,src/api/*.go,,,,,,,,,,,\n",
			[]string{"line 3 (T2), field \"scope\": scope \"src/api/*.go\" overlaps T1's scope \"src/**\" in wave 1"}},
		{"empty title and description", "T1, , ,,,x/**,,,,,,,,,,,\n",
			[]string{"field \"title\": title is empty", "field \"description\": description is empty"}},
		{"bad id", "X1,a,d,,,x/**,,,,,,,,,,,\n", []string{"\"X1\" is not a task id"}},
		{"empty scope", "T1,a,d,,,,,,,,,,,,,,\n", []string{"field \"scope\": scope is empty"}},
		{"scope into .git", "T1,a,d,,,x/**,,,,,,,,,,,\nT2,b,d,,,.git/hooks/**,,,,,,,,,,,\n",
			[]string{"tasks.csv line 3 (T2), field \"scope\": scope glob \".git/hooks/**\" reaches into .git"}},
		{"scope out of the repository", "T1,a,d,,,src/**;../**,,,,,,,,,,,\n",
			[]string{"tasks.csv line 2 (T1), field \"scope\": scope glob \"../**\" leaves the repository"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tasks, err := ReadTasks("tasks.csv", []byte(header+c.csv))
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			_, err = Validate("tasks.csv", tasks, nil)
			if err == nil {
				t.Fatal("Validate accepted a bad plan")
			}
			if !IsProblems(err) {
				t.Errorf("error %T is not a validation problem", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestReadTasksMalformed(t *testing.T) {
	cases := []struct{ name, data, want string }{
		{"bare quote", header + "T1,\"a,d\n", "tasks.csv line 2: malformed CSV"},
		{"short row", header + "T1,a,d\n", "tasks.csv line 2: row has 3 fields, header has 17"},
		{"wrong header", "id,name\n", "tasks.csv line 1: column 2 is \"name\", expected \"title\""},
		{"empty", "", "tasks.csv: file is empty"},
		{"bad wave", header + "T1,a,d,,,x/**,,,,,two,,,,,,\n", "tasks.csv line 2 (T1), field \"wave\": \"two\" is not a whole number"},
		{"bad tests_passed", header + "T1,a,d,,,x/**,,,,,,,,,maybe,,\n", "field \"tests_passed\""},
		{"unknown column", strings.TrimSuffix(header, "\n") + ",colour\nT1,a,d,,,x/**,,,,,,,,,,,,red\n", "unknown column \"colour\""},
	}
	for _, c := range cases {
		_, err := ReadTasks("tasks.csv", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	in := diamond()
	in[0].Findings = "has, commas and \"quotes\"\nand a newline"
	in[0].FilesModified = []string{"a/x.go", "a/y.go"}
	in[0].Status = StatusCompleted
	in[0].TestsPassed = "true"
	in[0].InputTokens, in[0].OutputTokens, in[0].CostUSD, in[0].Commit = 1200, 300, 0.0123, "abc123"
	in[0].CacheReadTokens, in[0].CacheWriteTokens = 900, 200
	in[1].Hints = Hints{Tips: "reuse the helper", Files: []string{"a/x.go", "b/y.go"}}
	out, err := ReadTasks("tasks.csv", WriteTasks(in))
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i].Line = out[i].Line
		if in[i].Status == "" {
			in[i].Status = StatusPending
		}
		if fmt.Sprintf("%+v", in[i]) != fmt.Sprintf("%+v", out[i]) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, out[i], in[i])
		}
	}
	if out[1].Line != 4 {
		t.Errorf("T2 read from line %d, want 4 (T1's findings span two lines)", out[1].Line)
	}
	if !strings.Contains(string(WriteTasks(in)), ",reuse the helper || a/x.go;b/y.go,") {
		t.Errorf("the hints cell is not in its documented form:\n%s", WriteTasks(in))
	}
	ex := []ExploreRow{{ID: "E1", Angle: "patterns", Wave: 1, Status: StatusCompleted, Findings: "f", KeyFiles: []string{"a.go"}}}
	back, err := ReadExplore("explore.csv", WriteExplore(ex))
	if err != nil || len(back) != 1 || back[0].KeyFiles[0] != "a.go" || back[0].Status != StatusCompleted {
		t.Fatalf("explore round trip: %+v, %v", back, err)
	}
}

// TestOlderTasksFile: a tasks.csv written before the cache columns
// existed still reads, with no cache tokens; a bad count names its field.
func TestOlderTasksFile(t *testing.T) {
	head := strings.Join(TaskColumns, ",") + ",input_tokens,output_tokens,cost_usd,commit\n"
	row := "T1,t,d,go test,ok,a/**,,,,,1,completed,,,,,,1200,300,0.012,abc\n"
	out, err := ReadTasks("tasks.csv", []byte(head+row))
	if err != nil || len(out) != 1 || out[0].InputTokens != 1200 || out[0].CacheReadTokens != 0 {
		t.Fatalf("older file: %+v, %v", out, err)
	}
	head = strings.Join(append(append([]string{}, TaskColumns...), TaskExtraColumns...), ",") + "\n"
	_, err = ReadTasks("tasks.csv", []byte(head+strings.TrimSuffix(row, "\n")+",many,,\n"))
	if err == nil || !strings.Contains(err.Error(), "cache_read_tokens") || !strings.Contains(err.Error(), "T1") {
		t.Errorf("bad cache count: %v", err)
	}
}

func TestCascadeAndReady(t *testing.T) {
	tasks, err := Validate("tasks.csv", diamond(), []ExploreRow{{ID: "E1"}})
	if err != nil {
		t.Fatal(err)
	}
	ready, wave := Ready(tasks)
	if wave != 1 || len(ready) != 1 || ready[0].ID != "T1" {
		t.Fatalf("Ready = %v wave %d", ready, wave)
	}
	tasks[0].Status = StatusCompleted
	tasks[1].Status = StatusFailed
	changed := Cascade(tasks)
	if len(changed) != 1 || changed[0] != "T4" || tasks[3].Status != StatusSkipped {
		t.Fatalf("Cascade changed %v, T4 is %s", changed, tasks[3].Status)
	}
	ready, wave = Ready(tasks)
	if wave != 2 || len(ready) != 1 || ready[0].ID != "T3" {
		t.Fatalf("Ready after failure = %v wave %d", ready, wave)
	}
	c := Count(tasks)
	if c != (Counts{Total: 4, Completed: 1, Failed: 1, Skipped: 1, Pending: 1}) {
		t.Errorf("Count = %+v", c)
	}
}

func TestPrevContext(t *testing.T) {
	ex := []ExploreRow{{ID: "E1", Angle: "patterns", Status: StatusCompleted, Findings: "uses chi", KeyFiles: []string{"r.go"}}, {ID: "E2", Angle: "testing", Status: StatusFailed}}
	tasks := diamond()
	tasks[0].Status, tasks[0].Findings, tasks[0].FilesModified = StatusCompleted, "added base", []string{"a/b.go"}
	tasks[2].ContextFrom = []string{"E1", "E2", "T1"}
	got := PrevContext(tasks[2], ex, tasks)
	want := "[Explore patterns] uses chi\nFiles: r.go\n\n[Task T1: base] added base\nFiles: a/b.go"
	if got != want {
		t.Errorf("PrevContext =\n%s\nwant\n%s", got, want)
	}
}

func TestHashIgnoresOutputs(t *testing.T) {
	a := diamond()
	b := diamond()
	b[0].Status, b[0].Findings = StatusCompleted, "done"
	b[0], b[1] = b[1], b[0]
	if Hash(a) != Hash(b) {
		t.Error("hash changed with outputs or row order")
	}
	b[2].Scope = "c/x/**"
	if Hash(a) == Hash(b) {
		t.Error("hash did not change when a scope changed")
	}
	if len(ID(Hash(a))) != 10 {
		t.Error("plan id is not 10 characters")
	}
}

func TestCycleErrorType(t *testing.T) {
	_, err := AssignWaves([]Task{{ID: "T1", Deps: []string{"T1"}}})
	var ce *CycleError
	if !errors.As(err, &ce) || ce.Error() != "dependency cycle: T1 → T1" {
		t.Errorf("AssignWaves self-loop error = %v", err)
	}
}
