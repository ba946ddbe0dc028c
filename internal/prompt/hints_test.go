package prompt

import (
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/plan"
)

// TestExecutePromptShowsHints: the execute prompt shows a task's tips and
// its files to read first, each part only when there is one.
func TestExecutePromptShowsHints(t *testing.T) {
	t.Parallel()
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		hints      plan.Hints
		want, nope []string
	}{
		{plan.Hints{Tips: "reuse the helper", Files: []string{"a/x.go", "b/y.go"}}, []string{"Hints:", "reuse the helper\nFiles to read first: a/x.go, b/y.go"}, []string{"||"}},
		{plan.Hints{Tips: "only a tip"}, []string{"Hints:", "only a tip"}, []string{"Files to read first"}},
		{plan.Hints{Files: []string{"c.go"}}, []string{"Hints:", "<data>\nFiles to read first: c.go\n</data>"}, nil},
		{plan.Hints{}, nil, []string{"Hints:", "Files to read first"}},
	}
	for _, c := range cases {
		got, err := s.Execute(Common{Requirement: "r"}, plan.Task{ID: "T1", Title: "t", Description: "d", Hints: c.hints}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: the prompt lacks %q:\n%s", c.hints, w, got)
			}
		}
		for _, n := range c.nope {
			if strings.Contains(got, n) {
				t.Errorf("%+v: the prompt has %q:\n%s", c.hints, n, got)
			}
		}
	}
}
