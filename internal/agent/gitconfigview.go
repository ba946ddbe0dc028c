package agent

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/planexhq/planex/internal/gitrepo"
)

// withoutGitCredentials are the lines of a git configuration without
// the settings that give a credential (withoutPasswordSettings', and
// every credential helper: one may print a token itself, !f() { echo
// password=…; }, and a step needs none), nor the extra headers but
// plain ones (http.extraHeader = AUTHORIZATION: basic …), and the
// files to cover: those the helpers name by an absolute path (store's
// --file, a script's), the cookie jar, client certificate and SSH
// signing key named by path (http.cookieFile, http.sslCert,
// user.signingKey), and the included configurations (include.path,
// includeIf's, relative ones beside the configuration), which may
// carry the same.
func withoutGitCredentials(lines []string) (kept, keyFiles []string) {
	lines, keyFiles = withoutPasswordSettings(gitLogicalLines(lines))
	inCredential := false
	for _, line := range lines {
		// A [credential] section (any URL's) is left out whole, header
		// and all: it names nothing a step needs.
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "[") {
			name := strings.ToLower(strings.TrimLeft(t, "[ \t"))
			inCredential = strings.HasPrefix(name, "credential") &&
				(len(name) == len("credential") || strings.ContainsAny(name[len("credential"):len("credential")+1], " \t\"]."))
		}
		if inCredential {
			for _, w := range gitrepo.ShellWords(strings.Trim(line, `"`)) {
				if p := strings.TrimPrefix(w, "--file="); filepath.IsAbs(p) {
					keyFiles = append(keyFiles, p)
				}
			}
			continue
		}
		k, val := settingKey(line)
		val = strings.TrimSpace(val)
		switch {
		case k == "helper":
			for _, w := range gitrepo.ShellWords(strings.Trim(val, `"`)) {
				if p := strings.TrimPrefix(w, "--file="); filepath.IsAbs(p) {
					keyFiles = append(keyFiles, p)
				}
			}
			continue
		case k == "extraheader" && !plainHeader(strings.Trim(val, `"`)):
			continue
		case k == "cookiefile" || k == "sslcert" || k == "signingkey":
			// The cookie jar, a client certificate (a PEM that often
			// holds its key too) and an SSH signing key, by path.
			if p := strings.Trim(val, `"`); filepath.IsAbs(p) {
				keyFiles = append(keyFiles, p)
			}
		case k == "path" && strings.Trim(val, `"`) != "" && !strings.HasPrefix(strings.Trim(val, `"`), "~"):
			// A relative one lies beside the configuration (absKeys).
			keyFiles = append(keyFiles, strings.Trim(val, `"`))
		}
		kept = append(kept, line)
	}
	return kept, keyFiles
}

// gitLogicalLines are a git configuration's lines (each with its line
// break) as git reads them, one setting or section header a line: a
// value continued on the next line by a backslash at its end
// (extraHeader = AUTHORIZATION: \ and the token below) is joined to
// that line, the backslash and break dropped as git drops them, and a
// setting after a section header on its line ([http] extraHeader = …)
// is put on a line of its own. Judged line by line, either hid a
// credential's part from the filters.
func gitLogicalLines(lines []string) []string {
	var out []string
	var pending strings.Builder
	for _, line := range lines {
		body := strings.TrimSuffix(line, "\n")
		if body != line && gitContinued(pending.String()+body) {
			pending.WriteString(body[:len(body)-1])
			continue
		}
		pending.WriteString(line)
		out = append(out, splitGitHeader(pending.String())...)
		pending.Reset()
	}
	if pending.Len() > 0 {
		out = append(out, splitGitHeader(pending.String())...)
	}
	return out
}

// gitContinued reports whether a line of a git configuration (without
// its break) ends with a backslash that continues its value: not one
// a backslash escapes, nor one in a comment (# or ; outside quotes),
// which ends at the line's end whatever it holds.
func gitContinued(line string) bool {
	quoted := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\':
			if i == len(line)-1 {
				return true
			}
			i++
		case c == '"':
			quoted = !quoted
		case (c == '#' || c == ';') && !quoted:
			return false
		}
	}
	return false
}

// splitGitHeader is a logical line of a git configuration as lines of
// their own: a section header and the setting git reads after it on
// the same line, or the line as it is.
func splitGitHeader(line string) []string {
	t := strings.TrimLeft(line, " \t")
	if !strings.HasPrefix(t, "[") {
		return []string{line}
	}
	quoted := false
	for i := 1; i < len(t); i++ {
		switch c := t[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == ']' && !quoted:
			rest := t[i+1:]
			if r := strings.TrimSpace(rest); r == "" || r[0] == '#' || r[0] == ';' {
				return []string{line}
			}
			return []string{t[:i+1] + "\n", rest}
		}
	}
	return []string{line}
}

// Bounds of userGitConfigKeys: the configurations it reads, its own
// and the ones they include, in all.
const maxUserGitConfigs = 16

// userGitConfigKeys are the files the user's own git configurations
// (~/.gitconfig and the XDG one of the home HOME names, hidden with
// it) name outside the home: the configurations they include
// (include.path, includeIf's, relative ones beside the file that
// names them, and those these include in turn) and the stores of
// their credential helpers (store --file): the home is hidden, but
// a file it names at /opt/ci was read by its path. Files in the
// kernel's folders or in one the step keeps are left out; at most
// maxUserGitConfigs configurations are read.
func userGitConfigKeys(base, keep []string) []string {
	home := lookup(base, "HOME")
	if !filepath.IsAbs(home) {
		return nil
	}
	queue := []string{filepath.Join(home, ".gitconfig")}
	if xdg := lookup(base, "XDG_CONFIG_HOME"); filepath.IsAbs(xdg) {
		queue = append(queue, filepath.Join(xdg, "git", "config"))
	} else {
		queue = append(queue, filepath.Join(home, ".config", "git", "config"))
	}
	var out, read []string
	for len(queue) > 0 && len(read) < maxUserGitConfigs {
		f := queue[0]
		queue = queue[1:]
		if slices.Contains(read, f) {
			continue
		}
		read = append(read, f)
		b, err := readSmallRegular(f)
		if err != nil {
			continue
		}
		_, keys := withoutGitCredentials(strings.SplitAfter(string(b), "\n"))
		for _, k := range absKeys(keys, filepath.Dir(f)) {
			if kernelPath(k) || !coverableDir(k) || holdsAny(k, keep) || keptFolderHolds(keep, k) || slices.Contains(out, k) {
				continue
			}
			out = append(out, k)
			queue = append(queue, k)
		}
	}
	return out
}
