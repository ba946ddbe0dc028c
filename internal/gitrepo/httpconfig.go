package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// ErrUnsafeHTTPConfig is returned for a remote call when the repository's
// configuration names its own certificate authority for https, whom
// planex's token would then be sent to.
var ErrUnsafeHTTPConfig = errors.New("the repository's git config chooses whom https trusts")

// httpTrustKey matches the settings that decide whom git's https trusts
// and how: http.sslVerify, http.sslCAInfo, http.sslCAPath,
// http.curloptResolve, http.sslVersion and http.sslCipherList, and the
// cookie file git reads and writes (http.cookieFile, http.saveCookies),
// alone or for a URL (http.<url>.<key>). Names come from git in lower
// case but for the URL.
//
// It also matches the files git's https opens that have no neutral value
// (httpFileKey): they are checked, not undone (checkHTTPFiles).
var httpTrustKey = regexp.MustCompile(`^http\.(?:.+\.)?(sslverify|sslcainfo|sslcapath|curloptresolve|sslversion|sslcipherlist|cookiefile|savecookies|sslcert|sslkey|pinnedpubkey|proxysslcert|proxysslkey|proxysslcainfo)$`)

// httpFileKeys are the https settings naming a file git's https opens
// that no command-line value undoes (an empty client certificate or
// pinned key fails every connection).
var httpFileKeys = map[string]bool{"sslcert": true, "sslkey": true, "pinnedpubkey": true,
	"proxysslcert": true, "proxysslkey": true, "proxysslcainfo": true}

// httpOverrides reads the repository's configuration (with its includes:
// the system and global files are never read) for the settings that
// decide whom git's https trusts (the config scan, scanConfig, cached as
// the driver scan is), and returns the command-line settings that undo
// them (configScan.httpOverrides).
func httpOverrides(ctx context.Context, r *Repo) ([]setting, error) {
	s, err := r.scans.scan(ctx, call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config})
	if err != nil {
		return nil, unreadHTTPSettings(err)
	}
	return s.httpOverrides()
}

// unreadHTTPSettings is err, a failed config scan, for a call that needs
// the https trust settings: a config too large to read whole may hide one
// (ErrUnsafeHTTPConfig).
func unreadHTTPSettings(err error) error {
	if errors.Is(err, ErrConfigTooLarge) {
		return fmt.Errorf("%w: %w", ErrUnsafeHTTPConfig, err)
	}
	return err
}

// httpOverrides returns the command-line settings that undo the https
// trust settings s found: each http.<url>.sslVerify set again to true,
// each curloptResolve list, sslVersion, sslCipherList and cookieFile
// emptied and each saveCookies set to false under the same name, since a setting
// for a URL outranks a general one whatever the order, and of two under
// one name the command line's comes last and wins. A certificate
// authority of the configuration's (sslCAInfo, sslCAPath) has no neutral
// value and is refused (ErrUnsafeHTTPConfig), naming the key, unless the
// user's GIT_SSL_CAINFO (GIT_SSL_CAPATH), which git takes over it, is set.
//
// Whoever could write the git directory before planex ran git (the writer
// of section 3 of docs/security.md) set `http.sslVerify=false` (or one
// for github.com's URL) with an `http.proxy` of theirs, and planex's
// push sent its token through a proxy that could read it; with
// `http.cookieFile` naming a file of the user's and `http.saveCookies`,
// every fetch wrote the server's cookies over that file.
func (s configScan) httpOverrides() ([]setting, error) {
	var out []setting
	for _, key := range s.httpKeys {
		m := httpTrustKey.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		switch {
		case httpFileKeys[m[1]]:
			continue // checkHTTPFiles
		}
		switch m[1] {
		case "sslverify":
			out = append(out, setting{key, "true"})
		case "curloptresolve", "sslversion", "sslcipherlist", "cookiefile":
			// Empty is git's default: no resolver entries, curl's own
			// TLS versions and ciphers, no cookie file read.
			out = append(out, setting{key, ""})
		case "savecookies":
			out = append(out, setting{key, "false"})
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

// hasHTTPFiles says whether s lists a setting of httpFileKeys.
func (s configScan) hasHTTPFiles() bool {
	for _, key := range s.httpKeys {
		if m := httpTrustKey.FindStringSubmatch(key); m != nil && httpFileKeys[m[1]] {
			return true
		}
	}
	return false
}

// maxHTTPFileSettings bounds what checkHTTPFiles reads of git's answer.
const maxHTTPFileSettings = 1 << 20

// checkHTTPFiles refuses (ErrUnsafeHTTPConfig) c when the configuration
// names, as a file git's https opens (httpFileKeys), one that exists and
// is not a regular file. git opens it, and waits, whatever it is: a
// git-directory writer's FIFO there hung every fetch, listing and push
// until the job's time-out. A missing file is git's to report; a pinned
// key given as hashes names no file. Run only when the scan lists such a
// setting, with c's own config and includes.
func checkHTTPFiles(ctx context.Context, c call) error {
	global, _, _ := splitArgs(c.args)
	read := c
	read.stdin, read.trustHTTP = nil, false
	read.args = append(append([]string{}, global...), "config", "-z", "--type=path", "--get-regexp",
		`^http\..*(sslcert|sslkey|pinnedpubkey|proxysslcert|proxysslkey|proxysslcainfo)$`)
	cmd, done, err := command(ctx, read)
	if err != nil {
		return err
	}
	defer done()
	stdout := &headBuffer{max: maxHTTPFileSettings + 1}
	stderr := &headBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.b.Len() == 0 {
			return nil // none left since the scan
		}
		return fmt.Errorf("reading the repository's https files: %s", strings.TrimSpace(stderr.b.String()+" "+err.Error()))
	}
	if stdout.b.Len() > maxHTTPFileSettings {
		return fmt.Errorf("%w: its https file settings pass %d bytes", ErrUnsafeHTTPConfig, maxHTTPFileSettings)
	}
	for _, entry := range strings.Split(stdout.b.String(), "\x00") {
		key, value, _ := strings.Cut(entry, "\n")
		if path := httpFilePath(key, value, c.dir); path != "" {
			if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
				return fmt.Errorf("%w: %s names %s, which is not a regular file: remove it", ErrUnsafeHTTPConfig, key, value)
			}
		}
	}
	return nil
}

// httpFilePath is the file a setting's value names for git run in dir,
// or "" for none: a pinned key is a file's name or sha256// hashes, and
// may be followed by more hashes after a semicolon.
func httpFilePath(key, value, dir string) string {
	if strings.HasSuffix(key, ".pinnedpubkey") {
		value, _, _ = strings.Cut(value, ";")
		if strings.HasPrefix(value, "sha256//") {
			return ""
		}
	}
	if value == "" || key == "" {
		return ""
	}
	if !filepath.IsAbs(value) {
		value = filepath.Join(dir, value)
	}
	return value
}

// trustedRemoteCall is remoteCall with the repository's https trust
// settings undone (httpOverrides) by the call itself: the scan that lists
// the drivers before it runs lists them too, and a certificate authority
// of the configuration's fails the call before git starts.
func trustedRemoteCall(r *Repo, remote string, push bool, args []string, refs ...string) call {
	c := remoteCall(r, remote, push, args, refs...)
	c.trustHTTP = true
	return c
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
	// A lazy fetch opens the https files too.
	if err := checkHTTPFiles(ctx, call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config}); err != nil {
		return nil, fmt.Errorf("sending the token to %s: %w", serverURL, err)
	}
	a := r.WithAuth(serverURL, token)
	a.config = append(a.config, over...)
	return a, nil
}
