package gitrepo

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// systemConfigs are where git installations keep their system config
// when GIT_CONFIG_SYSTEM names none: a distribution's git, and one built
// from source under /usr/local.
var systemConfigs = []string{"/etc/gitconfig", "/usr/local/etc/gitconfig"}

// OutsideConfigFiles lists the git config files outside the repository
// that a process on this machine may read and git would use: the system
// config (the file GIT_CONFIG_SYSTEM names, and the installation's, which
// a program can read whatever its environment says) and the global ones
// (the file GIT_CONFIG_GLOBAL names, $XDG_CONFIG_HOME/git/config or
// ~/.config/git/config, and ~/.gitconfig). CI images and users keep
// credentials there as in the repository's config: an http.extraheader,
// a url.<token URL>.insteadOf, a credential helper's store. Paths are
// absolute and cleaned; whether each exists is for the caller to see.
func OutsideConfigFiles(getenv func(string) string) []string {
	var out []string
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) && !slices.Contains(out, filepath.Clean(p)) {
			out = append(out, filepath.Clean(p))
		}
	}
	add(getenv("GIT_CONFIG_SYSTEM"))
	for _, p := range systemConfigs {
		add(p)
	}
	for _, p := range pathGitSystemConfigs(getenv("PATH")) {
		add(p)
	}
	add(getenv("GIT_CONFIG_GLOBAL"))
	home := getenv("HOME")
	if xdg := getenv("XDG_CONFIG_HOME"); xdg != "" {
		add(filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		add(filepath.Join(home, ".config", "git", "config"))
		add(filepath.Join(home, ".gitconfig"))
	}
	return out
}

// maxPathGits bounds the PATH folders looked in for a git.
const maxPathGits = 64

// pathGitSystemConfigs are the system configs of the gits on path (its
// absolute folders, the first maxPathGits): a git installed under a
// prefix of its own (Homebrew's, /home/linuxbrew/.linuxbrew/bin/git, a
// link into its Cellar) reads <prefix>/etc/gitconfig, the prefix being
// the folder above PATH's or above the link's target's.
func pathGitSystemConfigs(path string) []string {
	var out []string
	for i, dir := range filepath.SplitList(path) {
		if i >= maxPathGits {
			break
		}
		prog := filepath.Join(dir, "git")
		if !filepath.IsAbs(dir) {
			continue
		}
		if _, err := os.Lstat(prog); err != nil {
			continue
		}
		out = append(out, filepath.Join(filepath.Dir(filepath.Clean(dir)), "etc", "gitconfig"))
		if real, err := filepath.EvalSymlinks(prog); err == nil {
			out = append(out, filepath.Join(filepath.Dir(filepath.Dir(real)), "etc", "gitconfig"))
		}
	}
	return out
}

// CredentialStores lists where git's credential helpers keep passwords
// when their configuration names no place: the store helper's files,
// $XDG_CONFIG_HOME/git/credentials (or ~/.config/git/credentials) and
// ~/.git-credentials, and the cache helper's daemon socket,
// $XDG_CACHE_HOME/git/credential/socket (or ~/.cache/…, or
// ~/.git-credential-cache/socket), which answers anyone who can connect
// to it with the passwords it holds.
func CredentialStores(getenv func(string) string) []string {
	var out []string
	if xdg := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(xdg) {
		out = append(out, filepath.Join(xdg, "git", "credentials"))
	}
	if xdg := getenv("XDG_CACHE_HOME"); filepath.IsAbs(xdg) {
		out = append(out, filepath.Join(xdg, "git", "credential", "socket"))
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		out = append(out, filepath.Join(home, ".config", "git", "credentials"), filepath.Join(home, ".git-credentials"),
			filepath.Join(home, ".cache", "git", "credential", "socket"), filepath.Join(home, ".git-credential-cache", "socket"))
	}
	return out
}

// ReferencedFiles lists the files the config file names that can hold
// credentials: the files it includes (include.path and includeIf.*.path,
// whatever their condition, and what those include in turn, as git
// reads them from the repository's root) and the files and sockets its
// credential helpers are given (store --file, cache --socket). A
// contained agent is shown the config without them (AgentConfigOf), but
// it could still open them by name. home expands a leading ~/. Relative
// include paths are relative to the config file's folder, as git reads
// them; a helper's relative path is left out (it names no file
// outside the step). The config is read without running anything.
func ReferencedFiles(ctx context.Context, r *Repo, file, home string) ([]string, error) {
	c, err := ReadConfigFile(ctx, r, file)
	if err != nil {
		return nil, err
	}
	return ReferencedFilesIn(ctx, r, c, home)
}

// ReferencedFilesIn is ReferencedFiles for a config file already read:
// only what it includes is read again.
func ReferencedFilesIn(ctx context.Context, r *Repo, c ConfigFile, home string) ([]string, error) {
	file, own := c.Path, c.list
	var out []string
	add := func(p string) {
		if strings.HasPrefix(p, "~/") {
			if home == "" {
				return
			}
			p = filepath.Join(home, p[2:])
		}
		if p != "" && filepath.IsAbs(p) && !slices.Contains(out, filepath.Clean(p)) && filepath.Clean(p) != filepath.Clean(file) {
			out = append(out, filepath.Clean(p))
		}
	}
	if own == "" {
		return nil, nil
	}
	includes := false
	for _, entry := range strings.Split(own, "\x00") {
		key, value, _ := strings.Cut(entry, "\n")
		includes = includes || isInclude(key)
		for _, p := range entryPaths(key, value, filepath.Dir(file)) {
			add(p)
		}
	}
	if !includes {
		// Git includes nothing from here: read with its includes, the
		// file would list the same entries again.
		return out, nil
	}
	// What git itself includes from here, nested includes too.
	withIncludes := c.included
	if !c.withIncludes {
		var err error
		withIncludes, err = r.Git(ctx, "", "config", "--file", file, "--includes", "--list", "--show-origin", "-z")
		if err != nil {
			return out, nil // an include git cannot read: the ones named above are covered
		}
	}
	fields := strings.Split(withIncludes, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		if origin, ok := strings.CutPrefix(fields[i], "file:"); ok {
			add(origin)
		}
		key, value, _ := strings.Cut(fields[i+1], "\n")
		for _, p := range entryPaths(key, value, "") {
			add(p)
		}
	}
	return out, nil
}

// ConfigEntryFiles are the files that can hold credentials one config
// entry names, as ReferencedFiles lists them for an entry of a file
// (ssh keys, TLS client keys, cookie files, credential stores, helper
// and askpass scripts, signing keys, included files): for entries
// given by the environment (GIT_CONFIG_KEY_<n>/GIT_CONFIG_VALUE_<n>,
// GIT_CONFIG_PARAMETERS), which no file holds. key is section.name, any
// case. Paths are absolute or start with ~/; a relative one names none.
func ConfigEntryFiles(key, value string) []string {
	return entryPaths(key, value, "")
}

// entryPaths are the files one config entry names: an include's path
// (a relative one relative to dir; none when dir is "") or the paths a
// credential helper is given.
func entryPaths(key, value, dir string) []string {
	switch key = strings.ToLower(key); {
	case isInclude(key):
		if !strings.HasPrefix(value, "~/") && !filepath.IsAbs(value) {
			if dir == "" {
				return nil
			}
			value = filepath.Join(dir, value)
		}
		return []string{value}
	case strings.HasPrefix(key, "credential.") && strings.HasSuffix(key, ".helper"):
		return append(helperPaths(value), scriptProgram(value)...)
	case key == "core.askpass":
		// A program git asks for a password: a script printing a token
		// holds it.
		return scriptProgram(value)
	case strings.HasPrefix(key, "http.") && (strings.HasSuffix(key, ".sslkey") || strings.HasSuffix(key, ".sslcert") ||
		strings.HasSuffix(key, ".proxysslkey") || strings.HasSuffix(key, ".proxysslcert") || strings.HasSuffix(key, ".cookiefile")):
		// A TLS client key (a certificate file may hold it too), the
		// one presented to an HTTPS proxy, and a cookie file are
		// credentials themselves.
		return []string{value}
	case key == "user.signingkey" && (filepath.IsAbs(value) || strings.HasPrefix(value, "~/")):
		// gpg.format=ssh signs with the key file named here: with it a
		// program signs commits as the machine's signing identity.
		return []string{value}
	case key == "core.sshcommand":
		return SSHCommandFiles(value)
	}
	return nil
}

// scriptProgram is the program a credential helper or askpass setting
// runs by its path (/opt/ci/git-cred.sh, or !/opt/ci/cred.sh args), when
// it is no compiled program: a script may hold the token it prints (a
// compiled helper, /usr/bin/gh, stays visible for the programs that use
// it). A helper git finds by name (store, cache, manager) names none.
func scriptProgram(value string) []string {
	words := ShellWords(strings.TrimPrefix(strings.TrimSpace(value), "!"))
	if len(words) == 0 || !filepath.IsAbs(words[0]) && !strings.HasPrefix(words[0], "~/") {
		return nil
	}
	// A FIFO there is not waited on (no context reaches an open): it
	// is no script, and names nothing to cover.
	f, err := openRegular(words[0])
	if err != nil {
		return nil // none to cover (a ~/ path is in the home, hidden anyway)
	}
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if string(head[:n]) == "\x7fELF" {
		return nil
	}
	return []string{words[0]}
}

// isInclude says whether a config key is an include's path
// (include.path, includeIf.<condition>.path).
func isInclude(key string) bool {
	key = strings.ToLower(key)
	return (strings.HasPrefix(key, "include.") || strings.HasPrefix(key, "includeif.")) && strings.HasSuffix(key, ".path")
}

// helperPaths are the paths a credential helper's command line gives
// with --file or --socket (git credential-store and credential-cache).
func helperPaths(helper string) []string {
	var out []string
	words := ShellWords(helper)
	for i, w := range words {
		for _, opt := range []string{"--file", "--socket"} {
			if v, ok := strings.CutPrefix(w, opt+"="); ok {
				out = append(out, v)
			} else if w == opt && i+1 < len(words) {
				out = append(out, words[i+1])
			}
		}
	}
	return out
}
