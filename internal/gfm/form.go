package gfm

import (
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
			for _, u := range Fetched([]byte(n.Value)) {
				found.add(u)
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
