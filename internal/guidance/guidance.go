// Package guidance reads a repository's own instructions for coding
// agents (AGENTS.md, CLAUDE.md, .github/copilot-instructions.md,
// GEMINI.md), so that every agent planex runs, whatever its kind, works
// by them. They are the repository's data: the prompts label them as the
// repository's guidance, under planex's rules, never above them.
package guidance

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/planexhq/planex/internal/gfm"
	"github.com/planexhq/planex/internal/gitrepo"
)

// Files are the guidance files planex reads, in order of precedence: where
// two disagree, the earlier wins. AGENTS.md is the tool-neutral one; the
// others are written for one tool each.
var Files = []string{"AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md", "GEMINI.md"}

// MaxBytes caps the guidance given in one prompt (the files in order, cut
// at a line). Codex uses the same cap for AGENTS.md.
const MaxBytes = 32 << 10

// maxFileBytes is the largest file read at all.
const maxFileBytes = 1 << 20

// Tree reads files of a commit's tree; *gitrepo.Repo has it.
type Tree interface {
	FilesAt(ctx context.Context, commit string, paths []string) (map[string]gitrepo.TreeFile, error)
	ReadBlob(ctx context.Context, sha string) ([]byte, error)
	ReadBlobPrefix(ctx context.Context, sha string, n int64) ([]byte, error)
}

// Doc is one guidance file as an agent sees it.
type Doc struct {
	Path string
	Text string
	// Cut: the file is larger than planex reads, and Text is its start.
	Cut bool
}

// Load reads the guidance files of commit's tree: never the working tree,
// where an agent may have written, and a symbolic link only when it leads
// to a file inside the repository. What GitHub would not display (HTML
// comments, invisible characters) is dropped, as for issue text; a file
// that says nothing visible, is not text, or repeats an earlier one is
// left out.
func Load(ctx context.Context, g Tree, commit string) ([]Doc, error) {
	var docs []Doc
	seen := map[string]bool{}
	// One git lists all of them; links are followed one by one.
	entries, err := g.FilesAt(ctx, commit, Files)
	if err != nil {
		return nil, fmt.Errorf("reading the guidance files: %w", err)
	}
	for _, p := range Files {
		f, ok := entries[p]
		data, cut, err := readEntry(ctx, g, commit, p, f, ok, 1)
		if err != nil {
			return nil, fmt.Errorf("reading %s at %s: %w", p, commit, err)
		}
		if cut {
			// A multi-byte character may have been split at the cut.
			data = bytes.ToValidUTF8(data, nil)
			if i := bytes.LastIndexByte(data, '\n'); i > 0 {
				data = data[:i+1]
			}
		}
		if data == nil || bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
			continue
		}
		text := gfm.Visible(string(data))
		if text == "" || seen[text] {
			continue
		}
		seen[text] = true
		docs = append(docs, Doc{Path: p, Text: text, Cut: cut})
	}
	return docs, nil
}

// readBlob returns the file at p in commit's tree, nil when there is none
// (or it is a link out of the repository, a submodule or a directory). Of
// a file larger than maxFileBytes only the start is read, and cut says so.
// A link is followed at most links times.
func readBlob(ctx context.Context, g Tree, commit, p string, links int) (data []byte, cut bool, err error) {
	files, err := g.FilesAt(ctx, commit, []string{p})
	if err != nil {
		return nil, false, err
	}
	f, ok := files[p]
	return readEntry(ctx, g, commit, p, f, ok, links)
}

// readEntry is readBlob for the entry f at p, already listed (ok is
// false when the tree has none).
func readEntry(ctx context.Context, g Tree, commit, p string, f gitrepo.TreeFile, ok bool, links int) (data []byte, cut bool, err error) {
	if !ok || f.Type != "blob" || f.Size < 0 {
		return nil, false, nil
	}
	if f.Mode == "120000" {
		if f.Size > maxFileBytes {
			return nil, false, nil
		}
		blob, err := g.ReadBlob(ctx, f.Object)
		if err != nil {
			return nil, false, err
		}
		link := string(blob)
		target := path.Clean(path.Join(path.Dir(p), link))
		if links == 0 || path.IsAbs(link) || target == ".." || strings.HasPrefix(target, "../") || target == ".git" || strings.HasPrefix(target, ".git/") {
			return nil, false, nil
		}
		return readBlob(ctx, g, commit, target, links-1)
	}
	if f.Size > maxFileBytes {
		blob, err := g.ReadBlobPrefix(ctx, f.Object, maxFileBytes)
		return blob, true, err
	}
	blob, err := g.ReadBlob(ctx, f.Object)
	return blob, false, err
}

// Text is the guidance for a prompt: each file under its name, in the
// order of precedence, cut at a line when it would pass MaxBytes.
func Text(docs []Doc) string {
	var b strings.Builder
	for i, d := range docs {
		part := fmt.Sprintf("From %s:\n\n%s\n", d.Path, d.Text)
		if d.Cut {
			part += fmt.Sprintf("[%s is cut here: it is larger than %d KiB, and only its start was read.]\n", d.Path, maxFileBytes>>10)
		}
		if i > 0 {
			part = "\n" + part
		}
		if b.Len()+len(part) > MaxBytes {
			room := MaxBytes - b.Len()
			if cut := strings.LastIndexByte(part[:max(room, 0)], '\n'); cut > 0 {
				b.WriteString(part[:cut+1])
			}
			fmt.Fprintf(&b, "\n[The guidance is cut here: it is longer than %d KiB. The rest is in %s", MaxBytes>>10, d.Path)
			for _, rest := range docs[i+1:] {
				b.WriteString(", " + rest.Path)
			}
			b.WriteString(".]\n")
			break
		}
		b.WriteString(part)
	}
	return b.String()
}
