package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Package managers' machine-wide configurations.
//
// npm and pip read a configuration of the whole installation besides the
// user's: npm its global npmrc (<prefix>/etc/npmrc, the prefix being the
// folder above the one holding node: a runner's tool cache,
// /opt/hostedtoolcache/node/<v>/x64/etc/npmrc, or /usr/local/etc/npmrc,
// Debian's /etc/npmrc), pip /etc/pip.conf, /etc/xdg/pip/pip.conf and
// the pip.conf of a Python's prefix (its site configuration: a tool
// cache's Python, a virtual environment on PATH).
// `npm config set --global //registry/:_authToken=…`, a workflow's
// `pip config set --global index-url https://user:token@…` or an admin
// leaves a registry's token there, outside every home, readable by
// every uid. A contained process is shown each such file without its
// credentials: the lines setting a token, a password or basic
// credentials are left out and every URL loses its user name and
// password; the rest (a mirror, a proxy, a cache folder) stays, so
// installs that need no token work as before. A client key the file
// names (npm's keyfile, pip's client-cert) is covered.

// maxPackageConfig bounds the size of a configuration read to strip.
const maxPackageConfig = 1 << 20

// pipSystemConfigs are pip's machine-wide configuration files.
var pipSystemConfigs = []string{"/etc/pip.conf", "/etc/xdg/pip/pip.conf"}

// packageConfigFiles are the machine-wide npm and pip configurations base
// (planex's environment) leads to, existing or not, and those to cover
// whole (tool cache versions past the bound, toolCacheConfigs'): the global npmrc of
// each folder of PATH holding node or npm and of NPM_CONFIG_PREFIX, the
// one NPM_CONFIG_GLOBALCONFIG names, Debian's and /usr/local's, pip's
// machine-wide ones and the site one of each folder of PATH holding a
// Python or pip.
func packageConfigFiles(base []string) (files, cover []string) {
	var out []string
	add := func(p string) {
		if filepath.IsAbs(p) && !slices.Contains(out, filepath.Clean(p)) {
			out = append(out, filepath.Clean(p))
		}
	}
	for i, dir := range filepath.SplitList(lookup(base, "PATH")) {
		if i >= 64 {
			break
		}
		if !filepath.IsAbs(dir) {
			continue
		}
		for _, p := range pathDirConfigs(dir) {
			add(p)
		}
	}
	for _, p := range npmConfigNamed(base) {
		add(p)
	}
	cached, cover := toolCacheConfigs(base)
	for _, p := range cached {
		add(p)
	}
	// pip's machine-wide files are looked for in each folder of
	// XDG_CONFIG_DIRS (/etc/xdg when unset, below).
	for i, d := range filepath.SplitList(lookup(base, "XDG_CONFIG_DIRS")) {
		if i >= 64 {
			break
		}
		if filepath.IsAbs(d) {
			add(filepath.Join(d, "pip", "pip.conf"))
		}
	}
	add("/etc/npmrc")
	add("/usr/etc/npmrc")
	add("/usr/local/etc/npmrc")
	for _, p := range pipSystemConfigs {
		add(p)
	}
	return out, cover
}

// pathDirConfigs are the npm and pip configurations of the
// installations a folder of PATH (absolute) holds programs of: the
// global npmrc of its prefix where it holds node or npm, the site
// pip.conf where it holds a Python or pip, and the same of the prefix
// node's or Python's links lead to (a tarball's /opt/node-v22/bin/node
// linked into /usr/local/bin: npm's prefix is the resolved one) or a
// wrapper script in their place names (launcherHomes).
func pathDirConfigs(dir string) []string {
	var out []string
	prefix := filepath.Dir(filepath.Clean(dir))
	for _, prog := range []string{"node", "npm"} {
		if _, err := os.Lstat(filepath.Join(dir, prog)); err == nil {
			out = append(out, filepath.Join(prefix, "etc", "npmrc"))
		}
	}
	for _, prog := range []string{"python3", "python", "pip3", "pip"} {
		if _, err := os.Lstat(filepath.Join(dir, prog)); err == nil {
			out = append(out, filepath.Join(prefix, "pip.conf"))
		}
	}
	for _, prog := range []string{"node", "python3", "python"} {
		real, err := filepath.EvalSymlinks(filepath.Join(dir, prog))
		if err != nil {
			continue
		}
		// A wrapper script names its installation instead (exec
		// /opt/node-v22/bin/node "$@").
		for _, p := range append([]string{filepath.Dir(filepath.Dir(real))}, wrappedHomes(filepath.Join(dir, prog), prog, wrapperLine([]string{"NODE_HOME", "PYTHONHOME"}, prog))...) {
			if prog == "node" {
				out = append(out, filepath.Join(p, "etc", "npmrc"))
			} else {
				out = append(out, filepath.Join(p, "pip.conf"))
			}
		}
	}
	return out
}

// maxWrapperDepth bounds the wrapper scripts followed one from another
// (wrappedHomes).
const maxWrapperDepth = 8

// wrappedHomes are the installations the wrapper script launcher names
// on a line line matches (launcherHomes), and those named in turn by the installations'
// bin/<prog> where that is a wrapper too (a version switch's shim
// exec'ing the real one) or links elsewhere, to maxWrapperDepth
// scripts; a loop of wrappers ends where a home comes again.
func wrappedHomes(launcher, prog string, line *regexp.Regexp) []string {
	var out []string
	next := []string{launcher}
	for depth := 0; depth < maxWrapperDepth && len(next) > 0; depth++ {
		var found []string
		for _, l := range next {
			for _, h := range launcherHomes(l, line) {
				if !slices.Contains(out, h) {
					out = append(out, h)
					found = append(found, h)
				}
			}
		}
		next = next[:0]
		for _, h := range found {
			bin := filepath.Join(h, "bin", prog)
			if real, err := filepath.EvalSymlinks(bin); err == nil {
				if p := filepath.Dir(filepath.Dir(real)); !slices.Contains(out, p) {
					out = append(out, p)
				}
				next = append(next, bin)
			}
		}
	}
	return out
}

// toolCacheConfigPatterns are where the versions of Node.js and Python
// a tool cache holds keep their machine-wide configuration
// (<tool>/<version>/<arch>/...).
var toolCacheConfigPatterns = []string{"node/*/*/etc/npmrc", "Python/*/*/pip.conf", "PyPy/*/*/pip.conf"}

// maxToolCacheConfigs bounds the configurations taken from each pattern.
const maxToolCacheConfigs = 256

// toolCacheConfigs are the npm and pip configurations of every version
// in the runner's tool cache (RUNNER_TOOL_CACHE, Azure Pipelines'
// AGENT_TOOLSDIRECTORY) that has one, not only of those on PATH: a
// contained process can run any of them, or read the file by its path.
// Those past maxToolCacheConfigs of a pattern are to cover (boundedMatches).
func toolCacheConfigs(base []string) (files, cover []string) {
	for _, name := range []string{"RUNNER_TOOL_CACHE", "AGENT_TOOLSDIRECTORY"} {
		cache := lookup(base, name)
		if !filepath.IsAbs(cache) {
			continue
		}
		for _, pattern := range toolCacheConfigPatterns {
			matches, _ := filepath.Glob(filepath.Join(cache, pattern))
			read, rest := boundedMatches(matches)
			files, cover = append(files, read...), append(cover, rest...)
		}
	}
	return files, cover
}

// boundedMatches splits the files a pattern matched into the first
// maxToolCacheConfigs, read and shown filtered, and the rest, their
// links resolved, to cover whole: a folder holding more than planex
// reads has none shown as it is, credentials and all.
func boundedMatches(matches []string) (read, cover []string) {
	if len(matches) <= maxToolCacheConfigs {
		return matches, nil
	}
	for _, p := range matches[maxToolCacheConfigs:] {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			cover = append(cover, real)
		}
	}
	return matches[:maxToolCacheConfigs], cover
}

// packageConfigViews are the overlays that show each machine-wide
// package configuration without its credentials, where stripping
// changed it, and the client key files they name, to cover.
func packageConfigViews(base []string) (overlays []FileOverlay, keys []string) {
	files, cover := packageConfigFiles(base)
	overlays, keys = strippedViews(files, stripConfigCredentials, true)
	return overlays, append(keys, cover...)
}

// strippedViews reads each file (its links resolved, a small regular
// file only) and strips it with strip: an overlay shows the file
// stripped where that changed it (each real file once), and the key
// files strip names are returned to cover, as a process opening them
// would walk them; a relative name is taken from the file's folder when
// relKeys is set and left out otherwise.
func strippedViews(files []string, strip func([]byte) ([]byte, []string), relKeys bool) (overlays []FileOverlay, keys []string) {
	for _, p := range files {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		b, ok := readConfigToShow(real)
		if !ok {
			continue
		}
		view, named := strip(b)
		if !relKeys {
			named = slices.DeleteFunc(named, func(k string) bool { return !filepath.IsAbs(k) })
		}
		keys = append(keys, absKeys(named, filepath.Dir(real))...)
		if (b == nil || !bytes.Equal(view, b)) && !slices.ContainsFunc(overlays, func(o FileOverlay) bool { return o.Path == real }) {
			overlays = append(overlays, FileOverlay{Path: real, Content: view})
		}
	}
	return overlays, keys
}

// readSmallRegular reads a regular file of at most maxPackageConfig
// bytes. What is no regular file is refused before it is opened: the
// open of a FIFO (or a link to one) waits for a writer.
func readSmallRegular(p string) ([]byte, error) {
	if fi, err := os.Stat(p); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, os.ErrInvalid
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, os.ErrInvalid
	}
	if fi.Size() > maxPackageConfig {
		return nil, errConfigTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPackageConfig+1))
	if err == nil && len(b) > maxPackageConfig {
		return nil, errConfigTooLarge // it grew since the Stat
	}
	return b, err
}

// errConfigTooLarge is readSmallRegular's error for a file larger than
// it reads.
var errConfigTooLarge = errors.New("larger than a configuration planex reads")

// readConfigToShow is readSmallRegular for a file a step is shown
// without its credentials: one too large to read is shown empty (its
// content nil, ok true), not as it is, whole, credentials and all.
func readConfigToShow(p string) (b []byte, ok bool) {
	b, err := readSmallRegular(p)
	if errors.Is(err, errConfigTooLarge) {
		return nil, true
	}
	return b, err == nil
}

// credentialKeys are the settings of npm's and pip's configurations
// that hold a credential (npm's scoped by a registry,
// //host/path/:_authToken), compared without case: tokens, passwords,
// basic credentials and an inline client key (npm's key=, PEM).
var credentialKeys = []string{"_authtoken", "_auth", "_password", "password", "token", "authtoken", "key"}

// keyFileKeys are the settings naming a client's private key.
var keyFileKeys = []string{"keyfile", "client-cert"}

// urlUserinfo matches the user name and password of a URL.
var urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s"']*@`)

// bareUserinfo matches a user name and password before a host given
// without a scheme (pip's proxy = user:password@host:port, curl's
// http_proxy=user:password@host:port): a word with a colon before the
// @ and no slash, starting a value.
var bareUserinfo = regexp.MustCompile(`(^|[\s=,"'])[^\s/@"'=,:]+:[^\s/@"']*@`)

// privateKeyLine matches a line holding a PEM private key, whatever the
// setting carrying it.
var privateKeyLine = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----`)

// withoutUserinfo is line without the user names and passwords of its
// URLs and of hosts given without a scheme, and without the tokens
// private registries take in a URL's path (withoutPathTokens).
func withoutUserinfo(line []byte) []byte {
	if !mayHoldURLSecret(line) {
		return line
	}
	return withoutPathTokens(bareUserinfo.ReplaceAll(urlUserinfo.ReplaceAll(line, []byte("$1")), []byte("$1")))
}

// mayHoldURLSecret reports whether line may hold what withoutUserinfo
// removes: urlUserinfo and bareUserinfo both end at an @, and every
// pathToken follows a ://. Most lines of a machine's configuration hold
// neither, and skip the three expressions, whose backtracking took half
// the time of filtering /etc for each contained step (issue 32).
func mayHoldURLSecret(line []byte) bool {
	return bytes.IndexByte(line, '@') >= 0 || bytes.Contains(line, []byte("://"))
}

// pathToken matches the part of a URL's path that is a token for the
// hosted registries whose private URLs carry one there: Cloudsmith's
// dl.cloudsmith.io/<token>/<owner>/<repo>/ (public/ and basic/ are no
// token), Anaconda's /t/<token>/ (conda.anaconda.org,
// repo.anaconda.cloud) and Gemfury's package hosts'
// <host>.fury.io/<token>/<account>/ (pypi., npm-proxy., apt., …: a URL
// naming only the account, /<account>/, carries no token; the host's
// case is any, as a host name's is).
var pathToken = regexp.MustCompile(`(://dl\.cloudsmith\.io/)([^/\s"']+/)|(://[^/\s"']*anaconda\.(?:org|cloud|com)[^/\s"']*/t/)([^/\s"']+/)|(?i:(://(?:[a-z0-9-]+\.)*fury\.io(?::[0-9]+)?/))([^/\s"']+/)([^/\s"'?#][^/\s"']*)`)

// furyAccountHosts are Gemfury's hosts whose paths hold no token (its
// API's and its dashboard's).
var furyAccountHosts = []string{"://api.", "://manage."}

// withoutPathTokens is line without pathToken's tokens: a Cloudsmith
// URL loses its token's segment, an Anaconda one its t/<token>/, a
// Gemfury one the segment before its account.
func withoutPathTokens(line []byte) []byte {
	return pathToken.ReplaceAllFunc(line, func(m []byte) []byte {
		sub := pathToken.FindSubmatch(m)
		if len(sub[5]) > 0 {
			for _, h := range furyAccountHosts {
				if bytes.HasPrefix(bytes.ToLower(sub[5]), []byte(h)) {
					return m
				}
			}
			return append(append([]byte(nil), sub[5]...), sub[7]...)
		}
		if len(sub[1]) > 0 {
			if seg := string(sub[2]); seg == "public/" || seg == "basic/" {
				return m
			}
			return sub[1]
		}
		return bytes.TrimSuffix(sub[3], []byte("t/"))
	})
}

// configKey is the setting an ini-style line's key names, as npm's ini
// parser reads it: blanks around it dropped, a quoted key unquoted (a
// double-quoted one decoded as JSON, \u escapes too), an array's []
// dropped, in lower case, without npm's //registry/: scope.
func configKey(raw string) string {
	k := strings.TrimSpace(raw)
	if len(k) >= 2 && (k[0] == '"' || k[0] == '\'') && k[len(k)-1] == k[0] {
		var s string
		if k[0] == '"' && json.Unmarshal([]byte(k), &s) == nil {
			k = s
		} else {
			k = k[1 : len(k)-1]
		}
	}
	k = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(k), "[]"))
	if i := strings.LastIndex(k, ":"); i >= 0 {
		k = k[i+1:]
	}
	return strings.TrimSpace(k)
}

// configSettings are the settings (key, value) an ini-style line may
// set, as each of the two readers of these files takes it: npm's, which
// splits at the first = and keys by what follows a //registry/: scope
// (configKey), and pip's configparser, which splits at the first = or :
// and whose keys pip folds (lower case, _ as -, a leading -- dropped:
// client_cert, --client-cert and "client-cert: FILE" all name pip's
// client key).
func configSettings(line string) [][2]string {
	var out [][2]string
	if key, val, ok := strings.Cut(line, "="); ok {
		out = append(out, [2]string{configKey(key), val})
	}
	if i := strings.IndexAny(line, "=:"); i > 0 {
		k := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(line[:i])), "_", "-")
		out = append(out, [2]string{strings.TrimPrefix(k, "--"), line[i+1:]})
	}
	return out
}

// stripConfigCredentials returns an ini-style configuration (npmrc,
// pip.conf) without the lines setting a credential or holding a private
// key and with no user name or password in any URL or proxy address,
// and the key files it names.
func stripConfigCredentials(b []byte) (view []byte, keyFiles []string) {
	var out bytes.Buffer
	// pip's configparser continues a value on the lines after its key
	// indented deeper: a credential's go with it, and a key file's name
	// there is a key file's too.
	var cont continuation
	addKey := func(v string) {
		if v = strings.Trim(strings.TrimSpace(v), `"'`); v != "" && !slices.Contains(keyFiles, v) {
			keyFiles = append(keyFiles, v)
		}
	}
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if cont.holds(string(line)) {
			if cont.keyFile {
				addKey(string(line))
			}
			if cont.drop {
				continue
			}
			out.Write(withoutUserinfo(line))
			continue
		}
		if (cont.drop || cont.keyFile) && strings.TrimSpace(string(line)) == "" {
			// configparser keeps a value going past blank lines.
			out.Write(line)
			continue
		}
		cont = continuation{indent: indentOf(string(line))}
		if privateKeyLine.Match(line) {
			continue
		}
		for _, kv := range configSettings(string(line)) {
			if slices.Contains(credentialKeys, kv[0]) {
				cont.drop = true
			}
			if slices.Contains(keyFileKeys, kv[0]) {
				cont.keyFile = true
				addKey(kv[1])
			}
		}
		if cont.drop {
			continue
		}
		out.Write(withoutUserinfo(line))
	}
	return out.Bytes(), keyFiles
}

// continuation is the setting whose value the lines indented deeper
// than its key (indent) continue, as configparser reads them: one to
// leave out (drop), one naming a key file (keyFile).
type continuation struct {
	indent        int
	drop, keyFile bool
}

// holds reports whether line continues the setting: it is indented
// deeper than the setting's key and the setting is one that matters.
func (c continuation) holds(line string) bool {
	return (c.drop || c.keyFile) && strings.TrimSpace(line) != "" && indentOf(line) > c.indent
}

// indentOf is the number of blanks line starts with.
func indentOf(line string) int {
	return len(line) - len(strings.TrimLeft(line, " \t"))
}

// systemEtc is the folder of the machine's environment files
// (systemEnvFiles).
const systemEtc = "/etc"

// envFileKind is how a line of a machine-wide environment file names its
// variable.
type envFileKind int

const (
	// envAssignments: NAME=value lines (/etc/environment,
	// environment.d's files; an export before the name is allowed).
	envAssignments envFileKind = iota
	// envPamConf: NAME [DEFAULT=value] [OVERRIDE=value] lines
	// (pam_env.conf).
	envPamConf
	// envCovered: a file past the bound of those read
	// (boundedMatches), shown empty.
	envCovered
)

// envFile is a machine-wide environment file and how its lines name
// their variables.
type envFile struct {
	path string
	kind envFileKind
}

// lineName is the variable a (trimmed, not comment) line of a file of
// kind k sets.
func (k envFileKind) lineName(t string) string {
	if k == envPamConf {
		if f := strings.Fields(t); len(f) > 0 {
			return f[0]
		}
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(t, "export "), "=")
	return strings.TrimSpace(name)
}

// systemEnvFiles are the machine-wide files that give every login or
// user session variables, under etc (/etc): the environment file and
// pam_env's configuration, which pam_env reads, and systemd's
// environment.d files of /etc, /usr/local/lib and /usr/lib (at most
// maxToolCacheConfigs of each folder; those past it are covered). Admins of
// self-hosted runners keep a proxy's password or a token for every job
// in any of them. environment, when set, stands for etc/environment.
func systemEnvFiles(etc, environment string) []envFile {
	if environment == "" {
		environment = filepath.Join(etc, "environment")
	}
	files := []envFile{{environment, envAssignments}, {filepath.Join(etc, "security", "pam_env.conf"), envPamConf}}
	// systemd's environment.d folders: /etc's, and those of /usr/local
	// and /usr (found beside etc, a test's stand-in too).
	root := filepath.Dir(etc)
	for _, d := range []string{filepath.Join(etc, "environment.d"), filepath.Join(root, "usr", "local", "lib", "environment.d"), filepath.Join(root, "usr", "lib", "environment.d")} {
		confs, _ := filepath.Glob(filepath.Join(d, "*.conf"))
		read, cover := boundedMatches(confs)
		for _, c := range read {
			files = append(files, envFile{c, envAssignments})
		}
		for _, c := range cover {
			files = append(files, envFile{c, envCovered})
		}
	}
	return files
}

// environmentFileViews are environmentFileView's overlays for each of
// the machine's environment files (systemEnvFiles).
func environmentFileViews(etc, envFile string, allow, secrets []string) []FileOverlay {
	var out []FileOverlay
	for _, f := range systemEnvFiles(etc, envFile) {
		out = append(out, environmentFileView(f.path, f.kind, allow, secrets)...)
	}
	return out
}

// environmentFileView shows the environment file at path (its links
// resolved), whose lines are of kind, as the step's environment is
// built (ScrubEnv with allow and secrets): only the variables the
// allow-list passes, with no user name or password in a URL or proxy
// address; comments and blank lines stay. A file that passes as it is,
// or cannot be read, gives no overlay.
func environmentFileView(path string, kind envFileKind, allow, secrets []string) []FileOverlay {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil
	}
	if kind == envCovered {
		return []FileOverlay{{Path: real}}
	}
	b, ok := readConfigToShow(real)
	if !ok {
		return nil
	}
	if b == nil {
		return []FileOverlay{{Path: real}}
	}
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		t := strings.TrimSpace(string(line))
		if t != "" && !strings.HasPrefix(t, "#") {
			if len(ScrubEnv([]string{kind.lineName(t) + "=x"}, allow, secrets...)) == 0 {
				continue
			}
		}
		out.Write(withoutUserinfo(line))
	}
	if bytes.Equal(out.Bytes(), b) {
		return nil
	}
	return []FileOverlay{{Path: real, Content: out.Bytes()}}
}

// npmConfigNamed lists the npm configuration files base's npm_config_*
// variables name: npm reads those variables whatever the case of their
// names (NPM_Config_Globalconfig too), so each spelling counts: the
// global npmrc below a prefix and the global npmrc named.
func npmConfigNamed(base []string) []string {
	var out []string
	for _, kv := range base {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || val == "" {
			continue
		}
		switch strings.ToLower(name) {
		case "npm_config_prefix":
			out = append(out, filepath.Join(val, "etc", "npmrc"))
		case "npm_config_globalconfig":
			out = append(out, val)
		}
	}
	return out
}

// npmUserConfigs lists the user npmrc files base's npm_config_userconfig
// variables name in any case of the name (npm reads them all), but the
// ones passed on to the agent under that very name.
func npmUserConfigs(base, passed []string) []string {
	var out []string
	for _, kv := range base {
		name, val, ok := strings.Cut(kv, "=")
		if ok && val != "" && strings.EqualFold(name, "npm_config_userconfig") && lookup(passed, name) == "" {
			out = append(out, val)
		}
	}
	return out
}
