package agent

import (
	"path/filepath"
	"slices"
	"strings"
)

// dnf's and yum's variables: a repository file's $name (or ${name}) is
// filled from the file of that name in /etc/dnf/vars or /etc/yum/vars
// (or the folders dnf.conf's varsdir= lists), where an admin keeps the
// private repository's token or password the .repo file's URL or
// password line uses. The repository files are shown without their
// passwords (sysConfigs); the variables' files, readable by every uid,
// are covered where they hold a secret (pkgVarFiles).

// pkgRepoConfigs are the globs, under /etc, of the files whose lines
// use dnf's and yum's variables.
var pkgRepoConfigs = []string{"yum.repos.d/*.repo", "yum.conf", "dnf/dnf.conf"}

// pkgVarFiles are the variable files of dnf and yum under etc to cover:
// those a repository file uses in a URL's user information or in a
// password, user name or proxy setting (secretVarUses), those whose
// name says a secret and those whose value has a token's shape (a
// token in a URL's path: dl.cloudsmith.io/${token}/…). The release's
// variables (stream, contentdir, infra) stay. None of keep is covered.
func pkgVarFiles(etc string, keep []string) []string {
	var repos []string
	for _, g := range pkgRepoConfigs {
		m, _ := filepath.Glob(filepath.Join(etc, g))
		m, _ = boundedMatches(m)
		repos = append(repos, m...)
	}
	dirs := []string{filepath.Join(etc, "dnf", "vars"), filepath.Join(etc, "yum", "vars")}
	var used []string
	for _, r := range repos {
		for _, line := range readLines(r) {
			k, v := settingKey(line)
			if k == "varsdir" {
				dirs = append(dirs, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })...)
			}
			used = append(used, secretVarUses(k, v)...)
		}
	}
	var out []string
	for _, d := range slices.DeleteFunc(dirs, func(d string) bool { return !filepath.IsAbs(d) }) {
		vars, _ := filepath.Glob(filepath.Join(d, "*"))
		vars, rest := boundedMatches(vars)
		out = append(out, rest...)
		for _, f := range vars {
			real, err := filepath.EvalSymlinks(f)
			if err != nil || holdsAny(real, keep) || slices.Contains(out, real) {
				continue
			}
			name := filepath.Base(f)
			if slices.Contains(used, name) || secretName(name) || tokenShaped(firstLine(real)) {
				out = append(out, real)
			}
		}
	}
	return slices.DeleteFunc(out, func(p string) bool { return holdsAny(p, keep) })
}

// secretVarUses are the variables a repository file's setting (its key
// as settingKey gives it, and its value) uses where a secret goes: all
// of a password's, user name's or proxy's value, and a URL's user
// information (https://ci:$token@host/).
func secretVarUses(key, val string) []string {
	if !strings.Contains(val, "$") {
		return nil
	}
	if passwordKey(key) || strings.Contains(key, "user") || strings.HasPrefix(key, "proxy") {
		return varNames(val)
	}
	var out []string
	for _, u := range strings.Fields(val) {
		_, rest, ok := strings.Cut(u, "://")
		if !ok {
			continue
		}
		host, _, _ := strings.Cut(rest, "/")
		if info, _, ok := strings.Cut(host, "@"); ok {
			out = append(out, varNames(info)...)
		}
	}
	return out
}

// varNames are the names of the variables s uses ($name, ${name}).
func varNames(s string) []string {
	var out []string
	for _, use := range scriptVarUse.FindAllString(s, -1) {
		out = append(out, strings.Trim(use, "${}"))
	}
	return out
}

// firstLine is the first line of the small regular file p ("" where it
// is none, or unreadable).
func firstLine(p string) string {
	b, err := readSmallRegular(p)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return line
}
