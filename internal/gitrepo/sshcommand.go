package gitrepo

import (
	"bufio"
	"io"
	"path/filepath"
	"strings"
)

// sshArgFlags are the options of ssh(1) that take an argument: one of
// them ends a word of joined flags (-4vi FILE, -vF/etc/cfg), its
// argument being the word's rest or the next word.
const sshArgFlags = "bBcDeEFiIJlLmoOpPQRSwW"

// maxSSHConfig bounds the ssh configuration read for the keys it names.
const maxSSHConfig = 1 << 20

// SSHCommandFiles are the paths an ssh command line names as its
// identity, certificate, agent socket or configuration, as ssh parses
// its words: -i FILE, -F FILE and -o "IdentityFile FILE" (or =FILE;
// CertificateFile and IdentityAgent too, any case), each also joined to
// other flags (-4vi FILE, -iFILE); and the absolute identity,
// certificate and agent files the -F configuration names when its path
// is absolute. Words are split as a shell splits them (quotes,
// backslashes). Only absolute paths and ones starting with ~/ (the
// home's) are returned, uncleaned: a ".." after a link is the kernel's
// to walk. The same parse serves git's core.sshCommand in any config
// (ReferencedFiles) and GIT_SSH_COMMAND (the agent package).
func SSHCommandFiles(cmd string) []string {
	var out []string
	add := func(p string) {
		if filepath.IsAbs(p) || strings.HasPrefix(p, "~/") {
			out = append(out, p)
		}
	}
	words := ShellWords(cmd)
	for i := 0; i < len(words); i++ {
		w := words[i]
		if len(w) < 2 || w[0] != '-' || w == "--" {
			continue
		}
		for j := 1; j < len(w); j++ {
			if !strings.ContainsRune(sshArgFlags, rune(w[j])) {
				continue
			}
			arg := w[j+1:]
			if arg == "" && i+1 < len(words) {
				i++
				arg = words[i]
			}
			switch w[j] {
			case 'i':
				add(arg)
			case 'F':
				add(arg)
				if filepath.IsAbs(arg) {
					out = append(out, SSHConfigKeys(arg)...)
				}
			case 'o':
				if k, v := sshOption(arg); isSSHKeyOption(k) {
					add(v)
				}
			}
			break
		}
	}
	return out
}

// sshOption splits an ssh configuration line or -o argument into its
// keyword and value: they are separated by spaces, tabs or one = with
// spaces around it; quotes around the value are dropped.
func sshOption(line string) (key, value string) {
	line = strings.TrimSpace(line)
	i := strings.IndexAny(line, " \t=")
	if i < 0 {
		return line, ""
	}
	key, rest := line[:i], strings.TrimLeft(line[i:], " \t")
	rest = strings.TrimLeft(strings.TrimPrefix(rest, "="), " \t")
	return key, strings.Trim(rest, `"`)
}

// isSSHKeyOption reports whether an ssh keyword names a private key,
// its certificate or the agent socket that signs with the keys it holds.
func isSSHKeyOption(k string) bool {
	return strings.EqualFold(k, "IdentityFile") || strings.EqualFold(k, "CertificateFile") || strings.EqualFold(k, "IdentityAgent")
}

// SSHConfigKeys are the absolute identity, certificate and agent files
// the ssh configuration at path names (each IdentityFile,
// CertificateFile and IdentityAgent line, whatever Host or Match it is
// under), and those of the configurations its Include lines name
// (absolute patterns, and ones relative to /etc/ssh for a file there, as
// ssh reads a system configuration's; a user's relative ones lie in the
// home, hidden anyway), up to maxSSHIncludes files. A file that cannot
// be read names none.
func SSHConfigKeys(path string) []string {
	var out []string
	seen := map[string]bool{}
	queue := []string{path}
	for len(queue) > 0 && len(seen) < maxSSHIncludes {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		keys, includes := sshConfigLines(p)
		out = append(out, keys...)
		queue = append(queue, includes...)
	}
	return out
}

// maxSSHIncludes bounds the ssh configuration files SSHConfigKeys reads.
const maxSSHIncludes = 64

// sshConfigLines are the absolute key files the ssh configuration at
// path names and the files its Include lines name.
func sshConfigLines(path string) (keys, includes []string) {
	// Not waited on when a FIFO: no context reaches an open.
	f, err := openRegular(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxSSHConfig))
	sc.Buffer(make([]byte, 0, 4096), maxSSHConfig)
	for sc.Scan() {
		k, v := sshOption(sc.Text())
		switch {
		case isSSHKeyOption(k) && filepath.IsAbs(v):
			keys = append(keys, v)
		case strings.EqualFold(k, "Include"):
			includes = append(includes, sshIncludes(path, v)...)
		}
	}
	return keys, includes
}

// sshIncludes are the files an Include line's patterns (value) of the
// configuration at path match. As ssh reads them, a relative pattern
// lies in /etc/ssh for a system configuration and in the user's ~/.ssh
// for a user's (the .ssh folder holding path, however deep it is
// included), and ~/ is that folder's home.
func sshIncludes(path, value string) []string {
	var out []string
	dotSSH := userSSHDir(path)
	for _, pattern := range ShellWords(value) {
		switch {
		case filepath.IsAbs(pattern):
		case strings.HasPrefix(path, "/etc/ssh/"):
			pattern = filepath.Join("/etc/ssh", pattern)
		case dotSSH == "":
			continue
		case strings.HasPrefix(pattern, "~/"):
			pattern = filepath.Join(filepath.Dir(dotSSH), pattern[2:])
		default:
			pattern = filepath.Join(dotSSH, pattern)
		}
		m, _ := filepath.Glob(pattern)
		out = append(out, m[:min(len(m), maxSSHIncludes)]...)
	}
	return out
}

// ShellWords splits a command line into words as a POSIX shell does
// for plain words: blanks separate them, single quotes keep everything,
// double quotes keep all but a backslash before ", \, $ or `, and a
// backslash outside quotes keeps the next character. Expansions are
// left as they are.
func ShellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0:
				i++
				cur.WriteByte(s[i])
			default:
				cur.WriteByte(c)
			}
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// userSSHDir is the .ssh folder holding the configuration at path (a
// user's ~/.ssh/config or a file it includes below it), "" where none
// does.
func userSSHDir(path string) string {
	for d := filepath.Dir(path); d != "/" && d != "."; d = filepath.Dir(d) {
		if filepath.Base(d) == ".ssh" {
			return d
		}
	}
	return ""
}
