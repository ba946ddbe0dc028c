package gitrepo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// What a commit's links lead to, and the files it makes executable.
//
// A link's blob is only where it leads: a commit that adds
// scripts/postinstall.sh as a link to a test fixture whose text is a
// script shows "+../testdata/sample.txt" in its patch, and the code that
// now runs there is in no line of it (as a moved file's was before the
// review's patch detected no renames). The reviewer's text shows, after
// the patch, the file each link the commit adds or changes leads to in
// the commit (through other links too), where that stays inside the
// repository; and the content of each file the commit makes executable
// without changing it (a fixture's script made runnable shows in the
// patch as a mode change alone).

// maxLinksShown bounds the links whose targets a review's text shows.
const maxLinksShown = 64

// linkNote heads the contents of the files a commit's links lead to.
const linkNote = "\nplanex: the commit adds or changes symbolic links; the patch above shows only where each leads. The content of the file each leads to in this commit follows, each control byte or invalid UTF-8 byte written as \\xNN: review it as the content of the link's own path.\n"

// execNote heads the contents of the files a commit makes executable.
const execNote = "\nplanex: the commit makes these files executable without changing them; the patch above shows only the mode. Their content follows, each control byte or invalid UTF-8 byte written as \\xNN.\n"

// madeExecutable returns what follows a commit's patch for the files it
// makes executable and leaves as they were (same blob): their content,
// at most maxBinaryShown bytes of each and budget in all (cut says some
// did not fit).
func madeExecutable(ctx context.Context, r *Repo, files []commitFile, budget int) (string, bool, error) {
	var b strings.Builder
	shown := 0
	for _, f := range files {
		if f.mode != "100755" || f.oldMode == "100755" || f.blob != f.oldBlob || shown >= maxLinksShown {
			continue
		}
		shown++
		data, err := r.ReadBlobPrefix(ctx, f.blob, maxBinaryShown+1)
		if err != nil {
			return "", false, err
		}
		text := EscapeBinary(data[:min(len(data), maxBinaryShown)])
		if len(data) > maxBinaryShown {
			text += "\n… (more not shown: read the file)"
		}
		section := fmt.Sprintf("--- made executable %s ---\n%s\n", strconv.Quote(f.path), text)
		if b.Len() == 0 {
			section = execNote + section
		}
		if b.Len()+len(section) > budget {
			return b.String(), true, nil
		}
		b.WriteString(section)
	}
	return b.String(), false, nil
}

// linkContents returns what follows a commit's patch for the links it
// adds or changes: the content of the file each leads to in sha, at most
// maxBinaryShown bytes of each and budget in all (cut says some did not
// fit).
func linkContents(ctx context.Context, r *Repo, sha string, files []commitFile, budget int) (string, bool, error) {
	var links []string
	for _, f := range files {
		if f.mode == "120000" && len(links) < maxLinksShown {
			links = append(links, f.path)
		}
	}
	if len(links) == 0 {
		return "", false, nil
	}
	resolved, err := r.Tree(sha).ResolveFolders(ctx, links)
	if err != nil {
		return "", false, err
	}
	var targets []string
	for _, l := range links {
		if to, ok := resolved[l]; ok && to != "" {
			targets = append(targets, to)
		}
	}
	entries, err := r.FilesAt(ctx, sha, targets)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, l := range links {
		to, ok := resolved[l]
		e, found := entries[to]
		if !ok || !found {
			continue
		}
		var section string
		if e.Type != "blob" || e.Mode == "120000" {
			section = fmt.Sprintf("--- link %s leads to %s, a %s ---\n", strconv.Quote(l), strconv.Quote(to), e.Type)
		} else {
			data, err := r.ReadBlobPrefix(ctx, e.Object, maxBinaryShown)
			if err != nil {
				return "", false, err
			}
			text := EscapeBinary(data)
			if e.Size > int64(len(data)) {
				text += fmt.Sprintf("\n… (%d more bytes not shown: read the file)", e.Size-int64(len(data)))
			}
			section = fmt.Sprintf("--- link %s leads to %s (%d bytes) ---\n%s\n", strconv.Quote(l), strconv.Quote(to), e.Size, text)
		}
		if b.Len() == 0 {
			section = linkNote + section
		}
		if b.Len()+len(section) > budget {
			return b.String(), true, nil
		}
		b.WriteString(section)
	}
	return b.String(), false, nil
}
