package cli

import (
	"bytes"
	"io"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/sethvargo/go-githubactions"

	"github.com/planexhq/planex/internal/termsafe"
)

// actionLog is the Action step's log (stdout). planex's own workflow
// commands (groups, annotations, masks) go through gha as they are; all
// other text, which can quote what agents wrote (a task's error, a
// finding), goes through Write, where a line the runner would take for a
// workflow command is defused: an agent must not end planex's groups,
// stop its commands or set its outputs.
type actionLog struct {
	gha *githubactions.Action

	mu   sync.Mutex
	w    io.Writer
	line []byte // the start of a line, written when it ends
	open bool   // a group is open
}

func newActionLog(w io.Writer, getenv func(string) string) *actionLog {
	l := &actionLog{w: w}
	l.gha = githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(commandWriter{l}))
	return l
}

// Write writes text, line by line. The runner ends lines at \r as well
// as \n, but no \r is written (emit drops it with the other controls),
// so lines end at \n only. The runner reads a line as a command in two ways (actions/runner's
// ActionCommand): when, after leading white space (any Unicode space, as
// .NET's TrimStart drops it), it starts with "::"; and when "##[" occurs
// anywhere in it, followed by a registered command's name and "]" (the
// old form, found by IndexOf, not only at the start).
func (l *actionLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.line = append(l.line, p...)
	for {
		i := bytes.IndexByte(l.line, '\n')
		if i < 0 {
			return len(p), nil
		}
		if err := l.emit(l.line[:i+1]); err != nil {
			return 0, err
		}
		l.line = l.line[i+1:]
	}
}

// emit writes one line as the runner will read it: without the control
// characters the terminal filter below drops anyway (so a byte dropped
// there cannot join "#", "#" and "[" or uncover a "::" at the start),
// every "##[" broken up, and a "» " before a line that starts with "::"
// after white space.
func (l *actionLog) emit(line []byte) error {
	line = dropControls(line)
	line = bytes.ReplaceAll(line, []byte("##["), []byte("## ["))
	if looksLikeCommand(line) {
		line = append([]byte("» "), line...)
	}
	_, err := l.w.Write(line)
	return err
}

// dropControls removes what termsafe drops (C0 controls but tab and
// newline, DEL, C1), keeping invalid UTF-8 as it is.
func dropControls(line []byte) []byte {
	out := line[:0:0]
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRune(line[i:])
		if (r == utf8.RuneError && n == 1) || !termsafe.Drops(r) {
			out = append(out, line[i:i+n]...)
		}
		i += n
	}
	return out
}

func looksLikeCommand(line []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeftFunc(line, unicode.IsSpace), []byte("::"))
}

// flush ends a started line, so that a command written next starts a
// line of its own.
func (l *actionLog) flush() {
	if len(l.line) > 0 {
		l.emit(append(l.line, '\n'))
		l.line = nil
	}
}

// group starts a log group (ending the one open): one per phase.
func (l *actionLog) group(name string) {
	l.endGroup()
	l.gha.Group(name)
	l.mu.Lock()
	l.open = true
	l.mu.Unlock()
}

func (l *actionLog) endGroup() {
	l.mu.Lock()
	open := l.open
	l.open = false
	l.mu.Unlock()
	if open {
		l.gha.EndGroup()
	}
}

// close ends the open group and any started line.
func (l *actionLog) close() {
	l.endGroup()
	l.mu.Lock()
	l.flush()
	l.mu.Unlock()
}

// commandWriter is where gha writes planex's own commands: after any
// started line of text, as they are.
type commandWriter struct{ l *actionLog }

func (c commandWriter) Write(p []byte) (int, error) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	c.l.flush()
	return c.l.w.Write(p)
}
