package gfm

import (
	"encoding/base64"
	"strings"

	"gopkg.in/yaml.v3"
)

// FetchedForm is Fetched for an issue or discussion form
// (.github/ISSUE_TEMPLATE/*.yml): GitHub shows the Markdown of its
// markdown elements, and of its labels and descriptions, to whoever opens
// a new issue or discussion, and its image proxy fetches the images. Every
// text value of the YAML is read as Markdown (keys and values alike, an
// anchor's once). Text that is not YAML counts every absolute address it
// holds, as FetchedAny.
func FetchedForm(src []byte) []string {
	var doc yaml.Node
	if yaml.Unmarshal(src, &doc) != nil {
		return FetchedAny(src)
	}
	var found addresses
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			for _, text := range formTexts(n) {
				for _, u := range Fetched(text) {
					found.add(u)
				}
			}
		}
		// An alias is walked where its anchor is.
		if n.Kind != yaml.AliasNode {
			for _, c := range n.Content {
				walk(c)
			}
		}
	}
	walk(&doc)
	return found.list
}

// formTexts are the texts a form's scalar n may give GitHub: its value
// as written and, for a value tagged !!binary, the bytes its base64
// decodes to, which YAML hands GitHub as the string.
func formTexts(n *yaml.Node) [][]byte {
	out := [][]byte{[]byte(n.Value)}
	if n.ShortTag() != "!!binary" {
		return out
	}
	b64 := strings.Join(strings.Fields(n.Value), "")
	if dec, err := base64.StdEncoding.DecodeString(b64); err == nil {
		out = append(out, dec)
	} else if dec, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(b64, "=")); err == nil {
		out = append(out, dec)
	}
	return out
}
