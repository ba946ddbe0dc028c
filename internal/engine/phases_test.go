package engine

import (
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/agent"
)

func TestAngleSelection(t *testing.T) {
	cases := []struct {
		req, kind string
	}{
		{"Refactor the storage layer into modules", "architecture"},
		{"Check permission before deleting a project", "security"},
		{"Search is slow; add a cache", "performance"},
		{"Fix the crash when the config is empty", "bugfix"},
		{"Add dark mode", "feature"},
	}
	for _, c := range cases {
		if got := guessType(c.req); got != c.kind {
			t.Errorf("guessType(%q) = %s, want %s", c.req, got, c.kind)
		}
	}
	counts := []struct {
		complexity string
		proposed   int
		want       int
	}{
		{"Low", 3, 1}, {"Low", 0, 1}, {"Medium", 1, 2}, {"Medium", 3, 3}, {"Medium", 4, 3}, {"High", 1, 3}, {"High", 4, 4}, {"", 0, 2},
	}
	for _, c := range counts {
		if got := angleCount(c.complexity, c.proposed); got != c.want {
			t.Errorf("angleCount(%q, %d) = %d, want %d", c.complexity, c.proposed, got, c.want)
		}
	}
	angles := fallbackAngles("Fix the crash\nmore text", "bugfix", 4)
	if len(angles) != 4 || angles[0].ID != "E1" || angles[3].Angle != "edge-cases" || !strings.Contains(angles[0].Description, "Fix the crash") || strings.Contains(angles[0].Description, "more text") {
		t.Errorf("fallbackAngles = %+v", angles)
	}
	kind, names := PresetAngles("make the API faster", 2)
	if kind != "performance" || strings.Join(names, ",") != "performance,bottlenecks" {
		t.Errorf("PresetAngles = %s %v", kind, names)
	}
	d := dedupeAngles([]agent.Angle{{Angle: "testing"}, {Angle: " Testing "}, {Angle: ""}, {Angle: "patterns"}})
	if len(d) != 2 {
		t.Errorf("dedupeAngles kept %d", len(d))
	}
}

func TestTasksFromPlan(t *testing.T) {
	tasks := TasksFromPlan(agent.PlanResult{Tasks: []agent.PlannedTask{{ID: "T1", Title: "x", Description: "y", Scope: "a/**", Deps: []string{}, ContextFrom: []string{"E1"}}}})
	if len(tasks) != 1 || tasks[0].Status != "pending" || tasks[0].ContextFrom[0] != "E1" || tasks[0].Scope != "a/**" {
		t.Errorf("TasksFromPlan = %+v", tasks)
	}
}
