package apicommit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/ghfake"
)

func TestParseMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": ModeGit, "git": ModeGit, "api": ModeAPI} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"API", "gpg", " api"} {
		if _, err := ParseMode(in); err == nil || !strings.Contains(err.Error(), `"`+in+`"`) {
			t.Errorf("ParseMode(%q) error = %v, want one naming the value", in, err)
		}
	}
}

// TestMakeAndOffer: Make has GitHub make a task's commit without moving
// any branch (a matrix job's), and brings it here; Publish then takes
// that commit when offered instead of making another, but only one with
// the parent, tree and message wanted.
func TestMakeAndOffer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("task.txt", "T1's work\n")
	local := e.commit(e.base, "T1: work\n\nPlanex-Task: T1\n")
	made, err := e.pub.Make(e.ctx, e.base, local)
	if err != nil {
		t.Fatal(err)
	}
	if made == local || e.git("rev-parse", made+"^{tree}") != e.git("rev-parse", local+"^{tree}") {
		t.Fatalf("Make returned %s; want GitHub's own commit of the local tree, present here", made)
	}
	if out := e.git("ls-remote", e.bare, "refs/heads/"+e.branchName); out != "" {
		t.Errorf("Make moved a branch on GitHub: %s", out)
	}

	// Offers that are not the commit wanted: another message, another
	// parent, a commit unknown here.
	otherMsg, err := e.pub.Make(e.ctx, e.base, e.commit(e.base, "T1: other message"))
	if err != nil {
		t.Fatal(err)
	}
	e.pub.Offer("0123456789abcdef0123456789abcdef01234567")
	e.pub.Offer(otherMsg)
	e.pub.Offer(made)
	commitsBefore := e.requests(routeCommit)
	got, err := e.pub.Publish(e.ctx, e.branchName, e.base, local)
	if err != nil {
		t.Fatal(err)
	}
	if got != made || e.requests(routeCommit) != commitsBefore {
		t.Errorf("Publish = %s with %d new commits; want the offered %s and none made", got, e.requests(routeCommit)-commitsBefore, made)
	}
	if remote := strings.Fields(e.git("ls-remote", e.bare, "refs/heads/"+e.branchName)); len(remote) == 0 || remote[0] != made {
		t.Errorf("GitHub's branch = %v, want %s", remote, made)
	}

	// The same change on another parent is made afresh.
	e.write("next.txt", "T2\n")
	next := e.commit(made, "T1: work\n\nPlanex-Task: T1\n") // same message, other parent and tree
	got2, err := e.pub.Publish(e.ctx, e.branchName, made, next)
	if err != nil || got2 == made || e.requests(routeCommit) != commitsBefore+1 {
		t.Errorf("Publish on another parent = %s, %v with %d new commits; want a new one", got2, err, e.requests(routeCommit)-commitsBefore)
	}
}

// TestSyncCases: the local run branch follows GitHub's when GitHub's is
// ahead (or the branch is not here yet), and otherwise stays, saying why.
func TestSyncCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(e *env) (wantLocal string)
		want  string // error holding this, or ""
	}{
		{"not on GitHub", func(e *env) string { e.git("branch", e.branchName, e.base); return e.base }, ""},
		{"the same on both", func(e *env) string {
			e.git("branch", e.branchName, e.base)
			e.git("push", "-q", "origin", e.branchName)
			return e.base
		}, ""},
		{"only on GitHub", func(e *env) string {
			e.write("a.txt", "a\n")
			c := e.commit(e.base, "remote only")
			e.git("push", "-q", "origin", c+":refs/heads/"+e.branchName)
			e.git("update-ref", "-d", "refs/heads/"+e.branchName)
			return c
		}, ""},
		{"ahead here", func(e *env) string {
			e.git("push", "-q", "origin", e.base+":refs/heads/"+e.branchName)
			e.write("a.txt", "a\n")
			c := e.commit(e.base, "made by git")
			e.git("branch", e.branchName, c)
			return c
		}, "is ahead of GitHub's"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			want := tc.setup(e)
			err := e.pub.Sync(e.ctx, e.branchName)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), e.branchName)) {
				t.Fatalf("Sync = %v, want %q naming the branch", err, tc.want)
			}
			if got, _ := e.repo.ResolveBranch(e.ctx, e.branchName); got != want {
				t.Errorf("local branch at %q, want %q", got, want)
			}
		})
	}
}

// lying is a GitHub whose Git Data answers are not what was asked for.
type lying struct {
	GitData
	tree, blob string
}

func (l lying) CreateTree(ctx context.Context, owner, repo, base string, entries []gh.TreeEntry) (string, error) {
	if l.tree != "" {
		return l.tree, nil
	}
	return l.GitData.CreateTree(ctx, owner, repo, base, entries)
}

func (l lying) CreateBlob(ctx context.Context, owner, repo string, content []byte) (string, error) {
	if l.blob != "" {
		return l.blob, nil
	}
	return l.GitData.CreateBlob(ctx, owner, repo, content)
}

// TestPublishChecksWhatGitHubMade: a tree or blob GitHub answers with that
// is not git's stops publishing before any commit is made or branch
// moved, naming what differs; so does a failed upload, a parent GitHub
// does not have, and a commit that cannot be fetched back.
func TestPublishChecksWhatGitHubMade(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prepare func(e *env) (parent string)
		want    string
		commits int // commit requests GitHub got
	}{
		{"another tree", func(e *env) string {
			e.pub.GH = lying{GitData: e.pub.GH, tree: strings.Repeat("ab", 20)}
			return e.base
		}, "GitHub made tree ababababab for commit ", 0},
		{"another blob", func(e *env) string {
			e.pub.GH = lying{GitData: e.pub.GH, blob: strings.Repeat("cd", 20)}
			return e.base
		}, "sending data.bin: GitHub stored blob cdcdcdcdcd, not ", 0},
		{"the upload refused", func(e *env) string {
			e.fake.InjectFault(routeBlob, 1, ghfake.Forbidden("Resource not accessible by integration"))
			return e.base
		}, "sending data.bin: ", 0},
		{"the parent not on GitHub", func(e *env) string {
			// A commit of the base's tree that only this repository has.
			return e.git("commit-tree", e.base+"^{tree}", "-p", e.base, "-m", "local only")
		}, "push it first: the run starts from it", 1}, // asked for, refused
		{"the made commit not fetched back", func(e *env) string {
			e.pub.Remote = "nowhere"
			return e.base
		}, "fetching the commit GitHub made (", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			parent := tc.prepare(e)
			e.write("data.bin", "\x00binary\xff")
			e.write("notes.txt", "text\n")
			local := e.commit(parent, "T1: data")
			_, err := e.pub.Publish(e.ctx, e.branchName, parent, local)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Publish = %v, want an error holding %q", err, tc.want)
			}
			if n := e.requests(routeCommit); n != tc.commits {
				t.Errorf("%d commit requests, want %d", n, tc.commits)
			}
			if tc.name != "the made commit not fetched back" {
				if out := e.git("ls-remote", e.bare, "refs/heads/"+e.branchName); out != "" {
					t.Errorf("the branch was made on GitHub: %s", out)
				}
			}
		})
	}
}

// TestPublishInlinesTextWithinBudget: text files travel inside tree
// requests, up to a budget per request; binary and non-UTF-8 content and
// files over the inline size go as blobs; a size over the limit is told in
// megabytes.
func TestPublishInlinesTextWithinBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.pub.inlinePerTree = 10 << 10
	text := strings.Repeat("line of text\n", 3<<10/13) // ~3 KiB each
	for i := range 7 {                                 // ~21 KiB: three requests of 10 KiB at most
		e.write(fmt.Sprintf("text/%d.txt", i), text+strconv.Itoa(i))
	}
	e.write("latin1.txt", "caf\xe9\n")                     // not UTF-8: a blob
	e.write("large.txt", strings.Repeat("y", inlineMax+1)) // over the inline size: a blob
	local := e.commit(e.base, "T1: text")
	made, err := e.pub.Publish(e.ctx, e.branchName, e.base, local)
	if err != nil {
		t.Fatal(err)
	}
	if e.git("rev-parse", made+"^{tree}") != e.git("rev-parse", local+"^{tree}") {
		t.Fatal("GitHub's tree is not git's")
	}
	if n := e.requests(routeBlob); n != 2 {
		t.Errorf("%d blob requests, want 2 (the Latin-1 file and the large one)", n)
	}
	if n := e.requests(routeTree); n != 3 {
		t.Errorf("%d tree requests for ~21 KiB of inline text, want 3 (up to 10 KiB each)", n)
	}

	e.pub.MaxBlob = 1 << 20
	e.write("huge.bin", strings.Repeat("z", 3<<19)) // 1.5 MiB
	_, err = e.pub.Publish(e.ctx, e.branchName, made, e.commit(made, "T2: huge"))
	if !errors.Is(err, ErrBlobTooLarge) || !strings.Contains(err.Error(), "huge.bin is 1.5 MB, too large for GitHub's API (at most 1.0 MB per file)") {
		t.Errorf("err = %v", err)
	}
}

func TestInlineText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{"": true, "plain\n": true, "naïve ✓": true, "nul\x00": false, "caf\xe9": false, "\xff\xfe": false} {
		if got := inlineText([]byte(in)); got != want {
			t.Errorf("inlineText(%q) = %v, want %v", in, got, want)
		}
	}
}
