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

// AgentConfig returns the repository's config file (never what it
// includes) as a contained agent may read it: only the sections in
// agentConfigSections, and no user name or password in any URL (a remote
// cloned as https://gitlab-ci-token:TOKEN@host/…, as GitLab CI does).
// The sandbox shows it in place of the real one.
// A repository without a config file gives nil.
func AgentConfig(ctx context.Context, r *Repo) ([]byte, error) {
	file := filepath.Join(r.CommonDir, "config")
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	out, err := r.Git(ctx, "", "config", "--file", file, "--no-includes", "--list", "-z")
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return renderAgentConfig(out), nil
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
