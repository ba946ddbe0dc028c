package md

import (
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/render/md/mdtest"
)

// FuzzText: whatever an agent writes, Text gives one paragraph at most
// that opens no HTML, makes no link, image or task item, pings nobody, and
// (for text without code spans) parses back to the same text, as cleaned,
// once the zero-width joiners are taken out.
func FuzzText(f *testing.F) {
	for _, s := range []string{
		"Fixes https://github.com/o/r/issues/1", "@octocat <!-- x --> #12 GH-3 o/r#4", "**a** _b_ ~c~ [x](y) ![i](j)",
		"- [ ] task", "# heading", "1. item", "| a | b |", "$x$ and $$y$$", "&lt;b&gt; &#64;user", "/planex approve x",
		"www.example.com", "a\\", "`code` ``x``", "<https://x.example>", "line\nbreak\r\nand\u2028more",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if strings.Contains(out, "\n") {
			t.Fatalf("Text(%q) = %q spans lines", s, out)
		}
		doc, err := mdtest.Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		if probs := doc.Problems(mdtest.Rules{}); len(probs) > 0 {
			t.Fatalf("Text(%q) = %q: %v", s, out, probs)
		}
		paras := doc.Paragraphs()
		if len(paras) > 1 {
			t.Fatalf("Text(%q) = %q makes %d paragraphs", s, out, len(paras))
		}
		if strings.Contains(s, "`") {
			return // code spans render without their backticks
		}
		want := collapse(clean(s))
		got := ""
		if len(paras) == 1 {
			got = strings.ReplaceAll(paras[0], zwj, "")
		}
		if got != strings.ReplaceAll(want, zwj, "") {
			t.Fatalf("Text(%q) = %q reads %q, want %q", s, out, got, want)
		}
	})
}

// FuzzCodeBlock: no content closes its block early or changes when read
// back (beyond the defused comment openers and slash commands).
func FuzzCodeBlock(f *testing.F) {
	for _, s := range []string{"```\nx\n```", "~~~", "a\n````\nb", "<!-- marker -->", "\r\n\t", "/A", "x\n /planex approve 1"} {
		f.Add("text", s)
	}
	f.Fuzz(func(t *testing.T, info, s string) {
		out := CodeBlock(info, s)
		doc, err := mdtest.Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(doc.HTMLNodes()) > 0 {
			t.Fatalf("CodeBlock(%q) opens HTML", s)
		}
		want := defuseCommands(defuseComments(clean(s)))
		if want != "" && !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		var lang string
		for _, r := range info {
			if r < 0x80 && (isAlnum(byte(r)) || r == '-' || r == '_' || r == '+') {
				lang += string(r)
			}
		}
		blocks := doc.CodeBlocks(lang)
		if len(blocks) != 1 || blocks[0] != want {
			t.Fatalf("CodeBlock(%q, %q) = %q reads back %q", info, s, out, blocks)
		}
	})
}
