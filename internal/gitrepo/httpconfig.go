package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// ErrUnsafeHTTPConfig is returned for a remote call when the repository's
// configuration names its own certificate authority for https, whom
// planex's token would then be sent to.
var ErrUnsafeHTTPConfig = errors.New("the repository's git config chooses whom https trusts")

// httpTrustKey matches the settings that decide whom git's https trusts:
// http.sslVerify, http.sslCAInfo, http.sslCAPath and http.curloptResolve,
// alone or for a URL (http.<url>.<key>). Names come from git in lower
// case but for the URL.
var httpTrustKey = regexp.MustCompile(`^http\.(?:.+\.)?(sslverify|sslcainfo|sslcapath|curloptresolve)$`)

// maxHTTPSettings bounds what httpOverrides reads of the settings: a
// configuration holding more is refused, never read in part (a setting
// past the cut would keep its effect).
const maxHTTPSettings = 1 << 20

// httpOverrides reads the repository's configuration (with its includes:
// the system and global files are never read) for the settings that
// decide whom git's https trusts, and returns the command-line settings
// that undo them: each http.<url>.sslVerify set again to true and each
// curloptResolve list emptied under the same name, since a setting for a
// URL outranks a general one whatever the order, and of two under one
// name the command line's comes last and wins. A certificate authority
// of the configuration's (sslCAInfo, sslCAPath) has no neutral value and
// is refused (ErrUnsafeHTTPConfig), naming the key, unless the user's
// GIT_SSL_CAINFO (GIT_SSL_CAPATH), which git takes over it, is set.
//
// Whoever could write the git directory before planex ran git (the writer
// of section 3 of docs/security.md) set `http.sslVerify=false` (or one
// for github.com's URL) with an `http.proxy` of theirs, and planex's
// push sent its token through a proxy that could read it.
func httpOverrides(ctx context.Context, r *Repo) ([]setting, error) {
	c := call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config, scans: r.scans,
		args: []string{"config", "-z", "--get-regexp", `^http\..*(sslverify|sslcainfo|sslcapath|curloptresolve)$`}}
	cmd, err := command(ctx, c)
	if err != nil {
		return nil, err
	}
	stdout := &headBuffer{max: maxHTTPSettings + 1}
	stderr := &headBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.b.Len() == 0 {
			return nil, nil // no such keys
		}
		return nil, fmt.Errorf("reading the repository's https settings: %s", strings.TrimSpace(stderr.b.String()+" "+err.Error()))
	}
	if stdout.b.Len() > maxHTTPSettings {
		return nil, fmt.Errorf("%w: its https settings pass %d bytes", ErrUnsafeHTTPConfig, maxHTTPSettings)
	}
	var out []setting
	seen := map[string]bool{}
	for _, entry := range strings.Split(stdout.b.String(), "\x00") {
		key, _, _ := strings.Cut(entry, "\n")
		m := httpTrustKey.FindStringSubmatch(key)
		if m == nil || seen[key] {
			continue
		}
		seen[key] = true
		switch m[1] {
		case "sslverify":
			out = append(out, setting{key, "true"})
		case "curloptresolve":
			out = append(out, setting{key, ""})
		case "sslcainfo", "sslcapath":
			// git takes GIT_SSL_CAINFO and GIT_SSL_CAPATH, the user's, over
			// the configuration.
			if _, ok := os.LookupEnv("GIT_SSL_" + strings.ToUpper(strings.TrimPrefix(m[1], "ssl"))); ok {
				continue
			}
			fallthrough
		default:
			return nil, fmt.Errorf("%w: %s is set; planex sends its token only to servers the system's certificate authorities (or GIT_SSL_CAINFO, GIT_SSL_CAPATH) vouch for: remove it", ErrUnsafeHTTPConfig, key)
		}
	}
	return out, nil
}

// trustedRemoteCall is remoteCall with the repository's https trust
// settings undone (httpOverrides).
func trustedRemoteCall(ctx context.Context, r *Repo, remote string, push bool, args []string, refs ...string) (call, error) {
	c := remoteCall(r, remote, push, args, refs...)
	over, err := httpOverrides(ctx, r)
	if err != nil {
		return c, fmt.Errorf("reaching %s: %w", remote, err)
	}
	c.config = append(append([]setting{}, c.config...), over...)
	return c, nil
}

// Authenticated is r.WithAuth(serverURL, token) with the repository's
// https trust settings undone (httpOverrides) on every call, not only on
// fetches and pushes: any git that meets a missing object in a partial
// clone fetches it from the promisor remote, carrying the header. A
// certificate authority of the configuration's is refused here, before
// the token is used at all.
func Authenticated(ctx context.Context, r *Repo, serverURL, token string) (*Repo, error) {
	if token == "" {
		return r, nil
	}
	over, err := httpOverrides(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("sending the token to %s: %w", serverURL, err)
	}
	a := r.WithAuth(serverURL, token)
	a.config = append(a.config, over...)
	return a, nil
}
