package engine

import (
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/plan"
)

func TestSettingsNote(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		tasks []plan.Task
		want  string // "" for no note
	}{
		{"wide scopes only", []plan.Task{{ID: "T1", Scope: "**"}, {ID: "T2", Scope: ".github/**"}}, ""},
		{"named by two", []plan.Task{{ID: "T1", Scope: "src/**;.github/planex.yml"}, {ID: "T2", Scope: "docs/**"}, {ID: "T3", Scope: ".github/planex.yml"}},
			"warning: T1, T3 may change .github/planex.yml"},
	}
	for _, c := range cases {
		got := settingsNote(c.tasks)
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: settingsNote = %q, want %q…", c.name, got, c.want)
		}
	}
}
