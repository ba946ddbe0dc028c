package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// agentConfigSections are the sections of the repository's own config a
// contained agent's git is shown: what git needs to read the repository
// and its worktrees (core, extensions, the remotes' names and refspecs,
// branches, submodules, LFS's filter) and settings of how git behaves.
// Every other section is left out, because the repository's config is
// where CI systems and tools keep credentials: http.extraheader (Azure
// Pipelines, actions/checkout up to v4), include and includeIf files
// (checkout v6), credential helpers, url.<token URL>.insteadOf,
// sendemail.smtpPass, tokens of hub, gitlab and the like.
var agentConfigSections = map[string]bool{
	"core": true, "extensions": true, "remote": true, "branch": true, "submodule": true,
	"user": true, "filter": true, "lfs": true, "diff": true, "merge": true, "pull": true,
	"push": true, "fetch": true, "init": true, "status": true, "color": true, "advice": true,
	"gc": true, "pack": true, "index": true, "feature": true, "log": true, "format": true,
	"commit": true, "tag": true, "i18n": true, "rebase": true, "worktree": true,
}

// Bounds of ConfigFiles' walk.
const (
	maxModuleDepth  = 8
	maxConfigFiles  = 256
	maxModulesEntry = 4096
)

// ConfigFiles lists the repository's own config file, when it exists,
// its per-worktree config files (config.worktree of the main worktree
// and worktrees/<name>/config.worktree, read by git where
// extensions.worktreeConfig is set, and where `git config --worktree`
// can leave a credential as well as in the shared config), and the
// config files of its submodules' git directories (modules/<name>/config,
// nested submodules' modules/…/modules/…/config too), found by a walk
// that follows no link and stops at maxModuleDepth levels,
// maxConfigFiles files or maxModulesEntry entries read.
func ConfigFiles(r *Repo) []string {
	var files []string
	regular := func(p string) bool {
		fi, err := os.Lstat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	for _, p := range []string{filepath.Join(r.CommonDir, "config"), filepath.Join(r.CommonDir, "config.worktree")} {
		if regular(p) {
			files = append(files, p)
		}
	}
	budget := maxModulesEntry
	if entries, err := os.ReadDir(filepath.Join(r.CommonDir, "worktrees")); err == nil {
		budget -= len(entries)
		for _, e := range entries {
			if p := filepath.Join(r.CommonDir, "worktrees", e.Name(), "config.worktree"); e.IsDir() && len(files) < maxConfigFiles && regular(p) {
				files = append(files, p)
			}
		}
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > maxModuleDepth || len(files) >= maxConfigFiles || budget <= 0 {
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		budget -= len(entries)
		for _, e := range entries {
			if !e.IsDir() || len(files) >= maxConfigFiles {
				continue // e.IsDir is false for a link, which is not followed
			}
			sub := filepath.Join(dir, e.Name())
			if isGitDir(sub) {
				// A submodule's git directory: its own submodules are
				// in its modules folder, nothing else of it is a config.
				files = append(files, filepath.Join(sub, "config"))
				walk(filepath.Join(sub, "modules"), depth+1)
				continue
			}
			// A submodule named a/b lives at modules/a/b.
			walk(sub, depth+1)
		}
	}
	walk(filepath.Join(r.CommonDir, "modules"), 1)
	return files
}

// isGitDir reports whether dir holds a git directory's HEAD and a
// regular config file.
func isGitDir(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, "config"))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	_, err = os.Lstat(filepath.Join(dir, "HEAD"))
	return err == nil
}

// AgentConfig returns the repository's config file (never what it
// includes) as a contained agent may read it: only the sections in
// agentConfigSections, and no user name or password in any URL (a remote
// cloned as https://gitlab-ci-token:TOKEN@host/…, as GitLab CI does).
// The sandbox shows it in place of the real one.
// A repository without a config file gives nil.
func AgentConfig(ctx context.Context, r *Repo) ([]byte, error) {
	return AgentConfigOf(ctx, r, filepath.Join(r.CommonDir, "config"))
}

// AgentConfigOf is AgentConfig for one config file of the repository (a
// submodule's: see ConfigFiles).
func AgentConfigOf(ctx context.Context, r *Repo, file string) ([]byte, error) {
	c, err := ReadConfigFile(ctx, r, file)
	if err != nil {
		return nil, err
	}
	return c.AgentView(), nil
}

// ConfigFile is one config file's own entries (what it includes not
// followed), read once for both AgentView and ReferencedFilesIn.
type ConfigFile struct {
	Path string
	list string // `git config --list -z` of the file; "" when it has none
	// included is the file read with its includes (`--includes --list
	// --show-origin -z`), when ReadConfigFiles read it so; withIncludes
	// says it was, so ReferencedFilesIn runs no git of its own.
	included     string
	withIncludes bool
}

// ReadConfigFile reads file's own entries with one git; a file that does
// not exist has none.
func ReadConfigFile(ctx context.Context, r *Repo, file string) (ConfigFile, error) {
	list, err := configList(ctx, r, file)
	return ConfigFile{Path: file, list: list}, err
}

// ReadConfigFiles reads several config files with one git (what
// ReadConfigFile and then ReferencedFilesIn would read with one or two
// each): a config given on stdin includes each file by its absolute
// path, read with includes and each entry's origin. The entries between
// two of those includes are one file's; those whose origin is the file
// itself are its own entries, the rest what it includes. When that read
// fails (a file or an include git cannot read, a loop of includes, a
// path that is not absolute), each file is read on its own as before, so
// errs[i] is file i's error then and the answers are today's.
func ReadConfigFiles(ctx context.Context, r *Repo, files []string) (cfgs []ConfigFile, errs []error) {
	if len(files) > 1 {
		if cfgs, ok := readConfigsTogether(ctx, r, files); ok {
			return cfgs, make([]error, len(files))
		}
	}
	cfgs, errs = make([]ConfigFile, len(files)), make([]error, len(files))
	for i, f := range files {
		cfgs[i], errs[i] = ReadConfigFile(ctx, r, f)
	}
	return cfgs, errs
}

// stdinOrigin is how `git config --show-origin` names a config read from
// stdin.
const stdinOrigin = "standard input:"

func readConfigsTogether(ctx context.Context, r *Repo, files []string) ([]ConfigFile, bool) {
	var wrapper strings.Builder
	wrapper.WriteString("[include]\n")
	for _, f := range files {
		if !filepath.IsAbs(f) || filepath.Clean(f) != f {
			return nil, false
		}
		wrapper.WriteString("\tpath = " + quoteConfig(f) + "\n")
	}
	out, err := r.gitIn(ctx, r.Root, nil, []byte(wrapper.String()), "config", "--file", "-", "--includes", "--list", "--show-origin", "-z")
	if err != nil {
		return nil, false
	}
	cfgs := make([]ConfigFile, len(files))
	i := -1
	fields := strings.Split(out, "\x00")
	for k := 0; k+1 < len(fields); k += 2 {
		origin, entry := fields[k], fields[k+1]
		if origin == stdinOrigin {
			key, value, _ := strings.Cut(entry, "\n")
			if i++; key != "include.path" || i >= len(files) || value != files[i] {
				return nil, false
			}
			cfgs[i] = ConfigFile{Path: files[i], withIncludes: true}
			continue
		}
		if i < 0 {
			return nil, false
		}
		c := &cfgs[i]
		if c.included == "" && origin != "file:"+c.Path {
			// A file's first entry is its own (an include comes after
			// the key naming it): git names the file otherwise.
			return nil, false
		}
		c.included += origin + "\x00" + entry + "\x00"
		if origin == "file:"+c.Path {
			c.list += entry + "\x00"
		}
	}
	if i != len(files)-1 {
		return nil, false
	}
	return cfgs, true
}

// AgentView is the file as a contained agent may read it (AgentConfig);
// nil when it has no entries.
func (c ConfigFile) AgentView() []byte {
	if c.list == "" {
		return nil
	}
	return renderAgentConfig(c.list)
}

// configList is `git config --list -z` of one config file, its includes
// not followed; "" for a file that does not exist.
func configList(ctx context.Context, r *Repo, file string) (string, error) {
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	out, err := r.Git(ctx, "", "config", "--file", file, "--no-includes", "--list", "-z")
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", file, err)
	}
	return out, nil
}

// renderAgentConfig writes the kept entries of `git config --list -z`
// output as a config file, in their order.
func renderAgentConfig(list string) []byte {
	var b strings.Builder
	header := ""
	for _, entry := range strings.Split(list, "\x00") {
		key, value, hasValue := strings.Cut(entry, "\n")
		first := strings.Index(key, ".")
		last := strings.LastIndex(key, ".")
		if first <= 0 || last == len(key)-1 {
			continue
		}
		section, name := strings.ToLower(key[:first]), key[last+1:]
		if !agentConfigSections[section] || !validConfigName(name) || !validConfigName(section) {
			continue
		}
		h := "[" + section + "]"
		if last > first {
			sub := key[first+1 : last]
			if strings.ContainsAny(sub, "\n\x00") {
				continue
			}
			h = "[" + section + " " + quoteConfig(withoutUserinfo(sub)) + "]"
		}
		if h != header {
			b.WriteString(h + "\n")
			header = h
		}
		if !hasValue {
			b.WriteString("\t" + name + "\n")
			continue
		}
		b.WriteString("\t" + name + " = " + quoteConfig(withoutUserinfo(value)) + "\n")
	}
	return []byte(b.String())
}

// validConfigName is a section's or variable's name as git writes them.
func validConfigName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return s != ""
}

// quoteConfig quotes a value or subsection for a config file.
func quoteConfig(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\b", `\b`)
	return `"` + r.Replace(s) + `"`
}

// withoutUserinfo drops the user name and password of a URL with a
// scheme and an authority (https://user:token@host/…); anything else is
// returned as it is (an scp-like git@host:path names no secret).
func withoutUserinfo(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/@:") {
		return s
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return s
	}
	return scheme + "://" + rest[at+1:]
}
