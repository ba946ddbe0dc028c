package gitrepo

import (
	"context"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// smartHTTPServer serves the bare repositories under root over git's
// smart http (git http-backend) at the returned base URL, setting a
// cookie on every answer and recording the Cookie header of every
// request.
func smartHTTPServer(t *testing.T, root string) (base string, cookies func() []string) {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skipf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("no git-http-backend: %v", err)
	}
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		seen = append(seen, req.Header.Get("Cookie"))
		mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "from-the-server", Path: "/"})
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// TestRedTeamHTTPCookieFileFromRepositoryConfig: whoever could write the
// repository's git directory sets `http.cookieFile` (for every URL or
// for the remote's) to a file of planex's user and `http.saveCookies`:
// every fetch, listing and push planex made wrote the server's cookies
// over that file (a shell profile, a file an agent reads later), and sent
// the server what a planted cookie file held. Now both are undone under
// the names the configuration used: the file is neither read nor written.
func TestRedTeamHTTPCookieFileFromRepositoryConfig(t *testing.T) {
	t.Parallel()
	for _, forURL := range []bool{false, true} {
		t.Run(map[bool]string{false: "general", true: "for the URL"}[forURL], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRepo(t)
			origin, _ := cloneOf(t, r)
			base, cookies := smartHTTPServer(t, filepath.Dir(origin))
			url := base + "/" + filepath.Base(origin)
			victim := filepath.Join(t.TempDir(), "profile")
			const precious = "# the user's own file\nexport A=1\n"
			if err := os.WriteFile(victim, []byte(precious), 0o644); err != nil {
				t.Fatal(err)
			}
			planted := filepath.Join(t.TempDir(), "planted")
			host := strings.TrimPrefix(url, "http://")
			host = host[:strings.Index(host, ":")]
			if err := os.WriteFile(planted, []byte(host+"\tFALSE\t/\tFALSE\t0\tplanted\tby-the-writer\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			mustGit(t, r.Root, "remote", "add", "origin", url)
			prefix := "http."
			if forURL {
				prefix = "http." + url + "."
			}
			mustGit(t, r.Root, "config", prefix+"cookieFile", planted)
			mustGit(t, r.Root, "config", prefix+"saveCookies", "true")
			opened, err := Open(ctx, r.Root)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := opened.ListRemoteRefs(ctx, "origin", "refs/heads/*"); err != nil {
				t.Fatal(err)
			}
			if got := cookies(); slices.ContainsFunc(got, func(c string) bool { return strings.Contains(c, "planted") }) {
				t.Errorf("the server got the planted cookie file's cookie: %q", got)
			}
			if b, _ := os.ReadFile(planted); strings.Contains(string(b), "from-the-server") {
				t.Errorf("the planted cookie file was written: %q", b)
			}
			mustGit(t, r.Root, "config", prefix+"cookieFile", victim)
			if _, err := opened.ListRemoteRefs(ctx, "origin", "refs/heads/*"); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(victim); string(b) != precious {
				t.Errorf("the listing wrote the server's cookies over a file of the user's: %q", b)
			}
		})
	}
}
