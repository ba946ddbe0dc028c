package cli

import (
	"bytes"
	"testing"
)

func TestActionLogDefusesCommands(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		writes []string
		want   string
	}{
		{[]string{"plain\n"}, "plain\n"},
		{[]string{"::set-output name=x::y\n"}, "» ::set-output name=x::y\n"},
		{[]string{"  \t::stop-commands::t\n"}, "»   \t::stop-commands::t\n"},
		{[]string{"\u00a0::error::x\n"}, "» \u00a0::error::x\n"},
		{[]string{"##[set-output name=x;]y\n"}, "» ##[set-output name=x;]y\n"},
		{[]string{"a\r::warning::w\n"}, "a\r» ::warning::w\n"},
		{[]string{":", ":add-mask::z\nok\n"}, "» ::add-mask::z\nok\n"}, // split across writes
		{[]string{"T1: failed: x ::not at the start\n"}, "T1: failed: x ::not at the start\n"},
		{[]string{"no newline ::"}, "no newline ::\n"},
	} {
		var out bytes.Buffer
		l := newActionLog(&out, func(string) string { return "" })
		for _, w := range c.writes {
			if _, err := l.Write([]byte(w)); err != nil {
				t.Fatal(err)
			}
		}
		l.close()
		if out.String() != c.want {
			t.Errorf("%q: wrote %q, want %q", c.writes, out.String(), c.want)
		}
	}
}

func TestActionLogGroupsEndLines(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	l := newActionLog(&out, func(string) string { return "" })
	l.group("analyze")
	l.Write([]byte("half a line"))
	l.group("plan") // the started line ends before the command
	l.Write([]byte("planning\n"))
	l.close()
	want := "::group::analyze\nhalf a line\n::endgroup::\n::group::plan\nplanning\n::endgroup::\n"
	if out.String() != want {
		t.Errorf("log = %q, want %q", out.String(), want)
	}
}
