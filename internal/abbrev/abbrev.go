// Package abbrev shortens text for places that show one line: log lines,
// errors in a CSV cell, titles, commit ids in reports. Everything that
// cuts or folds text for display does it here, so every place cuts the
// same way.
package abbrev

import (
	"strings"
	"unicode"
)

// shaLen is how much of a commit id planex shows: enough to be unique in
// any repository it is likely to meet.
const shaLen = 10

// SHA abbreviates a commit id to its first ten characters, and ends it
// at its first character that is no hex digit: ids planex shows may come
// from a state ref or a plan file whoever can push wrote, and are shown
// in code spans and replies, where a backtick, a bracket or a line break
// of theirs would be markup.
func SHA(sha string) string {
	for i := 0; i < len(sha) && i < shaLen; i++ {
		if !isHexDigit(sha[i]) {
			return sha[:i]
		}
	}
	return sha[:min(len(sha), shaLen)]
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// OneLine folds every run of white space, line breaks included, into one
// space and trims both ends.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// FirstLine returns the first line of s once surrounding white space is
// trimmed.
func FirstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// Truncate cuts s to at most n characters (runes, never inside one),
// ending a cut text with "…".
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return string(r[:max(n, 0)])
	}
	return string(r[:n-1]) + "…"
}

// PlainLine puts text on one line for plain-text output (a terminal, or a
// code block in a comment): white space collapses and control characters,
// escape sequences' ESC among them, are dropped.
func PlainLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, OneLine(s))
}
