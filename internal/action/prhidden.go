package action

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/planexhq/planex/internal/gitrepo"
	"github.com/planexhq/planex/internal/plural"
)

// What GitHub's diff of a pull request leaves out.
//
// `/planex review` reads a pull request from GitHub's diff, whose author
// may be anyone. That diff hides code three ways the run's own review
// (gitrepo.ShowCommit) no longer does: a file moved or copied shows as
// "rename from/to" and its changed lines only (a test fixture moved to
// scripts/postinstall.sh runs there, with no line of it shown); a file
// with a NUL byte, or that the pull request's own .gitattributes marks
// -diff or binary, shows as "Binary files differ"; and a file too large
// shows nothing. The reviewer is given the list of the files the pull
// request changes and, for each such file, its content at the head.

// Bounds of what is fetched and shown of the files GitHub's diff hides.
const (
	maxHiddenFiles = 16
	maxHiddenShown = 16 << 10
	maxHiddenTotal = 64 << 10
	maxPRFileList  = 16 << 10
)

// hiddenNote heads the contents of the files GitHub's diff does not show.
const hiddenNote = "planex: GitHub's diff below leaves out the content of these files (moved or copied: it shows the move and the changed lines only; binary to GitHub: a NUL byte, or the pull request's .gitattributes; too large; or a symbolic link, shown as where it leads: its content is the file it leads to). Their content at the pull request's head follows, each control byte or invalid UTF-8 byte written as \\xNN. Review it as you review the diff: a moved file may now run where it did not.\n"

// fileContent is what reading one file of the head gives.
type fileContent func(ctx context.Context, path string) ([]byte, error)

// reviewText is the text a pull request's reviewer reads: the list of
// the files it changes, the content of those GitHub's diff hides (read
// with content), then the diff.
func reviewText(ctx context.Context, files []*github.CommitFile, diff string, content fileContent) string {
	var b strings.Builder
	b.WriteString(prFileList(files))
	b.WriteString(hiddenContents(ctx, files, linksInDiff(diff), content))
	b.WriteString(diff)
	return b.String()
}

// hiddenFromDiff says whether GitHub's diff leaves out a file's content;
// links are the paths the diff shows as symbolic links, whose patch is
// only where each leads (GitHub's contents API answers with the file a
// link leads to in the repository).
func hiddenFromDiff(f *github.CommitFile, links map[string]bool) bool {
	switch f.GetStatus() {
	case "removed":
		return false
	case "renamed", "copied":
		return true
	}
	return f.GetPatch() == "" || links[f.GetFilename()]
}

// linksInDiff are the paths a unified diff gives the mode of a symbolic
// link (new file mode 120000, new mode 120000).
func linksInDiff(diff string) map[string]bool {
	links := map[string]bool{}
	path := ""
	for _, line := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "diff --git "):
			if i := strings.LastIndex(line, " b/"); i >= 0 {
				path = line[i+3:]
			}
		case line == "new file mode 120000" || line == "new mode 120000":
			links[path] = true
		}
	}
	return links
}

// prFileList lists the files a pull request changes, at most
// maxPRFileList bytes.
func prFileList(files []*github.CommitFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "planex: the pull request changes %s:\n", plural.Count(len(files), "file", "files"))
	for i, f := range files {
		line := f.GetStatus() + "\t" + strconv.Quote(f.GetFilename())
		if prev := f.GetPreviousFilename(); prev != "" {
			line += " (from " + strconv.Quote(prev) + ")"
		}
		if b.Len()+len(line)+1 > maxPRFileList {
			fmt.Fprintf(&b, "… and %d more\n", len(files)-i)
			break
		}
		b.WriteString(line + "\n")
	}
	return b.String() + "\n"
}

// hiddenContents is the content of the files GitHub's diff hides, as
// content reads them: at most maxHiddenFiles files, maxHiddenShown bytes
// of each and maxHiddenTotal in all; "" when there are none.
func hiddenContents(ctx context.Context, files []*github.CommitFile, links map[string]bool, content fileContent) string {
	var b strings.Builder
	n := 0
	for _, f := range files {
		if !hiddenFromDiff(f, links) {
			continue
		}
		if n == 0 {
			b.WriteString(hiddenNote)
		}
		if n++; n > maxHiddenFiles || b.Len() >= maxHiddenTotal {
			fmt.Fprintf(&b, "--- %s: not shown (planex shows at most %d such files, %d KiB in all): ask for it to be reviewed by hand ---\n",
				strconv.Quote(f.GetFilename()), maxHiddenFiles, maxHiddenTotal>>10)
			continue
		}
		data, err := content(ctx, f.GetFilename())
		if err != nil {
			fmt.Fprintf(&b, "--- %s: could not be read (%v): ask for it to be reviewed by hand ---\n", strconv.Quote(f.GetFilename()), err)
			continue
		}
		shown, rest := data, ""
		if limit := min(maxHiddenShown, maxHiddenTotal-b.Len()); len(shown) > limit {
			shown, rest = shown[:max(limit, 0)], fmt.Sprintf("\n… (%d more bytes not shown)", len(data)-max(limit, 0))
		}
		fmt.Fprintf(&b, "--- file %s (%s, %d bytes) ---\n%s%s\n", strconv.Quote(f.GetFilename()), f.GetStatus(), len(data), gitrepo.EscapeBinary(shown), rest)
	}
	if n > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
