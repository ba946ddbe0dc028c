package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// terminalControls are the bytes that would let printed text act on the
// terminal: ESC (CSI, OSC 52 clipboard writes, window titles), BEL, a
// carriage return that rewrites the line shown, and C1's CSI.
var terminalControls = []string{"\x1b", "\x07", "\r", "\b", "\u009b"}

func assertNoTerminalControls(t *testing.T, what, out string) {
	t.Helper()
	for _, c := range terminalControls {
		if strings.Contains(out, c) {
			t.Errorf("%s passed %q to the terminal:\n%q", what, c, out)
		}
	}
}

// TestRedTeamAgentCannotDriveTheTerminal: an agent names an angle, titles
// a task and reports its failure with escape sequences (clearing the
// screen, setting the window title, writing the clipboard through OSC 52,
// rewriting a printed line), and prints them from its task script too.
// planex prints its progress, the failure and the status without any of
// them, yet still shows the text around them.
func TestRedTeamAgentCannotDriveTheTerminal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	analyze, _ := json.Marshal(map[string]any{"type": "feature", "complexity": "Medium", "angles": []map[string]string{
		{"id": "E1", "angle": "pat\x1b[2Jterns", "description": "find patterns", "focus": "code"},
	}})
	f.write(f.fake, "analyze.json", string(analyze))
	f.setPlan(task{ID: "T1", Title: "tidy \x1b]0;owned\x07 up", Scope: "a/**"}, task{ID: "T2", Title: "fine\rforged title", Scope: "b/**"})
	// The text goes into the agent's JSON answer as it is: JSON escapes.
	f.write(f.fake, "T1.fail", `gave up \u001b]52;c;ZXZpbA==\u0007 then \u009b2J cleared \r all is well`)
	f.write(f.fake, "T1.sh", `printf '\033[2J\033]52;c;ZXZpbA==\007'; printf '\033]0;owned\007\r' >&2`+"\n")
	out, errOut, code := f.planex("-y", "-v", "tidy things")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (T1 failed)\n%s\n%s", code, out, errOut)
	}
	assertNoTerminalControls(t, "the run's output", out)
	assertNoTerminalControls(t, "the run's errors", errOut)
	// The agent's answers are cleaned when planex reads them (sequences
	// removed whole); what is left is printed.
	for _, want := range []string{"T1: started (tidy  up)", "T1: failed: gave up  then  cleared", "explore E1 (patterns)", "T2: started (fineforged title)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	st, stErr, _ := f.planex("status")
	assertNoTerminalControls(t, "status", st+stErr)
	if !strings.Contains(st, "tidy up") {
		t.Errorf("status lacks the task's title:\n%s", st)
	}
}

// TestRedTeamFileNamesCannotDriveTheTerminal: a file whose name carries
// escape sequences (one an agent's task could have committed) is printed
// by locate and explore quoted with Go's escapes, so the line still names
// the file exactly and the terminal is left alone.
func TestRedTeamFileNamesCannotDriveTheTerminal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	evil := "evil\x1b]52;c;ZXZpbA==\x07\x1b[2J.py"
	f.write(f.repo, evil, "def rate_limit(key):\n    return True\n")
	f.git("add", ".")
	f.git("commit", "-qm", "code")
	quoted := `"evil\x1b]52;c;ZXZpbA==\a\x1b[2J.py"`
	out, errOut, code := f.planex("locate", "--explain", "rate_limit is broken")
	if code != 0 {
		t.Fatalf("locate: exit %d\n%s\n%s", code, out, errOut)
	}
	assertNoTerminalControls(t, "locate", out+errOut)
	if !strings.HasPrefix(out, quoted+"\n") {
		t.Errorf("locate did not print the file first, quoted as %s:\n%s", quoted, out)
	}
	out, errOut, code = f.planex("explore", "rate_limit is broken")
	if code != 0 {
		t.Fatalf("explore: exit %d\n%s\n%s", code, out, errOut)
	}
	assertNoTerminalControls(t, "explore", out+errOut)
	if !strings.Contains(out, " 1. "+quoted+"\n") {
		t.Errorf("explore's ranked list lacks %s:\n%s", quoted, out)
	}
}
