package agent

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/gitrepo"
)

// Keys git's ssh is told to use elsewhere than GIT_SSH_COMMAND.
//
// Besides GIT_SSH_COMMAND, git takes its ssh command from GIT_SSH (a
// wrapper script: `exec ssh -i /opt/ci/deploy_key "$@"`) and from
// core.sshCommand, set in git's system configuration (/etc/gitconfig,
// a runner admin's machine-wide deploy key), the user's (whose file the
// hidden home holds, while the key it names may lie outside it) or the
// environment's GIT_CONFIG_KEY_<n>/GIT_CONFIG_VALUE_<n> pairs. Each
// names the key by a path a contained program can read. Those keys are
// covered (a wrapper's whether it lies with the system's programs, as an
// admin's /usr/local/bin/ci-ssh does, or not, and whether GIT_SSH gives
// its path or a name git finds on PATH), and the wrapper script when it
// is no system program; so are
// the keys ssh's machine-wide configuration names (IdentityFile in
// /etc/ssh/ssh_config and ssh_config.d).

// systemSSHConfig and systemSSHConfigDir are ssh's machine-wide
// configuration, whose IdentityFile lines may name a deploy key every
// user's ssh offers.
const (
	systemSSHConfig    = "/etc/ssh/ssh_config"
	systemSSHConfigDir = "/etc/ssh/ssh_config.d"
)

// maxGitConfig bounds each git configuration or wrapper script read.
const maxGitConfig = 1 << 20

// maxGitConfigPairs bounds the GIT_CONFIG_KEY_<n> pairs looked at.
const maxGitConfigPairs = 256

// gitSSHKeys are the files the ssh commands git takes from base
// (planex's environment) name: GIT_SSH's script and each of its lines,
// core.sshCommand in the system and global configurations, and ssh's
// machine-wide configuration and the homes' (Homes: ~/.ssh/config; the
// environment's configuration pairs are envConfigFiles').
func gitSSHKeys(base []string) []string {
	var out []string
	if w := gitSSHProgram(base); w != "" {
		if !isProgramPath(w) {
			out = append(out, w)
		}
		// A wrapper installed with the system's programs is no secret,
		// but the key its line names is. Only a script is read: a
		// program (ssh itself) names nothing in lines.
		if lines := readLines(w); len(lines) > 0 && strings.HasPrefix(lines[0], "#!") {
			for _, line := range lines {
				out = append(out, sshCommandFiles(line)...)
			}
		}
	}
	for _, cmd := range gitSSHCommands(base) {
		out = append(out, sshCommandFiles(cmd)...)
	}
	confs, _ := filepath.Glob(systemSSHConfigDir + "/*.conf")
	// The users' own configurations too: hidden with their homes, but a
	// key they name may lie elsewhere (IdentityFile /opt/keys/deploy).
	for _, home := range Homes(base) {
		confs = append(confs, filepath.Join(home, ".ssh", "config"))
	}
	for _, c := range append([]string{systemSSHConfig}, confs...) {
		out = append(out, sshConfigKeys(c)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// gitSSHProgram is the program GIT_SSH in base names, as git starts it:
// an absolute path as it is, a bare name looked up in base's PATH (its
// absolute folders; the first executable regular file); "" for none, or
// for a path relative to git's folder (the repository's own file).
func gitSSHProgram(base []string) string {
	w := lookup(base, "GIT_SSH")
	switch {
	case filepath.IsAbs(w):
		return w
	case w == "" || strings.Contains(w, "/"):
		return ""
	}
	for i, dir := range filepath.SplitList(lookup(base, "PATH")) {
		if i >= 64 {
			break
		}
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, w)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// isProgramPath reports whether p lies among the system's programs and
// settings (programDirs): plain ssh, never a credential.
func isProgramPath(p string) bool {
	p = filepath.Clean(p)
	return slices.ContainsFunc(programDirs, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") })
}

// gitSSHCommands are the core.sshCommand values of git's system
// configuration (GIT_CONFIG_SYSTEM or /etc/gitconfig, unless
// GIT_CONFIG_NOSYSTEM), the global ones (GIT_CONFIG_GLOBAL, or
// ~/.gitconfig and the XDG one) and the environment's pairs.
func gitSSHCommands(base []string) []string {
	var files []string
	if lookup(base, "GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, cmp(lookup(base, "GIT_CONFIG_SYSTEM"), "/etc/gitconfig"))
	}
	if g := lookup(base, "GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else {
		if home := lookup(base, "HOME"); home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
		if xdg := lookup(base, "XDG_CONFIG_HOME"); xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		} else if home := lookup(base, "HOME"); home != "" {
			files = append(files, filepath.Join(home, ".config", "git", "config"))
		}
	}
	var out []string
	for _, f := range files {
		if filepath.IsAbs(f) {
			out = append(out, gitConfigSSHCommands(readLines(f))...)
		}
	}
	return out
}

// envConfigFiles are the absolute files that can hold credentials the
// configuration git takes from base names (gitrepo.ConfigEntryFiles):
// the GIT_CONFIG_KEY_<n>/GIT_CONFIG_VALUE_<n> pairs GIT_CONFIG_COUNT
// counts, and GIT_CONFIG_PARAMETERS (what git -c sets for the programs
// it starts). An image or a workflow gives git a TLS client key, a
// credential store, an include or an ssh command there as well as in a
// file.
func envConfigFiles(base []string) []string {
	var pairs [][2]string
	n := gitConfigCount(lookup(base, "GIT_CONFIG_COUNT"))
	for i := range min(n, maxGitConfigPairs) {
		pairs = append(pairs, [2]string{lookup(base, "GIT_CONFIG_KEY_"+strconv.Itoa(i)), lookup(base, "GIT_CONFIG_VALUE_"+strconv.Itoa(i))})
	}
	// 'key'='value' (or the older 'key=value') words, shell-quoted.
	for i, w := range gitrepo.ShellWords(lookup(base, "GIT_CONFIG_PARAMETERS")) {
		if i >= maxGitConfigPairs {
			break
		}
		if k, v, ok := strings.Cut(w, "="); ok {
			pairs = append(pairs, [2]string{k, v})
		}
	}
	var out []string
	for _, kv := range pairs {
		for _, p := range gitrepo.ConfigEntryFiles(kv[0], kv[1]) {
			if filepath.IsAbs(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// cmp is a when it is set, else b.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// gitConfigSSHCommands are the sshCommand values of a git
// configuration's [core] sections (section and key in any case), with
// git's quoting removed.
func gitConfigSSHCommands(lines []string) []string {
	var out []string
	inCore := false
	for _, line := range lines {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			name, _, _ := strings.Cut(strings.TrimPrefix(t, "["), "]")
			inCore = strings.EqualFold(strings.TrimSpace(name), "core")
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		if inCore && ok && strings.EqualFold(strings.TrimSpace(k), "sshCommand") {
			out = append(out, gitUnquote(strings.TrimSpace(v)))
		}
	}
	return out
}

// gitUnquote removes git's quoting from a configuration value: double
// quotes around parts of it, and \" \\ escapes within.
func gitUnquote(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
		case c == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// readLines is the text of the regular file at p in lines, at most
// maxGitConfig bytes of it; none when it cannot be read.
func readLines(p string) []string {
	// A FIFO's open waits for a writer: it is refused unopened.
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(io.LimitReader(f, maxGitConfig))
	sc.Buffer(make([]byte, 0, 4096), maxGitConfig)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
