package gitrepo

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamNetworkRemoteRewrittenToAnotherRepository: the remote is
// reached over the network (here smart http; with the Action, https to
// github.com with the token's header for the host), and whoever could
// write the git directory adds `url.<another repository on the same
// host>.insteadOf` (or `pushInsteadOf`) naming the remote's URL or a
// start of it. planex's push went to that other repository, which the
// token may write too (a public one of the same owner: the run's code
// published). planex refuses a rewrite to anything but the same
// repository on the same host, and still follows one that only adds a
// user name or the `.git` suffix.
func TestRedTeamNetworkRemoteRewrittenToAnotherRepository(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		key, other string // other: the rewrite's base, relative to the server's URL
		from       string // what it replaces, relative to the server's URL
		refused    bool
		included   bool // written in a file the config includes
	}{
		{"insteadOf to another repository", "insteadOf", "/evil/e.git", "/o/r.git", true, false},
		{"pushInsteadOf to another repository", "pushInsteadOf", "/evil/e.git", "/o/r.git", true, false},
		{"insteadOf of the host to another owner", "insteadOf", "/evil/", "/o/", true, false},
		{"insteadOf of the host's root", "insteadOf", "/evil", "/o", true, false},
		{"insteadOf through include.path", "InsteadOf", "/evil/e.git", "/o/r.git", true, true},
		{"insteadOf adding .git", "insteadOf", "/o/r.git", "/o/r", false, false},
		{"pushInsteadOf to the same repository", "pushInsteadOf", "/o/", "/o/", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRepo(t)
			root := t.TempDir()
			origin := filepath.Join(root, "o", "r.git")
			others := []string{filepath.Join(root, "evil", "e.git"), filepath.Join(root, "evil", "r.git")}
			for _, bare := range append([]string{origin}, others...) {
				mustGit(t, r.Root, "init", "-q", "--bare", bare)
				mustGit(t, bare, "config", "http.receivepack", "true")
			}
			base, _ := smartHTTPServer(t, root)
			remote := base + "/o/r.git"
			if !tc.refused && strings.HasSuffix(tc.from, "/r") {
				remote = base + "/o/r"
			}
			mustGit(t, r.Root, "remote", "add", "origin", remote)
			opened, err := Open(ctx, r.Root)
			if err != nil {
				t.Fatal(err)
			}
			head, _ := opened.Head(ctx)
			mustGit(t, r.Root, "update-ref", "refs/heads/planex/s1", head)
			if tc.included {
				inc := filepath.Join(t.TempDir(), "included")
				mustGit(t, r.Root, "config", "--file", inc, "url."+base+tc.other+"."+tc.key, base+tc.from)
				mustGit(t, r.Root, "config", "include.path", inc)
			} else {
				mustGit(t, r.Root, "config", "url."+base+tc.other+"."+tc.key, base+tc.from)
			}

			err = opened.PushRef(ctx, "origin", "refs/heads/planex/s1", false, "")
			for _, other := range others {
				if got := strings.TrimSpace(cleanGit(t, other, "for-each-ref")); got != "" {
					t.Errorf("the push reached %s: %s", other, got)
				}
			}
			if !tc.refused {
				if err != nil {
					t.Fatalf("PushRef with a rewrite to the same repository: %v", err)
				}
				if got := strings.TrimSpace(cleanGit(t, origin, "rev-parse", "refs/heads/planex/s1")); got != head {
					t.Errorf("the push did not reach the remote: %q", got)
				}
				return
			}
			if !errors.Is(err, ErrRemoteRewritten) {
				t.Errorf("PushRef = %v, want ErrRemoteRewritten", err)
			}
			if _, err := opened.RemoteRef(ctx, "origin", "refs/heads/main"); !strings.HasPrefix(tc.key, "push") && !errors.Is(err, ErrRemoteRewritten) {
				t.Errorf("RemoteRef = %v, want ErrRemoteRewritten", err)
			}
		})
	}
}

// TestSameRepository: a rewrite of a network remote is followed only to
// the same repository on the same host, over https or ssh.
func TestSameRepository(t *testing.T) {
	t.Parallel()
	const gh = "https://github.com/o/r.git"
	for _, tc := range []struct {
		to   string
		same bool
	}{
		{"git@github.com:o/r.git", true},        // the user's https to ssh
		{"ssh://git@github.com/o/r", true},      // the same, as a URL
		{"git+ssh://git@GitHub.com/o/r/", true}, // host in any case
		{"https://x:ghp_token@github.com/o/r.git", true},
		{"https://github.com/o/r", true},
		{"https://github.com/o/r.git/", true},
		{"https://github.com/o/r2.git", false},
		{"https://github.com/evil/r.git", false},
		{"https://github.com/O/R.git", true}, // GitHub tells no case
		{"git@github.com:evil/r.git", false},
		{"http://github.com/o/r.git", false}, // the token's transport weakened
		{"https://github.com:8443/o/r.git", false},
		{"https://github.com:443/o/r.git", true}, // https's own port, named
		{"https://github.com:0443/o/r", true},
		{"https://github.com:/o/r", true},
		{"https://github.com:80/o/r.git", false},
		{"http://github.com:443/o/r.git", false},
		{"ssh://git@github.com:22/o/r.git", true},
		{"https://github.com:+443/o/r.git", false},
		{"https://github.com/o/r.git?/evil/x", false},
		{"https://github.com/evil/x#/o/r.git", false},
		{"https://github.com.evil.example/o/r.git", false},
		{"https://evil.example/o/r.git", false},
		{"https://g\u0130thub.com/o/r.git", false}, // lowers to github.com in Go alone
		{"git@G\u0130THUB.COM:o/r.git", false},
		{"/srv/o/r.git", false},
		{"file:///srv/o/r.git", false},
		{"ext::sh -c evil", false},
		{"", false},
	} {
		if got := sameRepository(gh, tc.to); got != tc.same {
			t.Errorf("sameRepository(%q, %q) = %v, want %v", gh, tc.to, got, tc.same)
		}
	}
	if !sameRepository("git@github.com:o/r.git", "https://github.com/o/r") {
		t.Error("ssh to https refused")
	}
	// Case is ASCII's alone: Unicode folding makes the Kelvin sign a k and
	// a long s an s, letters a server may tell apart.
	for _, to := range []string{"https://github.com/o/\u212a", "https://github.com/\u017fo/k", "https://github.com/o/\u212aK"} {
		if sameRepository("https://github.com/o/k", to) {
			t.Errorf("sameRepository(o/k, %q) = true", to)
		}
	}
	if !sameRepository("https://github.com/o/k", "https://github.com/O/K") {
		t.Error("ASCII case refused")
	}
}

// TestRewritten: git's choice among rewrites: the longest match, for a
// push a pushInsteadOf before any insteadOf, every equally long one.
func TestRewritten(t *testing.T) {
	t.Parallel()
	rw := parseRewrites("url.A.insteadof\nhttps://h/\x00url.B.insteadof\nhttps://h/o/\x00url.C.pushinsteadof\nhttps://\x00url.D.insteadof\nhttps://h/o/\x00")
	bases := func(ws []rewrite) string {
		var b strings.Builder
		for _, w := range ws {
			b.WriteString(w.base)
		}
		return b.String()
	}
	for _, tc := range []struct {
		target string
		push   bool
		want   string
	}{
		{"https://h/o/r", false, "BD"},
		{"https://h/x/r", false, "A"},
		{"https://h/o/r", true, "C"},
		{"ssh://h/o/r", true, ""},
	} {
		if got := bases(rewritten(rw, tc.target, tc.push)); got != tc.want {
			t.Errorf("rewritten(%q, push %v) = %q, want %q", tc.target, tc.push, got, tc.want)
		}
	}
}

// TestRedTeamRemoteNamesAnotherRepository: whoever could write the git
// directory before planex opened it sets the remote's push URL (or its
// URL) to another repository of the host; the Action's check against the
// workflow's repository refuses it, and leaves the user's ssh or
// credential-carrying spelling alone. A local remote, whose hooks git's
// receive program runs, is refused unless allowed (the tests' origins).
func TestRedTeamRemoteNamesAnotherRepository(t *testing.T) {
	t.Parallel()
	const want = "https://github.com/o/r"
	for _, tc := range []struct {
		url, pushURL string
		refused      bool
	}{
		{"https://github.com/o/r", "https://github.com/evil/x", true},
		{"https://github.com/evil/x.git", "", true},
		{"https://github.com/o/r", "http://github.com/o/r", true},
		{"https://github.com/o/r.git", "", false},
		// A capital I with a dot lowers to i in Go, but curl's IDN
		// mapping makes the host another, registrable domain.
		{"https://github.com/o/r", "https://g\u0130thub.com/o/r", true},
		{"g\u0130thub.com:o/r", "", true},
		{"git@github.com:O/R.git", "https://x-access-token:t@github.com/o/r", false},
		{"https://github.com:443/o/r", "ssh://git@github.com:22/o/r.git", false},
		{"https://github.com:0443/o/r", "", false},
		{"https://github.com:8443/o/r", "", true},
	} {
		r := newRepo(t)
		mustGit(t, r.Root, "remote", "add", "origin", tc.url)
		if tc.pushURL != "" {
			mustGit(t, r.Root, "remote", "set-url", "--push", "origin", tc.pushURL)
		}
		opened, err := Open(context.Background(), r.Root)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckRemote(opened, "origin", want, false); errors.Is(err, ErrRemoteElsewhere) != tc.refused {
			t.Errorf("CheckRemote with url %s, push url %s = %v, want refused %v", tc.url, tc.pushURL, err, tc.refused)
		}
	}
}

// TestRedTeamRemoteIsALocalRepository: whoever could write the git
// directory before planex opened it points origin (its URL or push URL)
// at a repository on this machine, or removes it: git reaches a local
// repository by starting its receive program there, which runs that
// repository's hooks with planex's environment. CheckRemote refuses it
// unless told local remotes are allowed.
func TestRedTeamRemoteIsALocalRepository(t *testing.T) {
	t.Parallel()
	const want = "https://github.com/o/r"
	for _, tc := range []struct {
		name string
		cfg  [][]string
	}{
		{"path", [][]string{{"remote.origin.url", "/srv/mirror/r.git"}}},
		{"file URL", [][]string{{"remote.origin.url", "file:///srv/mirror/r.git"}}},
		{"relative path", [][]string{{"remote.origin.url", "../r.git"}}},
		{"bare name", [][]string{{"remote.origin.url", "mirror"}}},
		{"local push url", [][]string{{"remote.origin.url", want}, {"remote.origin.pushurl", "/srv/mirror/r.git"}}},
		{"second local push url", [][]string{{"remote.origin.url", want}, {"remote.origin.pushurl", want}, {"remote.origin.pushurl", "/tmp/r"}}},
		{"no origin", [][]string{{"remote.other.url", want}}},
	} {
		opened := repoConfigured(t, tc.cfg)
		if err := CheckRemote(opened, "origin", want, false); !errors.Is(err, ErrRemoteLocal) {
			t.Errorf("%s: CheckRemote = %v, want ErrRemoteLocal", tc.name, err)
		}
		if err := CheckRemote(opened, "origin", want, true); err != nil {
			t.Errorf("%s: CheckRemote allowing local remotes = %v", tc.name, err)
		}
	}
}

// TestRedTeamRemoteNamedLikeTheURL: planex names a remote to git by its
// URL, and git first looks for a configured remote of that name: whoever
// could write the git directory adds `remote.<the URL>.url` (or
// `.pushurl`) naming another repository, and planex's push and listing
// went there. planex refuses a remote the configuration names like the
// URL it reaches.
func TestRedTeamRemoteNamedLikeTheURL(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"url", "pushurl"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r := newRepo(t)
			root := t.TempDir()
			origin, other := filepath.Join(root, "o", "r.git"), filepath.Join(root, "evil", "e.git")
			for _, bare := range []string{origin, other} {
				mustGit(t, r.Root, "init", "-q", "--bare", bare)
				mustGit(t, bare, "config", "http.receivepack", "true")
			}
			base, _ := smartHTTPServer(t, root)
			mustGit(t, r.Root, "remote", "add", "origin", base+"/o/r.git")
			opened, err := Open(ctx, r.Root)
			if err != nil {
				t.Fatal(err)
			}
			head, _ := opened.Head(ctx)
			mustGit(t, r.Root, "update-ref", "refs/heads/planex/s1", head)
			settle()
			if _, err := opened.RemoteRef(ctx, "origin", "refs/heads/main"); err != nil {
				t.Fatal(err)
			}
			if key == "pushurl" {
				mustGit(t, r.Root, "config", "remote."+base+"/o/r.git.url", base+"/o/r.git")
			}
			mustGit(t, r.Root, "config", "remote."+base+"/o/r.git."+key, base+"/evil/e.git")
			settle()
			err = opened.PushRef(ctx, "origin", "refs/heads/planex/s1", false, "")
			if got := strings.TrimSpace(cleanGit(t, other, "for-each-ref")); got != "" {
				t.Errorf("the push reached the other repository: %s", got)
			}
			if !errors.Is(err, ErrRemoteRewritten) {
				t.Errorf("PushRef = %v, want ErrRemoteRewritten", err)
			}
			if _, err := opened.RemoteRef(ctx, "origin", "refs/heads/main"); key == "url" && !errors.Is(err, ErrRemoteRewritten) {
				t.Errorf("RemoteRef = %v, want ErrRemoteRewritten", err)
			}
		})
	}
}

// TestRedTeamRemoteWithSeveralURLs: whoever could write the git directory
// gives origin a second push URL (or a second URL) naming another
// repository after the first, right one: CheckRemote looked at the first
// value of each, and git pushes to every push URL, so the Action's push
// and its token reached the second. Every value is checked, and a push
// names one URL to git, never the remote's name.
func TestRedTeamRemoteWithSeveralURLs(t *testing.T) {
	t.Parallel()
	const want = "https://github.com/o/r"
	for _, tc := range []struct {
		name string
		cfg  [][]string
	}{
		{"second push url", [][]string{{"remote.origin.url", want}, {"remote.origin.pushurl", want}, {"remote.origin.pushurl", "https://github.com/evil/x"}}},
		{"second url", [][]string{{"remote.origin.url", want}, {"remote.origin.url", "https://github.com/evil/x"}}},
		{"push urls alone", [][]string{{"remote.origin.pushurl", want}, {"remote.origin.pushurl", "https://github.com/evil/x"}}},
	} {
		opened := repoConfigured(t, tc.cfg)
		if err := CheckRemote(opened, "origin", want, false); !errors.Is(err, ErrRemoteElsewhere) {
			t.Errorf("%s: CheckRemote = %v, want ErrRemoteElsewhere", tc.name, err)
		}
	}
	// A push to a remote with push URLs alone names the first to git.
	r := newRepo(t)
	mustGit(t, r.Root, "config", "--add", "remote.origin.pushurl", want)
	opened, err := Open(context.Background(), r.Root)
	if err != nil {
		t.Fatal(err)
	}
	if got := remoteTarget(opened, "origin", true); got != want {
		t.Errorf("push target %q, want %q", got, want)
	}
}

// repoConfigured is a new repository with each key and value of cfg
// added to its config (in order, a key given twice holding both), opened
// afresh so that nothing of the config is remembered from before.
func repoConfigured(t *testing.T, cfg [][]string) *Repo {
	t.Helper()
	r := newRepo(t)
	for _, kv := range cfg {
		mustGit(t, r.Root, "config", "--add", kv[0], kv[1])
	}
	opened, err := Open(context.Background(), r.Root)
	if err != nil {
		t.Fatal(err)
	}
	return opened
}
