package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/sethvargo/go-githubactions"

	"github.com/planexhq/planex/internal/action"
)

// logLines splits a step's log the way the runner does: at \n and at \r.
func logLines(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
}

// commands lists the lines the runner would read as workflow commands, as
// actions/runner's ActionCommand parses them (whatever the command's
// name): after leading white space (.NET's TrimStart, every Unicode
// space) a "::" with a second "::" after it; or, anywhere in the line, a
// "##[" with a "]" after it (TryParse finds it by IndexOf). Each is given
// from where the runner starts reading it.
func commands(log string) []string {
	var out []string
	for _, l := range logLines(log) {
		t := strings.TrimLeftFunc(l, unicode.IsSpace)
		if strings.HasPrefix(t, "::") && strings.Contains(t[2:], "::") {
			out = append(out, t)
			continue
		}
		if i := strings.Index(l, "##["); i >= 0 && strings.Contains(l[i:], "]") {
			out = append(out, l[i:])
		}
	}
	return out
}

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
		{[]string{"##[set-output name=x;]y\n"}, "## [set-output name=x;]y\n"},
		{[]string{"a\r::warning::w\n"}, "a::warning::w\n"}, // \r is dropped: no line starts at it
		// The runner finds "##[" anywhere in a line (IndexOf), not only at its start.
		{[]string{"T1 failed: gave up ##[stop-commands]agent\n"}, "T1 failed: gave up ## [stop-commands]agent\n"},
		{[]string{"x ###[set-output name=status;]done ##[error]y\n"}, "x ### [set-output name=status;]done ## [error]y\n"},
		// A control the terminal filter drops joins what it separated.
		{[]string{"x #\x01#[stop-commands]t\n"}, "x ## [stop-commands]t\n"},
		{[]string{"#\r#[stop-commands]t\n"}, "## [stop-commands]t\n"},
		{[]string{"\x1b::stop-commands::t\n"}, "» ::stop-commands::t\n"},
		{[]string{"\u0085::stop-commands::t\n"}, "» ::stop-commands::t\n"},
		// .NET's TrimStart drops every Unicode space before "::".
		{[]string{"\u3000::stop-commands::t\n"}, "» \u3000::stop-commands::t\n"},
		{[]string{"\u2003\u2028\u205f::error::x\n"}, "» \u2003\u2028\u205f::error::x\n"},
		{[]string{"\u200b::error::x\n"}, "\u200b::error::x\n"},         // no space to .NET either
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
		if cs := commands(out.String()); len(cs) > 0 {
			t.Errorf("%q: the runner reads %q as commands", c.writes, cs)
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

// A value holding a line break and the toolkit's delimiter (a forged
// record's session id) set outputs of its own in $GITHUB_OUTPUT, as the
// runner reads the file; such a value is left unset, and the log says so.
func TestRedTeamOutputValueCannotSetOutputs(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "output")
	gha := githubactions.New(githubactions.WithGetenv(func(k string) string {
		if k == "GITHUB_OUTPUT" {
			return file
		}
		return ""
	}))
	var log bytes.Buffer
	setOutput(gha, &log, "session-id", "7-x\n_GitHubActionsFileCommandDelimeter_\nmatrix<<_GitHubActionsFileCommandDelimeter_\n{\"include\":[{\"task\":\"T9\"}]}")
	setOutput(gha, &log, "status", "planned")
	got := readOutputs(file)
	if len(got) != 1 || got["status"] != "planned" {
		t.Errorf("outputs set: %q", got)
	}
	if !strings.Contains(log.String(), "output session-id left unset") {
		t.Errorf("the log does not say so: %q", log.String())
	}
}

// TestWriteOutputsOutsideARunner: the toolkit panics when it cannot open
// the file an output goes to, and planex run as an Action step outside a
// runner (no GITHUB_OUTPUT), or given a path it cannot write, ended in a
// Go panic instead of its report. Neither panics now: with no
// GITHUB_OUTPUT the log says no output is written; with a path that
// cannot be opened it names each output left out.
func TestWriteOutputsOutsideARunner(t *testing.T) {
	t.Parallel()
	o := action.Outputs{SessionID: "1-x", PlanID: "0123456789", Status: action.StatusFailed}
	for _, c := range []struct {
		name, file, want string
	}{
		{"no GITHUB_OUTPUT", "", "GITHUB_OUTPUT is not set"},
		{"a folder that is gone", filepath.Join(t.TempDir(), "gone", "output"), "output status not written"},
	} {
		getenv := func(k string) string {
			if k == "GITHUB_OUTPUT" {
				return c.file
			}
			return ""
		}
		gha := githubactions.New(githubactions.WithGetenv(getenv))
		var log bytes.Buffer
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: writing the outputs panicked: %v", c.name, p)
				}
			}()
			writeOutputs(gha, &log, getenv, o)
		}()
		if !strings.Contains(log.String(), c.want) {
			t.Errorf("%s: log = %q, want it to say %q", c.name, log.String(), c.want)
		}
	}
}
