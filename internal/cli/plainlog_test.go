package cli

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestRedTeamDefaultLogDefusesCommands: the process's default logger
// (what parts given no logger write to, such as the sandbox's warning
// when it cannot give a folder back, which names the files a contained
// program made) wrote straight to standard error: a program that named
// a folder "\n::stop-commands::…" or "##[set-output …]" there issued
// workflow commands to the runner and drove the terminal. Its records
// now pass the Action log's filter.
func TestRedTeamDefaultLogDefusesCommands(t *testing.T) {
	t.Parallel()
	made := "/tmp/planex-x/wt/d/d/\n::stop-commands::agent-owned\n\x1b]0;title\a##[set-output name=status;]done\n\u3000::error::forged"
	var buf bytes.Buffer
	log := slog.New(LogHandler(&buf))
	log.Warn("could not give a folder back after the sandbox", "dir", "/tmp/planex-x/wt", "err", errors.New(made+": directories nested too deeply"))
	out := buf.String()
	if !strings.Contains(out, "could not give a folder back") || !strings.Contains(out, "stop-commands::agent-owned") {
		t.Fatalf("the warning is not in the log: %q", out)
	}
	if cs := commands(out); len(cs) > 0 {
		t.Errorf("the runner reads %q as commands in %q", cs, out)
	}
	if strings.ContainsAny(out, "\x1b\a") {
		t.Errorf("a terminal control reached the log: %q", out)
	}
}
