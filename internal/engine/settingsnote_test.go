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

func TestConfigNote(t *testing.T) {
	t.Parallel()
	if got := configNote([]plan.Task{{ID: "T1", Scope: "**"}, {ID: "T2", Scope: ".github/**"}}); got != "" {
		t.Errorf("wide scopes get a note: %q", got)
	}
	got := configNote([]plan.Task{{ID: "T1", Scope: "src/**"}, {ID: "T2", Scope: ".github/actions/setup/**"}, {ID: "T3", Scope: "CODEOWNERS"}})
	if !strings.HasPrefix(got, "warning: T2, T3 may change local actions (.github/actions/)") {
		t.Errorf("configNote = %q", got)
	}
}

func TestGuidanceNote(t *testing.T) {
	t.Parallel()
	if got := guidanceNote([]plan.Task{{ID: "T1", Scope: "**"}, {ID: "T2", Scope: "docs/**"}}); got != "" {
		t.Errorf("wide scopes get a note: %q", got)
	}
	got := guidanceNote([]plan.Task{{ID: "T1", Scope: "src/**"}, {ID: "T2", Scope: "AGENTS.md"}, {ID: "T3", Scope: ".claude/**"}})
	if !strings.HasPrefix(got, "warning: T2, T3 may change what coding agents read as the repository's guidance") {
		t.Errorf("guidanceNote = %q", got)
	}
	got = guidanceNote([]plan.Task{{ID: "T1", Scope: "**"}, {ID: "T2", Scope: ".husky/*"}, {ID: "T3", Scope: ".vscode/tasks.json"}})
	if !strings.HasPrefix(got, "warning: T2, T3 may change") || !strings.Contains(got, "files developers' tools run on their own") {
		t.Errorf("guidanceNote for git hooks and VS Code tasks = %q", got)
	}
}
