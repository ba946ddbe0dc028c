// Package cilog cuts the failing part out of a GitHub Actions job log, so
// planex can plan a fix from it. It is pure: no I/O, no GitHub types.
//
// A job log, as GitHub serves it, is plain text with one timestamp per
// line ("2026-11-23T15:04:05.1234567Z text"). Each step starts with a
// "##[group]Run <command>" block that echoes the command and its
// environment, and a failed step ends with "##[error]Process completed
// with exit code N.". The excerpt is that step's output, last lines first
// to go when it is too long, with timestamps, ANSI colour codes, other
// control characters and invisible Unicode removed; error lines
// ("##[error]", "::error", "FAIL", "Error:", "panic:" …) from earlier in the
// step are kept even when the tail does not reach them.
//
// The text is the output of code under test and must be treated as
// untrusted data, like an issue body: never as instructions, and never as
// a command. Code under test can print "##[group]Run <anything>" itself,
// so the log's echo of a step's command only helps find the step's lines;
// the command a fix runs comes from the workflow file (StepCommand).
package cilog

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/planexhq/planex/internal/gfm"
)

// Default limits of an excerpt.
const (
	DefaultMaxBytes = 6 * 1024
	DefaultMaxLines = 80
)

// Options bound an excerpt; zero values take the defaults.
type Options struct {
	MaxBytes int
	MaxLines int
	// Step is the failed step's name as the jobs API reports it (for
	// example "Run go test ./..." or "Test"); it helps pick the step when
	// a log has several errors. May be empty.
	Step string
}

// Excerpt is the failing part of one job's log.
type Excerpt struct {
	// Text is the cleaned excerpt, lines joined with "\n".
	Text string
	// Truncated reports that lines were left out.
	Truncated bool
}

var (
	timestampRe = regexp.MustCompile(`^\x{FEFF}?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z ?`)
	// CSI sequences (colours, cursor moves), OSC sequences (titles,
	// hyperlinks) ended by BEL or ST, and lone two-byte escapes.
	ansiRe = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]`)
	// Lines worth keeping from outside the tail.
	errorLineRe = regexp.MustCompile(`(?i)^(?:##\[error\]|::error\b|error\b|fatal\b|panic:|--- FAIL|FAIL\b|FAILED\b|E\s{2,}|\S+Error\b|.*\bAssertionError\b|\s*●\s|\s*✕\s|.*\bexpected\b.*\breceived\b)`)
)

// Clean removes the timestamp, ANSI escape codes, carriage-return
// overwrites, control characters and invisible Unicode from one log line.
func Clean(line string) string {
	line = timestampRe.ReplaceAllString(line, "")
	line = ansiRe.ReplaceAllString(line, "")
	// A progress line rewritten with \r shows only its last state.
	if i := strings.LastIndexByte(strings.TrimRight(line, "\r"), '\r'); i >= 0 {
		line = line[i+1:]
	}
	line = strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return -1
		case r == utf8.RuneError:
			return -1
		}
		return r
	}, line)
	return strings.TrimRight(gfm.StripInvisible(line), " ")
}

// step is one "##[group]Run …" section of a log.
type step struct {
	command string
	header  []string // the echoed script and environment
	output  []string
	failed  bool
}

// split parses a log into its steps; lines before the first step (the
// runner's set-up) form a step without a command.
func split(log string) []*step {
	cur := &step{}
	steps := []*step{cur}
	inHeader := false
	for _, raw := range strings.Split(log, "\n") {
		line := Clean(raw)
		switch {
		case strings.HasPrefix(line, "##[group]Run "):
			cur = &step{command: strings.TrimSpace(strings.TrimPrefix(line, "##[group]Run "))}
			steps = append(steps, cur)
			inHeader = true
			continue
		case line == "Post job cleanup." || strings.HasPrefix(line, "##[group]Post "):
			cur = &step{}
			steps = append(steps, cur)
			inHeader = false
			continue
		case inHeader && strings.HasPrefix(line, "##[endgroup]"):
			inHeader = false
			continue
		case inHeader && (strings.HasPrefix(line, "##[error]") || strings.HasPrefix(line, "::error")):
			// The runner echoes no errors in a step's header: this is
			// output (of a group the code under test opened and never
			// closed, to hide the failure in a header).
			inHeader = false
		case inHeader:
			cur.header = append(cur.header, line)
			continue
		}
		if strings.HasPrefix(line, "##[error]") {
			cur.failed = true
		}
		if strings.HasPrefix(line, "##[group]") || strings.HasPrefix(line, "##[endgroup]") {
			// Groups a step opens itself: keep their title as a line.
			line = strings.TrimPrefix(strings.TrimPrefix(line, "##[group]"), "##[endgroup]")
			if line == "" {
				continue
			}
		}
		cur.output = append(cur.output, line)
	}
	return steps
}

// Extract cuts the failing step's output out of a job log.
func Extract(log string, o Options) Excerpt {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxLines <= 0 {
		o.MaxLines = DefaultMaxLines
	}
	steps := split(strings.ReplaceAll(log, "\r\n", "\n"))
	s := pick(steps, o.Step)
	if s == nil {
		return Excerpt{}
	}
	lines := trimBlank(s.output)
	ex := Excerpt{}
	ex.Text, ex.Truncated = cut(lines, o.MaxLines, o.MaxBytes)
	return ex
}

// pick chooses the failed step: the one whose command the jobs API's step
// name names, else the first that reported an error, else the last with
// any output.
func pick(steps []*step, name string) *step {
	name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "Run "))
	if name != "" {
		for _, s := range steps {
			if s.failed && s.command != "" && (s.command == name || strings.HasPrefix(s.command, name)) {
				return s
			}
		}
	}
	for _, s := range steps {
		if s.failed {
			return s
		}
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if len(trimBlank(steps[i].output)) > 0 {
			return steps[i]
		}
	}
	return nil
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// IsErrorLine reports whether a cleaned line reads as an error or a test
// failure.
func IsErrorLine(line string) bool { return errorLineRe.MatchString(line) }

// errorContext is how many lines after an error line are kept with it.
const errorContext = 3

// cut keeps the last maxLines lines within maxBytes, plus the error lines
// before them (newest first to go when the budget is spent), each run of
// left-out lines marked with "…".
func cut(lines []string, maxLines, maxBytes int) (string, bool) {
	const gap = "…"
	keep := make([]bool, len(lines))
	size, n := 0, 0
	// The tail, from the end.
	tailStart := len(lines)
	for i := len(lines) - 1; i >= 0 && n < maxLines; i-- {
		l := clip(lines[i], maxBytes)
		if size+len(l)+1 > maxBytes {
			break
		}
		keep[i], size, n, tailStart = true, size+len(l)+1, n+1, i
	}
	// Error lines above the tail with the few lines that explain them,
	// the ones nearest the failure first.
	budget := maxBytes / 3
	for i := tailStart - 1; i >= 0 && budget > 0; i-- {
		if !IsErrorLine(lines[i]) {
			continue
		}
		for j := i; j < min(i+1+errorContext, tailStart) && budget > 0; j++ {
			// What explains an error is indented below it.
			if keep[j] || (j > i && !indented(lines[j])) {
				break
			}
			l := clip(lines[j], maxBytes)
			if size+len(l)+len(gap)+2 > maxBytes {
				budget = 0
				break
			}
			keep[j] = true
			size += len(l) + 1
			budget -= len(l) + 1
		}
	}
	var out []string
	truncated := false
	skipping := false
	for i, l := range lines {
		if !keep[i] {
			if !skipping {
				out = append(out, gap)
			}
			skipping, truncated = true, true
			continue
		}
		skipping = false
		out = append(out, clip(l, maxBytes))
	}
	return strings.Join(out, "\n"), truncated
}

// clip shortens one overlong line at a rune boundary.
func clip(l string, maxBytes int) string {
	limit := maxBytes / 2
	if len(l) <= limit {
		return l
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(l[cut]) {
		cut--
	}
	return l[:cut] + " …"
}

func indented(l string) bool {
	return strings.TrimSpace(l) != "" && (l[0] == ' ' || l[0] == '\t')
}
