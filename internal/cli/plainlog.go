package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/planexhq/planex/internal/termsafe"
)

// plainHandler writes log records as sentences for a person at a
// terminal ("planex: warning: retrying the model request in 4s (attempt
// 2 of 5: connection refused)") instead of key=value lines with a level
// and a timestamp. A record's attributes follow its message in
// parentheses.
type plainHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Leveler
	attrs []slog.Attr
	group string
}

// LogHandler writes warnings and errors to w as sentences; for the
// process's default logger, which parts given no logger of their own
// write to. Their records can name what agents made (a file's name), so
// what reaches w is filtered as planex's other output is: no control
// character a terminal acts on, and no line a workflow runner reads as
// a command (see actionLog).
func LogHandler(w io.Writer) slog.Handler {
	return newPlainHandler(&actionLog{w: termsafe.NewWriter(w)}, slog.LevelWarn)
}

func newPlainHandler(w io.Writer, level slog.Leveler) *plainHandler {
	return &plainHandler{mu: &sync.Mutex{}, w: w, level: level}
}

func (h *plainHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

func (h *plainHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("planex: ")
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	}
	b.WriteString(r.Message)
	var parts []string
	add := func(a slog.Attr) bool {
		if a.Equal(slog.Attr{}) {
			return true
		}
		key := a.Key
		if h.group != "" {
			key = h.group + "." + key
		}
		parts = append(parts, fmt.Sprintf("%s: %v", key, a.Value.Resolve()))
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	if len(parts) > 0 {
		b.WriteString(" (" + strings.Join(parts, "; ") + ")")
	}
	b.WriteString("\n")
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *plainHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *plainHandler) WithGroup(name string) slog.Handler {
	c := *h
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return &c
}
