package cilog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzExtract: whatever the code under test prints, the excerpt stays
// within its bounds (bytes, and lines plus the kept error lines) and holds
// no control character but tab and newline.
func FuzzExtract(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.log"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b), "Run go test ./...", 0, 0)
		}
	}
	f.Add("##[group]Run x\n::error::y\n##[error]z\n", "Run x", 100, 3)
	f.Add("\x1b]0;title\x07a\rb\x9bc\n", "", 1, 1)
	f.Fuzz(func(t *testing.T, log, step string, maxBytes, maxLines int) {
		maxBytes, maxLines = maxBytes%(64<<10), maxLines%500
		ex := Extract(log, Options{Step: step, MaxBytes: maxBytes, MaxLines: maxLines})
		limit := maxBytes
		if limit <= 0 {
			limit = DefaultMaxBytes
		}
		if len(ex.Text) > limit+8 {
			t.Fatalf("excerpt of %d bytes over the bound %d", len(ex.Text), limit)
		}
		if !utf8.ValidString(ex.Text) || strings.ContainsFunc(ex.Text, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 }) {
			t.Fatalf("excerpt keeps a control character: %q", ex.Text)
		}
	})
}

// FuzzStepCommand: a command read from a workflow file is one plain line
// of bounded length without expressions, or there is none.
func FuzzStepCommand(f *testing.F) {
	f.Add(testWorkflow, "test", "Run go test ./...")
	f.Add(testWorkflow, "Build x", "Compile")
	f.Add("jobs:\n  a:\n    steps:\n      - run: &x echo\n      - run: *x\n", "a", "Run echo")
	f.Add("jobs: {a: {name: '${{ x }}${{ y }}', steps: [{run: ls}]}}", "ab", "Run ls")
	f.Fuzz(func(t *testing.T, src, job, step string) {
		c, err := StepCommand([]byte(src), job, step)
		if err != nil {
			if c != "" {
				t.Fatalf("an error with a command %q", c)
			}
			return
		}
		if c == "" || len(c) > 200+len("cd  && ")+len(src) || strings.ContainsAny(c, "\n\r`\x00") || strings.Contains(c, "${{") {
			t.Fatalf("command %q is not one plain line", c)
		}
	})
}
