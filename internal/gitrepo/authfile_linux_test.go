//go:build linux

package gitrepo

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRedTeamPushTokenNotInGitEnviron: without the sandbox an agent (or
// a process it left) runs as planex's user and reads every
// /proc/<pid>/environ of that user while planex pushes: the token's
// Authorization header was in git's environment (GIT_CONFIG_VALUE_<n>)
// and in git-remote-http's. The reader here scans them all at the moment
// the remote is asked for its refs, with both processes alive; the
// header still reaches the remote, from a 0600 config file git includes
// and planex removes once git has ended.
func TestRedTeamPushTokenNotInGitEnviron(t *testing.T) {
	t.Parallel()
	token := "ghs_envir2_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	secret := []byte(BasicCredential(token))
	var mu sync.Mutex
	var header string
	var readers []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		header = req.Header.Get("Authorization")
		readers = append(readers, environsHolding(secret, []byte(token))...)
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer srv.Close()
	ctx := context.Background()
	r := newRepo(t)
	mustGit(t, r.Root, "branch", "planex/s1")
	// The remote answers 404: the push fails once the header was seen.
	_ = r.WithAuth(srv.URL, token).PushRef(ctx, srv.URL+"/repo.git", "refs/heads/planex/s1", false, "")
	mu.Lock()
	defer mu.Unlock()
	if header != "Basic "+string(secret) && header != "basic "+string(secret) {
		t.Fatalf("the remote got Authorization %q; want the token's header", header)
	}
	for _, p := range readers {
		t.Errorf("a process of planex's user read the token in %s", p)
	}
}

// environsHolding are the /proc/<pid>/environ files holding any of
// values, as a process of the same user reads them.
func environsHolding(values ...[]byte) []string {
	files, _ := filepath.Glob("/proc/[0-9]*/environ")
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, v := range values {
			if bytes.Contains(b, v) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// TestRedTeamPushTokenFileOutlivesKill: a same-user process reads the
// include path from git's environment while planex pushes and opens it,
// and a planex killed at that moment (SIGKILL runs no deferred removal)
// leaves whatever file a path names behind in $TMPDIR. The handler is
// that moment: every path git's environment names, and every credential
// folder planex makes in the temporary folder, is read there, and none
// may hold the token: git must read the header from a descriptor planex
// holds, which dies with planex and the push.
func TestRedTeamPushTokenFileOutlivesKill(t *testing.T) {
	t.Parallel()
	token := "ghs_envir3_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	secret := []byte(BasicCredential(token))
	var mu sync.Mutex
	var header string
	var found []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		header = req.Header.Get("Authorization")
		found = append(found, pathsHolding(secret)...)
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer srv.Close()
	r := newRepo(t)
	mustGit(t, r.Root, "branch", "planex/s1")
	_ = r.WithAuth(srv.URL, token).PushRef(context.Background(), srv.URL+"/repo.git", "refs/heads/planex/s1", false, "")
	mu.Lock()
	defer mu.Unlock()
	if !strings.EqualFold(header, "Basic "+string(secret)) {
		t.Fatalf("the remote got Authorization %q; want the token's header", header)
	}
	for _, p := range found {
		t.Errorf("the token was in %s, a path that outlives a killed planex", p)
	}
}

// pathsHolding are the files that hold secret and are named by a path
// outside /proc: the values of every /proc/<pid>/environ that look like
// paths, and planex's credential folders in the temporary folder.
func pathsHolding(secret []byte) []string {
	candidates, _ := filepath.Glob(filepath.Join(os.TempDir(), "planex-git-auth-*", "*"))
	environs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, f := range environs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			_, v, _ := bytes.Cut(kv, []byte("="))
			if len(v) > 0 && v[0] == '/' && !bytes.HasPrefix(v, []byte("/proc/")) {
				candidates = append(candidates, string(v))
			}
		}
	}
	var out []string
	for _, c := range candidates {
		fi, err := os.Stat(c)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
			continue
		}
		if b, err := os.ReadFile(c); err == nil && bytes.Contains(b, secret) {
			out = append(out, c)
		}
	}
	return out
}
