package gitrepo

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
)

// ShowCommit returns a commit as a reviewer reads it: "commit <sha>", its
// message, then its patch as a plain unified diff (no colour, no external
// diff program, no rename detection: a file moved or copied into place
// is shown whole, as a new file, since "rename from"/"rename to" alone
// would hide code that now runs where it did not). sha comes from a plan file, so one that git could read
// as an option is refused before git sees it.
//
// The text is at most MaxPatchBytes long: a longer patch is cut at a line
// and ends with a line saying so. A list of the commit's files heads it
// (fileList), and the content of the files git shows only as binary
// follows the patch, escaped (binaryContents), then that of the files
// the links it adds or changes lead to (linkContents) and of the files
// it makes executable unchanged (madeExecutable).
func (r *Repo) ShowCommit(ctx context.Context, sha string) (string, error) {
	return showCommit(ctx, r, sha, MaxPatchBytes)
}

// MaxPatchBytes caps the text ShowCommit and DiffText return: a commit an
// agent made can hold gigabytes of diff.
const MaxPatchBytes = 16 << 20

// patchCut ends a patch planex cut short.
const patchCut = "… (planex read only the first part of this patch)\n"

func showCommit(ctx context.Context, r *Repo, sha string, max int) (string, error) {
	if sha == "" || strings.HasPrefix(sha, "-") {
		return "", fmt.Errorf("showing commit %q: not a commit id", sha)
	}
	// The list of files follows the commit's id: room is kept for it.
	room := max - maxFileList - len(patchCut)
	out, cut, err := gitCapped(ctx, r, room, "show", "--no-color", "--no-ext-diff", "--no-renames", "--format=commit %H%n%n%B", sha, "--")
	if err != nil {
		// The name as given: one that is no commit shows nothing under
		// abbrev.SHA, which keeps an id's hex digits only.
		return "", fmt.Errorf("showing commit %q: %w", abbrev.Truncate(sha, 80), err)
	}
	files, listCut, err := commitFiles(ctx, r, sha)
	if err != nil {
		return "", fmt.Errorf("showing commit %s: %w", abbrev.SHA(sha), err)
	}
	// After the first line ("commit <id>", which the format makes), before
	// the message, which the agent's findings fill.
	first, rest, _ := strings.Cut(out, "\n")
	out = first + "\n\n" + fileList(files, listCut) + strings.TrimPrefix(rest, "\n")
	if cut {
		return out + patchCut, nil
	}
	extra, cut, err := binaryContents(ctx, r, sha, files, room-len(out))
	if err != nil {
		return "", fmt.Errorf("showing commit %s: %w", abbrev.SHA(sha), err)
	}
	out += extra
	if !cut {
		extra, cut, err = linkContents(ctx, r, sha, files, room-len(out))
		if err != nil {
			return "", fmt.Errorf("showing commit %s: %w", abbrev.SHA(sha), err)
		}
		out += extra
	}
	if !cut {
		extra, cut, err = madeExecutable(ctx, r, files, room-len(out))
		if err != nil {
			return "", fmt.Errorf("showing commit %s: %w", abbrev.SHA(sha), err)
		}
		out += extra
	}
	if cut {
		out += patchCut
	}
	return out, nil
}

// gitCapped is Git on the repository keeping at most max bytes of the
// output (runCapped). It runs in an empty work tree of its own: git takes
// a diff's attributes (-diff, binary) from the work tree's .gitattributes,
// which in a follow-up's worktree or a checkout of a planex branch is a
// file an earlier task's agent may have committed to show every later
// change as "Binary files differ".
func gitCapped(ctx context.Context, r *Repo, max int, args ...string) (string, bool, error) {
	empty, err := os.MkdirTemp("", "planex-patch-")
	if err != nil {
		return "", false, fmt.Errorf("making an empty work tree for git %s: %w", args[0], err)
	}
	defer os.Remove(empty)
	env := append(r.gitEnv(empty), r.env...)
	return runCapped(ctx, call{dir: empty, env: env, config: r.config, args: args, scans: r.scans}, max)
}
