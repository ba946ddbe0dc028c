package plan

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestRedTeamTaskUsageForged: tasks.csv's accounting columns are not part
// of the approved plan's hash, and the budget sums them. Whoever can push
// the Action's state ref (or an agent run without the sandbox, which can
// write the session folder) sets a task's cost to -1000000, NaN or -Inf,
// or its tokens below zero or near the int64 limit (two such rows wrap
// the sum negative): every later budget check passed, so a repository's
// max-cost-usd no longer held. Such a tasks.csv is now refused, naming
// the row and the column; an honest one reads.
func TestRedTeamTaskUsageForged(t *testing.T) {
	t.Parallel()
	cases := map[string]Task{
		"a negative cost":              {CostUSD: -1e6},
		"a cost that is no number":     {CostUSD: math.NaN()},
		"a cost of minus infinity":     {CostUSD: math.Inf(-1)},
		"a cost of infinity":           {CostUSD: math.Inf(1)},
		"negative input tokens":        {InputTokens: -5},
		"output tokens near the limit": {OutputTokens: math.MaxInt64 / 2},
		"negative cache tokens":        {CacheReadTokens: -1},
	}
	for name, forged := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			forged.ID, forged.Title, forged.Scope, forged.Wave, forged.Status = "T1", "one", "a/**", 1, StatusCompleted
			data := WriteTasks([]Task{forged, {ID: "T2", Title: "two", Scope: "b/**", Wave: 2, Deps: []string{"T1"}}})
			_, err := ReadTasks("tasks.csv", data)
			var fe *FileError
			if !errors.As(err, &fe) || fe.Row != "T1" || !strings.Contains(err.Error(), "not between 0 and") {
				t.Errorf("ReadTasks = %v, want a refusal of T1's usage", err)
			}
		})
	}
	honest := WriteTasks([]Task{{ID: "T1", Title: "one", Scope: "a/**", Wave: 1, InputTokens: 1200, OutputTokens: 300, CostUSD: 0.42}})
	if tasks, err := ReadTasks("tasks.csv", honest); err != nil || tasks[0].CostUSD != 0.42 {
		t.Errorf("an honest tasks.csv: %v, %v", tasks, err)
	}
}
