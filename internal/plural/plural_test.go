package plural

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n         int
		one, many string
		want      string
	}{
		{0, "task", "tasks", "0 tasks"},
		{1, "task", "tasks", "1 task"},
		{2, "task", "tasks", "2 tasks"},
		{1, "was skipped", "were skipped", "1 was skipped"},
		{3, "was skipped", "were skipped", "3 were skipped"},
		{-1, "step", "steps", "-1 steps"},
	} {
		if got := Count(c.n, c.one, c.many); got != c.want {
			t.Errorf("Count(%d, %q, %q) = %q, want %q", c.n, c.one, c.many, got, c.want)
		}
	}
	if Word(1, "is", "are") != "is" || Word(4, "is", "are") != "are" {
		t.Error("Word picks the wrong form")
	}
}
