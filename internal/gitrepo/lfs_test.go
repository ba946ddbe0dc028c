package gitrepo

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRedTeamLFSRunsNothing: on a runner with Git LFS (GitHub's have it),
// actions/checkout's `lfs: true` runs `git lfs install --local`, which
// puts LFS's filter in the repository's config and its hooks (pre-push,
// post-checkout, post-commit, post-merge) in its git directory. The
// repository ships `* filter=lfs` attributes, an LFS pointer to an
// object no store holds, and a .lfsconfig naming a server of its own as
// the LFS endpoint (lfs.url, lfs.pushurl). planex's git makes a task
// worktree from that tree, snapshots and commits a task's new file under
// the filter, and pushes with a token: LFS would fetch the pointed
// object from the repository's server (smudge), and upload objects to it
// with the push's credentials (pre-push). None of it runs: the server
// gets no request, the worktree holds the pointer as committed, and what
// is committed is the file as written.
func TestRedTeamLFSRunsNothing(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git-lfs"); err != nil {
		t.Skip("needs git-lfs (GitHub's runners have it): apt-get install git-lfs")
	}
	var hits atomic.Int32
	var seen atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		seen.Store(req.Method + " " + req.URL.Path + " " + req.Header.Get("Authorization"))
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer srv.Close()

	ctx := context.Background()
	r := newRepo(t)
	mustGit(t, r.Root, "lfs", "install", "--local")
	pointer := "version https://git-lfs.github.com/spec/v1\noid sha256:" + strings.Repeat("ab", 32) + "\nsize 12345\n"
	for name, body := range map[string]string{
		".gitattributes": "*.bin filter=lfs diff=lfs merge=lfs -text\n",
		".lfsconfig":     "[lfs]\n\turl = " + srv.URL + "/lfs\n\tpushurl = " + srv.URL + "/push\n",
		"data/big.bin":   pointer,
	} {
		p := filepath.Join(r.Root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustGit(t, r.Root, "add", "-A")
	mustGit(t, r.Root, "commit", "-qm", "lfs")
	origin, _ := cloneOf(t, r)
	mustGit(t, r.Root, "remote", "add", "origin", origin)
	r, err := Open(ctx, r.Root)
	if err != nil {
		t.Fatal(err)
	}
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}

	wt, tree, changes := taskSnapshot(ctx, t, r, head, map[string]string{"data/new.bin": "raw task bytes\n"})
	if got, _ := os.ReadFile(filepath.Join(wt, "data", "big.bin")); string(got) != pointer {
		t.Errorf("the worktree's big.bin = %q; want the pointer as committed", got)
	}
	if got := mustGit(t, r.Root, "cat-file", "-p", tree+":data/new.bin"); got != "raw task bytes\n" {
		t.Errorf("committed data/new.bin = %q; want the file as written", got)
	}
	sha, err := r.CommitChanges(ctx, head, changes, TaskMessage("s1", "T1", "work", ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateBranch(ctx, "planex/s1", sha, "", "planex: T1"); err != nil {
		t.Fatal(err)
	}
	if err := r.WithAuth(srv.URL, "secret-token").PushRef(ctx, "origin", "refs/heads/planex/s1", false, ""); err != nil {
		t.Fatal(err)
	}
	if err := r.ResetWorktree(ctx, wt, sha); err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the repository's LFS server got %d requests, the last %v", n, seen.Load())
	}
}
