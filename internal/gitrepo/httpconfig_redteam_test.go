package gitrepo

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestRedTeamHTTPSTrustFromRepositoryConfig: whoever could write the
// repository's git directory before planex ran git (section 3's writer)
// turns off https verification for the server planex pushes to
// (`http.<url>.sslVerify=false`, which outranks a general setting), or
// names a certificate authority of their own (`http.sslCAInfo`), and
// puts a server of theirs in the way (an `http.proxy`, a resolver entry).
// Here that server is the remote itself, with a certificate no system
// authority vouches for: planex's listing sent it the token's
// Authorization header. Now the verification is switched back on under
// the same name, and an authority of the configuration's is refused
// before git runs: the server never sees the header. The settings are
// read by the scan that lists the drivers, which a Repo remembers while
// the config is unchanged: set after a listing whose scan was remembered
// ("after a listing"), they are undone all the same. (Not parallel: the
// user's GIT_SSL_CAINFO, which git takes over the config, is unset here.)
func TestRedTeamHTTPSTrustFromRepositoryConfig(t *testing.T) {
	for _, name := range []string{"GIT_SSL_CAINFO", "GIT_SSL_CAPATH"} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		auth = append(auth, req.Header.Get("Authorization"))
		mu.Unlock()
		http.NotFound(w, req)
	}))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		config  [][2]string
		refused error
		after   bool // set after a first listing, whose scan is remembered
	}{
		{"sslVerify off for the URL", [][2]string{{"http." + srv.URL + "/.sslVerify", "false"}, {"http.sslVerify", "false"}}, nil, false},
		{"an authority of its own", [][2]string{{"http.sslCAInfo", ca}}, ErrUnsafeHTTPConfig, false},
		{"an authority for the URL", [][2]string{{"http." + srv.URL + "/o.sslCAPath", filepath.Dir(ca)}}, ErrUnsafeHTTPConfig, false},
		{"sslVerify off after a listing", [][2]string{{"http." + srv.URL + "/.sslVerify", "false"}}, nil, true},
		{"an authority after a listing", [][2]string{{"http.sslCAInfo", ca}}, ErrUnsafeHTTPConfig, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := newRepo(t)
			mustGit(t, r.Root, "remote", "add", "origin", srv.URL+"/o/r.git")
			configure := func() {
				for _, kv := range tc.config {
					mustGit(t, r.Root, "config", kv[0], kv[1])
				}
			}
			if !tc.after {
				configure()
			}
			opened, err := Open(ctx, r.Root)
			if err != nil {
				t.Fatal(err)
			}
			authed := opened.WithAuth(srv.URL, "ghs_secret")
			if tc.after {
				settle()
				if _, err := authed.ListRemoteRefs(ctx, "origin", "refs/heads/*"); err == nil {
					t.Fatal("the first listing succeeded")
				}
				if runtime.GOOS == "linux" && len(opened.scans.m) == 0 {
					t.Fatal("the first listing's scan was not remembered: the case tests nothing")
				}
				configure()
				settle()
			}
			mu.Lock()
			before := len(auth)
			mu.Unlock()
			_, err = authed.ListRemoteRefs(ctx, "origin", "refs/heads/*")
			if err == nil {
				t.Fatal("the listing succeeded")
			}
			if tc.refused != nil && !errors.Is(err, tc.refused) {
				t.Errorf("err = %v, want %v", err, tc.refused)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := auth[before:]; slices.ContainsFunc(got, func(h string) bool { return h != "" }) {
				t.Fatalf("the server got the token's header: %q", got)
			}
		})
	}
}

// TestHTTPOverrides: each http.<url>.sslVerify is set back to true and
// each curloptResolve list, sslVersion (a writer's downgrade to TLS 1.0)
// and sslCipherList (a writer's weak ciphers) emptied, under the name the
// config used; other http settings are left as they are.
func TestHTTPOverrides(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	for _, kv := range [][2]string{
		{"http.sslVerify", "false"}, {"http.https://Example.com/A.sslVerify", "no"},
		{"http.curloptResolve", "example.com:443:10.0.0.1"}, {"http.proxy", "http://proxy.example:3128"},
		{"http.sslVersion", "tlsv1.0"}, {"http.https://Example.com/A.sslCipherList", "NULL"},
	} {
		mustGit(t, r.Root, "config", kv[0], kv[1])
	}
	got, err := httpOverrides(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []setting{{"http.sslverify", "true"}, {"http.curloptresolve", ""}, {"http.sslversion", ""},
		{"http.https://Example.com/A.sslverify", "true"}, {"http.https://Example.com/A.sslcipherlist", ""}}
	if !slices.Equal(got, want) {
		t.Errorf("overrides = %v, want %v", got, want)
	}
	if got, err := httpOverrides(ctx, newRepo(t)); err != nil || len(got) != 0 {
		t.Errorf("a config without them: %v %v", got, err)
	}
	// More settings than planex reads (a git-directory writer's) are
	// refused, not read in part: one past the cut would keep its effect.
	big := newRepo(t)
	f, err := os.OpenFile(filepath.Join(big.Root, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30000; i++ {
		fmt.Fprintf(f, "[http \"https://h%d.example/\"]\n\tsslVerify = true\n", i)
	}
	f.WriteString("[http]\n\tsslVerify = false\n")
	f.Close()
	if _, err := httpOverrides(ctx, big); !errors.Is(err, ErrUnsafeHTTPConfig) {
		t.Errorf("a config with over %d bytes of https settings: err %v, want ErrUnsafeHTTPConfig", maxScan, err)
	}
}

// TestRedTeamLazyFetchCarriesNoTokenUnverified: as above, but the server
// is the promisor remote of a partial clone (https, so its lazy fetches
// are allowed, as a checkout made with a filter needs them), and planex
// only reads a commit a state ref names and the clone lacks. Every git of
// an authenticated Repo carries the token's header, and the lazy fetch
// under that read sent it with the configuration's sslVerify=false: the
// overrides are taken into an authenticated Repo's every call, not only
// its fetches and pushes.
func TestRedTeamLazyFetchCarriesNoTokenUnverified(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		auth = append(auth, req.Header.Get("Authorization"))
		mu.Unlock()
		http.NotFound(w, req)
	}))
	t.Cleanup(srv.Close)
	r := newRepo(t)
	for _, kv := range [][2]string{
		{"core.repositoryformatversion", "1"}, {"extensions.partialClone", "origin"}, {"remote.origin.url", srv.URL + "/o/r.git"},
		{"remote.origin.promisor", "true"}, {"http." + srv.URL + "/.sslVerify", "false"},
	} {
		mustGit(t, r.Root, "config", kv[0], kv[1])
	}
	authed, err := Authenticated(ctx, r, srv.URL, "ghs_secret")
	if err != nil {
		t.Fatal(err)
	}
	missing := strings.Repeat("ab", 20)
	if _, err := authed.CommitMessage(ctx, missing); err == nil {
		t.Fatal("a missing commit was read")
	}
	if _, err := authed.TreeOf(ctx, missing); err == nil {
		t.Fatal("a missing commit's tree was read")
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.ContainsFunc(auth, func(h string) bool { return h != "" }) {
		t.Fatalf("the server got the token's header: %q", auth)
	}

	// A certificate authority of the configuration's is refused at once.
	mustGit(t, r.Root, "config", "http.sslCAPath", t.TempDir())
	if os.Getenv("GIT_SSL_CAPATH") == "" {
		if _, err := Authenticated(ctx, r, srv.URL, "ghs_secret"); !errors.Is(err, ErrUnsafeHTTPConfig) {
			t.Errorf("Authenticated with a config's authority: %v", err)
		}
	}
}
