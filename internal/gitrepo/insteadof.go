package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
)

// ErrRemoteRewritten is returned for a remote that the repository's
// configuration rewrites (url.<base>.insteadOf, pushInsteadOf) to
// somewhere planex will not go: for a local remote anywhere (git would
// reach another local repository, and run its hooks, in planex's place),
// for one over the network another repository or a weaker transport.
var ErrRemoteRewritten = errors.New("the repository's git config rewrites a remote's URL")

// maxRewriteSettings bounds what readRewrites reads; a configuration
// holding more is refused, never read in part.
const maxRewriteSettings = 1 << 20

// rewrite is one url.<base>.insteadOf (or pushInsteadOf) value: a URL
// starting with from is taken as base followed by the rest.
type rewrite struct {
	key, base, from string
	push            bool
}

// readRewrites reads the repository's url rewrites, with its includes
// (the system and global files are never read), or none when scan, the
// config scan every protected call makes (remembered while the config
// files are unchanged), says there is none.
func readRewrites(ctx context.Context, r *Repo, scan configScan) ([]rewrite, error) {
	if !scan.rewrites {
		return nil, nil
	}
	c := call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config, scans: r.scans,
		args: []string{"config", "-z", "--get-regexp", `^url\..*\.(insteadof|pushinsteadof)$`}}
	cmd, done, err := command(ctx, c)
	if err != nil {
		return nil, err
	}
	defer done()
	stdout := &headBuffer{max: maxRewriteSettings + 1}
	stderr := &headBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.b.Len() == 0 {
			return nil, nil // no such keys
		}
		return nil, fmt.Errorf("reading the repository's url rewrites: %s", strings.TrimSpace(stderr.b.String()+" "+err.Error()))
	}
	if stdout.b.Len() > maxRewriteSettings {
		return nil, fmt.Errorf("%w: its url rewrites pass %d bytes", ErrRemoteRewritten, maxRewriteSettings)
	}
	return parseRewrites(stdout.b.String()), nil
}

// parseRewrites reads `git config -z --get-regexp` entries of url.*
// rewrites (key, newline, value; the variable name in lower case, the
// base as written).
func parseRewrites(out string) []rewrite {
	var rw []rewrite
	for _, entry := range strings.Split(out, "\x00") {
		key, value, _ := strings.Cut(entry, "\n")
		push := strings.HasSuffix(key, ".pushinsteadof")
		name := strings.TrimSuffix(strings.TrimSuffix(key, ".insteadof"), ".pushinsteadof")
		if key == "" || name == key || !strings.HasPrefix(name, "url.") {
			continue
		}
		rw = append(rw, rewrite{key: key, base: strings.TrimPrefix(name, "url."), from: value, push: push})
	}
	return rw
}

// rewritten is what git makes of target: for a push the rewrites of the
// longest pushInsteadOf matching its start, if any, else (and for
// anything but a push) those of the longest insteadOf. git takes the
// first of several equally long; all are returned, each judged.
func rewritten(rw []rewrite, target string, push bool) []rewrite {
	if push {
		if got := longestMatches(rw, target, true); len(got) > 0 {
			return got
		}
	}
	return longestMatches(rw, target, false)
}

func longestMatches(rw []rewrite, target string, push bool) []rewrite {
	var out []rewrite
	best := -1
	for _, w := range rw {
		if w.push != push || !strings.HasPrefix(target, w.from) || len(w.from) < best {
			continue
		}
		if len(w.from) > best {
			out, best = out[:0], len(w.from)
		}
		out = append(out, w)
	}
	return out
}

// refuseRewrite refuses (ErrRemoteRewritten) a rewrite of the URL planex
// names for remote. A local remote may not be rewritten at all: planex
// reaches it with git's own receive and upload programs, which run the
// hooks of the repository they reach with planex's environment. One over
// the network may be rewritten only to the same repository on the same
// host over https or ssh (sameRepository: a user's rewrite of https to
// ssh, or one adding a user name): whoever had the git directory before
// sent planex's push, with a token that may write there too, to another
// repository of the host. Nor may a remote be named like the URL, which
// git reads as that remote's name first.
func refuseRewrite(ctx context.Context, r *Repo, remote string, push bool) error {
	target := remoteTarget(r, remote, push)
	scan, err := r.scans.scan(ctx, call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config})
	if err != nil {
		return fmt.Errorf("reaching %s: reading the repository's url rewrites: %w", remote, err)
	}
	// git takes a URL it is given for the name of a remote first: the
	// settings of a remote named like it (its url, pushurl, proxy) apply.
	// A name planex was given (not a remote since Open) is git's to read.
	if scan.remotes[target] && (target != remote || strings.ContainsAny(target, ":/")) {
		return fmt.Errorf("reaching %s: %w: a remote is named %s; remove it", remote, ErrRemoteRewritten, target)
	}
	rw, err := readRewrites(ctx, r, scan)
	if err != nil {
		return fmt.Errorf("reaching %s: %w", remote, err)
	}
	local := localURL(target)
	for _, w := range rw {
		if local && (push || !w.push) && strings.HasPrefix(target, w.from) {
			return fmt.Errorf("reaching %s: %w: %s = %s; remove it", remote, ErrRemoteRewritten, w.key, w.from)
		}
	}
	if local {
		return nil
	}
	for _, w := range rewritten(rw, target, push) {
		if to := w.base + strings.TrimPrefix(target, w.from); !sameRepository(target, to) {
			return fmt.Errorf("reaching %s: %w: %s = %s makes it %s; remove it", remote, ErrRemoteRewritten, w.key, w.from, to)
		}
	}
	return nil
}

// repoURL is what names a repository in a remote's URL.
type repoURL struct {
	scheme, host, port, path, rest string
}

// parseRepoURL reads a URL (scheme://[user@]host[:port]/path) or git's
// scp-like form ([user@]host:path, ssh); ok is false for anything else.
func parseRepoURL(s string) (u repoURL, ok bool) {
	if strings.Contains(s, "://") {
		p, err := url.Parse(s)
		if err != nil || p.Hostname() == "" {
			return u, false
		}
		u = repoURL{scheme: strings.ToLower(p.Scheme), host: asciiHost(p.Hostname()), path: p.Path}
		if p.RawQuery != "" || p.Fragment != "" || p.ForceQuery {
			u.rest = "?" + p.RawQuery + "#" + p.Fragment
		}
		switch u.scheme {
		case "git+ssh", "ssh+git":
			u.scheme = "ssh"
		}
		u.port = portOf(u.scheme, p.Port())
	} else {
		colon := strings.Index(s, ":")
		if colon <= 0 || strings.Contains(s[:colon], "/") {
			return u, false
		}
		hostPart := s[:colon]
		u = repoURL{scheme: "ssh", host: asciiHost(hostPart[strings.LastIndex(hostPart, "@")+1:]), path: s[colon+1:]}
	}
	u.path = strings.Trim(strings.TrimSuffix(strings.TrimRight(u.path, "/"), ".git"), "/")
	return u, u.host != "" && u.path != ""
}

// defaultPorts are the ports a transport uses when a URL names none.
var defaultPorts = map[string]int{"https": 443, "http": 80, "ssh": 22}

// portOf is a URL's port as a comparable string: "" for none or the
// transport's own (https://host:443/ is https://host/, as to curl), else
// the number in decimal (curl reads :0443 as 443). A port that is no
// number is kept as written, matching only itself.
func portOf(scheme, port string) string {
	n, err := strconv.Atoi(port)
	switch {
	case port == "":
		return ""
	case err != nil || n < 0:
		return port
	case n == defaultPorts[scheme]:
		return ""
	}
	return strconv.Itoa(n)
}

// asciiHost is host in lower case, or "" (no network remote) when it
// holds a byte past ASCII: Go lowers some letters to ASCII ones (a
// capital I with a dot to i, the Kelvin sign to k), while curl's IDN
// mapping makes such a host another domain, one anybody may register
// (xn--…), so "gİthub.com" compared equal to github.com and planex's
// token went to the other.
func asciiHost(host string) string {
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			return ""
		}
	}
	return strings.ToLower(host)
}

// sameRepository says whether git reaching to instead of from reaches the
// same repository: the same host and path in any case (GitHub's, like
// most hosts', tell no case; the rewrite that differs only in case is
// the user's), but for a trailing `.git` or slash, no other query, over https or ssh (or from's own
// transport), on the same port when the transport is kept. A user name
// or password added (a token in the URL) changes nothing.
func sameRepository(from, to string) bool {
	a, okA := parseRepoURL(from)
	b, okB := parseRepoURL(to)
	if !okA || !okB || a.host != b.host || !asciiEqualFold(a.path, b.path) || a.rest != b.rest {
		return false
	}
	if a.scheme == b.scheme {
		return a.port == b.port
	}
	return b.scheme == "https" || b.scheme == "ssh"
}

// asciiEqualFold says whether a and b are the same but for the case of
// ASCII letters: strings.EqualFold also folds Unicode (the Kelvin sign is
// a k, a long s an s), and a server that tells those apart names another
// repository by them.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// ErrRemoteElsewhere is returned for a remote whose URL names another
// repository than the one planex was told it works on.
var ErrRemoteElsewhere = errors.New("the remote names another repository")

// ErrRemoteLocal is returned for a remote that CheckRemote was told must
// be reached over the network but is a repository on this machine (a
// path, a file:// URL), or that is not configured at all.
var ErrRemoteLocal = errors.New("the remote is a local repository")

// CheckRemote refuses (ErrRemoteElsewhere) a remote whose URL or push URL,
// as they were when the repository was opened, reaches over the network
// another repository than want (a URL: the Action's server and
// GITHUB_REPOSITORY), by sameRepository's rules. Unless allowLocal, a
// remote that is missing or is a local repository is refused too
// (ErrRemoteLocal).
//
// Whoever could write the git directory before planex opened it (an
// earlier agent without the sandbox, on a self-hosted runner that keeps
// the workspace: actions/checkout checks the remote's URL and never its
// push URL) set `remote.origin.pushurl` to another repository of the
// host: planex's pushes went there with the token. Or they set it to a
// repository on the runner's disk: git reaches that one by starting its
// receive program there, which runs that repository's hooks (and reads
// its config) with planex's environment; no option of the pushing side
// switches them off.
func CheckRemote(r *Repo, name, want string, allowLocal bool) error {
	u, ok := r.remotes[name]
	if !ok && !allowLocal {
		return fmt.Errorf("%w: no remote %s is configured, but planex works on %s", ErrRemoteLocal, name, want)
	}
	for _, got := range append([]string{u.fetch, u.push}, u.more...) {
		switch {
		case got == "":
			continue
		case localURL(got) && allowLocal:
			continue
		case localURL(got):
			return fmt.Errorf("%w: remote %s is %s, a local repository whose hooks would run with planex's environment, but planex works on %s; set it back (git remote set-url)", ErrRemoteLocal, name, got, want)
		case !sameRepository(want, got):
			return fmt.Errorf("%w: remote %s is %s, but planex works on %s; set it back (git remote set-url)", ErrRemoteElsewhere, name, got, want)
		}
	}
	return nil
}
