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
