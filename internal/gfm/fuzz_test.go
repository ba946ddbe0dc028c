package gfm

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzVisible: Visible only ever removes (its output is no longer than its
// input), leaves valid UTF-8 without invisible characters, and the hidden
// ranges it reports lie inside the source.
func FuzzVisible(f *testing.F) {
	for _, s := range []string{
		"Fix it. <!-- hidden -->", "[//]: # (hidden)", "<script>x</script>y", "![alt](a.png)", `[a](b "title")`,
		`$\color{white}x$`, "$$\\phantom{x}$$", "$`\\color{red}x`$", "```math\n\\phantom{x}\n```", "a\u200bb\U000E0041",
		"> <!--\n> x\n> -->", "&#x200B;", "<details hidden>x</details>", "| a | b |\n|---|---|\n| ![x](y) | $\\kern{1em}$ |",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Visible(s)
		if len(got) > len(s) {
			t.Fatalf("Visible grew %q to %q", s, got)
		}
		if !utf8.ValidString(got) || strings.ContainsFunc(got, Invisible) {
			t.Fatalf("Visible(%q) = %q holds invisible text", s, got)
		}
		d := Parse(s)
		for _, h := range d.hidden {
			if h.start < 0 || h.end > len(d.Source) || h.start >= h.end {
				t.Fatalf("hidden range %v outside %d bytes", h, len(d.Source))
			}
		}
	})
}
