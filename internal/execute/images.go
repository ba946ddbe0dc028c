package execute

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/planexhq/planex/internal/egress"
	"github.com/planexhq/planex/internal/gfm"
	"github.com/planexhq/planex/internal/gitrepo"
)

// Images a change adds to a file GitHub renders are fetched by GitHub's
// image proxy from their hosts, query and all, whenever someone views
// the file (the pull request's rich diff, the branch, the merged
// README): an address is a way out of a contained network that the
// proxy never sees. An agent steered by what it read (a file of the
// repository, a page of an allowed host) could put what it may read, a
// private repository's code, into such an address. So where the network
// is contained, an image from a host that is neither GitHub's own nor
// allowed is held like a change outside the scope.

// maxRendered is the most of a rendered file planex reads for its
// images: GitHub renders previews of files under about 2 MB.
const maxRendered = 4 << 20

// maxImageFindings bounds how many files outsideImages names.
const maxImageFindings = 20

// renderedFinder returns the function that finds the images GitHub
// fetches for a file named name, or nil for a file GitHub shows as text.
// GitHub renders a file in the markup Linguist gives it, by its name.
func renderedFinder(name string) func([]byte) []string {
	lower := strings.ToLower(name)
	if path.Base(lower) == "contents.lr" {
		return gfm.Fetched
	}
	if formTemplate(lower) {
		return gfm.FetchedForm
	}
	if strings.HasSuffix(lower, ".rst.txt") || strings.HasSuffix(lower, ".rest.txt") {
		return gfm.FetchedMarkup
	}
	switch path.Ext(lower) {
	case ".md", ".markdown", ".mdown", ".mdwn", ".mkd", ".mkdn", ".mkdown", ".ronn", ".workbook", ".livemd", ".scd",
		".mdx", ".litcoffee": // github/markup renders MDX and Literate CoffeeScript as Markdown
		return gfm.Fetched
	case ".rst", ".rest", ".adoc", ".asciidoc", ".asc":
		return gfm.FetchedMarkup
	case ".textile", ".rdoc", ".org", ".creole", ".mediawiki", ".wiki", ".pod", ".pod6":
		return gfm.FetchedAny
	case ".ipynb":
		return gfm.FetchedNotebook
	}
	return nil
}

// formTemplate says whether the file named lower (in lower case) is an
// issue or discussion form, whose Markdown GitHub shows to whoever opens
// a new issue or discussion: YAML in a folder ISSUE_TEMPLATE or
// DISCUSSION_TEMPLATE (.github's, or the top's and docs' of an
// organization's .github repository).
func formTemplate(lower string) bool {
	switch path.Ext(lower) {
	case ".yml", ".yaml":
	default:
		return false
	}
	dir := path.Base(path.Dir(lower))
	return dir == "issue_template" || dir == "discussion_template"
}

// finderFor is renderedFinder for the file name holding data: Linguist
// reads a Vim or Emacs modeline in a file's first or last five lines
// before its name, so "vim: ft=markdown" makes notes.txt Markdown.
func finderFor(name string, data []byte) func([]byte) []string {
	if f := modelineFinder(data); f != nil {
		return f
	}
	return renderedFinder(name)
}

// modeline finds a line that is a Vim or Emacs modeline, and
// modelineMarkup a markup GitHub renders named in one (looser than
// Linguist: any such word in the line counts).
var (
	modeline       = regexp.MustCompile(`(?i)-\*-.*-\*-|(?:^|\s)(?:vi|vim|ex)(?:[<=>]?\d+)?:`)
	modelineMarkup = regexp.MustCompile(`(?i)\b(markdown|md|pandoc|rst|restructuredtext|asciidoc|adoc|org|textile|rdoc|creole|mediawiki|wiki|pod6?)\b`)
)

// modelineFinder is the finder for the markup a modeline in data's first
// or last five lines names, or nil.
func modelineFinder(data []byte) func([]byte) []string {
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return nil // binary, as git and Linguist judge it
	}
	for _, l := range edgeLines(data, 5) {
		if !modeline.Match(l) {
			continue
		}
		if m := modelineMarkup.FindSubmatch(l); m != nil {
			switch strings.ToLower(string(m[1])) {
			case "markdown", "md", "pandoc":
				return gfm.Fetched
			}
			return gfm.FetchedAny
		}
	}
	return nil
}

// githubHost says whether h serves GitHub's own content (what it
// fetches there nobody else reads in a log). Only the hosts that serve
// what is stored on GitHub are: not every name under githubusercontent.com
// is one. camo.githubusercontent.com, GitHub's image proxy, fetches the
// address its path spells (with a signature anyone obtains by posting
// that image in a comment), so a set of addresses made beforehand for
// a host of the attacker's is a way out too. Pages sites (github.io)
// are their owners' and do not count either.
func githubHost(h string) bool {
	if h == "github.com" || strings.HasSuffix(h, ".githubassets.com") {
		return true
	}
	name, ok := strings.CutSuffix(h, ".githubusercontent.com")
	return ok && githubContentHost(strings.TrimRight(name, "0123456789"))
}

// githubContentHost says whether name, under githubusercontent.com,
// serves what people stored on GitHub (a number after one, avatars2, is
// the same host): files of repositories and gists, uploaded images and
// attachments, release assets, large files, avatars.
func githubContentHost(name string) bool {
	switch name {
	case "raw", "gist", "user-images", "private-user-images", "cloud", "objects", "media", "avatars", "repository-images":
		return true
	}
	return false
}

// countedDownload says whether the image at u, on host h, is a release's
// asset on github.com (…/releases/download/…, …/releases/latest/download/…):
// GitHub counts every download of an asset and shows the count to anyone
// through its API, so a set of assets an attacker uploaded, each shown or
// not, spells what the agent read to them. Any address naming releases
// counts, in any case and spelling.
func countedDownload(h, u string) bool {
	if h != "github.com" {
		return false
	}
	l := strings.ToLower(strings.ReplaceAll(u, `\`, "/"))
	if p, err := url.PathUnescape(l); err == nil {
		l = strings.ToLower(p)
	}
	return strings.Contains(l, "/releases/")
}

// imageAllowed says whether GitHub may fetch the image at u for the
// task: from GitHub's own hosts or a host the contained network allows.
func imageAllowed(u string, rules []egress.Rule) bool {
	h := gfm.Host(u)
	if h == "" {
		return false
	}
	if githubHost(h) && !countedDownload(h, u) {
		return true
	}
	d, err := egress.ParseDest(h)
	return err == nil && egress.Allowed(rules, d, 443).OK
}

// outsideImages names the changed files GitHub renders that gain an
// image from a host that is not allowed (an address the file at base
// already held is not counted), with the hosts; nothing where the
// network is not contained.
func (r *Runner) outsideImages(ctx context.Context, base string, changes []gitrepo.Change) ([]string, error) {
	if !r.Contain.NetworkContained() {
		return nil, nil
	}
	var rules []egress.Rule
	if r.Contain.Egress != nil {
		rules = r.Contain.Egress.Rules
	}
	paths, shas := renderedBlobs(changes)
	if len(shas) == 0 {
		return nil, nil
	}
	// found: path → addresses not allowed, before the base's are taken out.
	found := map[string][]string{}
	var order, tooLarge []string
	err := r.Repo.StreamBlobs(ctx, shas, func(sha string, content io.Reader) error {
		data, err := io.ReadAll(io.LimitReader(content, maxRendered+1))
		if err != nil {
			return err
		}
		for _, p := range paths[sha] {
			find := finderFor(p, data)
			if find == nil {
				continue
			}
			if len(data) > maxRendered {
				tooLarge = append(tooLarge, p)
				continue
			}
			var bad []string
			for _, u := range find(data) {
				if !imageAllowed(u, rules) {
					bad = append(bad, u)
				}
			}
			if len(bad) > 0 {
				found[p] = bad
				order = append(order, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Every file is judged before the list is cut: a file whose images
	// the base held already names no host, and twenty such ones once
	// kept the file after them from being read at all.
	out, err := r.withNewHosts(ctx, base, order, found)
	if err != nil {
		return nil, err
	}
	for _, p := range tooLarge {
		out = append(out, fmt.Sprintf("%s (a rendered file over %d MiB, whose images planex does not read)", p, maxRendered>>20))
	}
	if len(out) > maxImageFindings {
		out = append(out[:maxImageFindings], fmt.Sprintf("and %d more", len(out)-maxImageFindings))
	}
	return out, nil
}

// withNewHosts names each file of order (with found, its addresses not
// allowed) that gains an image the file at base did not hold, with the
// hosts. The base's files are read a few at a time.
func (r *Runner) withNewHosts(ctx context.Context, base string, order []string, found map[string][]string) ([]string, error) {
	var out []string
	for start := 0; start < len(order); start += maxImageFindings {
		chunk := order[start:min(len(order), start+maxImageFindings)]
		var before map[string][]byte
		if base != "" {
			var err error
			if before, err = r.Repo.Tree(base).ReadFiles(ctx, chunk, maxRendered); err != nil {
				return nil, fmt.Errorf("reading %s as they were: %w", strings.Join(chunk, ", "), err)
			}
		}
		for _, p := range chunk {
			if hosts := newHosts(p, before[p], found[p]); len(hosts) > 0 {
				out = append(out, fmt.Sprintf("%s (an image from %s)", p, strings.Join(hosts, ", ")))
			}
		}
	}
	return out, nil
}

// renderedBlobs are the blobs of the changed files GitHub may render
// (any regular file: a modeline makes one a markup's), each with the
// paths it is written to.
func renderedBlobs(changes []gitrepo.Change) (paths map[string][]string, shas []string) {
	paths = map[string][]string{}
	for _, c := range changes {
		if c.Mode == "100644" || c.Mode == "100755" {
			if paths[c.Blob] == nil {
				shas = append(shas, c.Blob)
			}
			paths[c.Blob] = append(paths[c.Blob], c.Path)
		}
	}
	return paths, shas
}

// newHosts are the hosts of the addresses of bad that the file p held
// already as old (nil: it did not exist) did not, sorted, each once.
func newHosts(p string, old []byte, bad []string) []string {
	var had []string
	if old != nil {
		if find := finderFor(p, old); find != nil {
			had = find(bytes.Clone(old))
		}
	}
	var hosts []string
	for _, u := range bad {
		if slices.Contains(had, u) {
			continue
		}
		h := gfm.Host(u)
		if h == "" {
			h = fmt.Sprintf("%q", u)
		}
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	slices.Sort(hosts)
	return hosts
}

// edgeLines are data's first n and last n lines (all of them when it has
// no more than 2n), found without splitting the rest.
func edgeLines(data []byte, n int) [][]byte {
	var head [][]byte
	rest := data
	for len(head) < n && len(rest) > 0 {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		head, rest = append(head, line), after
	}
	var tail [][]byte
	for len(tail) < n && len(rest) > 0 {
		i := bytes.LastIndexByte(rest, '\n')
		tail, rest = append([][]byte{rest[i+1:]}, tail...), rest[:max(i, 0)]
		if i < 0 {
			break
		}
	}
	return append(head, tail...)
}
