//go:build linux

package gitrepo

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRedTeamHTTPFilesAreFIFOs: whoever could write the git directory
// points a file git's https opens for a remote call at a FIFO no one
// writes: the client certificate or key (http.sslCert, http.sslKey, for
// every URL or the remote's), the pinned public key (http.pinnedPubkey)
// or a proxy's certificate files. planex's fetch, listing or push opened
// it and waited: the job hung until its time-out. Now a remote call whose
// configuration names such a file that is not a regular file is refused
// before git starts (ErrUnsafeHTTPConfig); a regular file, a missing one
// and a pinned key given as hashes are left to git.
func TestRedTeamHTTPFilesAreFIFOs(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(http.NotFound))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, value string
		refused    bool
	}{
		{"http.sslCert", fifo, true},
		{"http.sslKey", fifo, true},
		{"http." + srv.URL + "/.sslCert", fifo, true},
		{"http.pinnedPubkey", fifo, true},
		{"http.pinnedPubkey", fifo + ";sha256//AAAA", true},
		{"http.proxySSLCert", fifo, true},
		{"http.proxySSLKey", fifo, true},
		{"http.proxySSLCAInfo", fifo, true},
		{"http.sslKey", ca, false},
		{"http.sslKey", filepath.Join(t.TempDir(), "missing"), false},
		{"http.pinnedPubkey", "sha256//AAAA", false},
	} {
		t.Run(tc.key+"="+filepath.Base(tc.value), func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			mustGit(t, r.Root, "remote", "add", "origin", srv.URL+"/o/r.git")
			mustGit(t, r.Root, "config", tc.key, tc.value)
			opened, err := Open(context.Background(), r.Root)
			if err != nil {
				t.Fatal(err)
			}
			opened.env = append(opened.env, "GIT_SSL_CAINFO="+ca)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err = opened.ListRemoteRefs(ctx, "origin", "refs/heads/*")
			if ctx.Err() != nil {
				t.Fatalf("the listing waited on the FIFO: %v", err)
			}
			if errors.Is(err, ErrUnsafeHTTPConfig) != tc.refused {
				t.Errorf("ListRemoteRefs = %v, want refused %v", err, tc.refused)
			}
			// An authenticated Repo's every git may fetch lazily.
			if _, err := Authenticated(ctx, opened, srv.URL, "ghs_secret"); errors.Is(err, ErrUnsafeHTTPConfig) != tc.refused {
				t.Errorf("Authenticated = %v, want refused %v", err, tc.refused)
			}
		})
	}
}
