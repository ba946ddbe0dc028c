package agent

import (
	"regexp"
	"strings"
)

// Tokens a machine-wide shell script gives by name.
//
// An admin gives every login a token in a profile script
// (/etc/profile.d/deploy.sh: export DEPLOY_TOKEN=…), a shell's rc file or
// a service's /etc/default file, all readable by every uid. Those files
// are shell code, not settings: a prompt, a PATH built from other
// variables, a folder for a tool, so they cannot be filtered as an
// environment file is (only the allow-list's names). A literal value
// given to a name the step's environment would not pass is left out
// where the name says it is a secret (secretName) or the value looks
// like a token (tokenShaped); a value built from variables or a
// command's output holds none itself and stays.

// shellAssignment matches a line assigning a variable, exported or not:
// its lead (blanks, export, readonly, declare or typeset with their
// flags), the name, and the rest of the line.
var shellAssignment = regexp.MustCompile(`^(\s*(?:(?:export|readonly|(?:declare|typeset)(?:\s+[-+][A-Za-z]+)*)\s+)?)([A-Za-z_][A-Za-z0-9_]*)=([^\n]*)`)

// cshAssignment matches a line setting a variable in csh's or fish's
// words (a profile.d/*.csh twin of a .sh script, fish's config): setenv
// NAME value, set NAME = value, set -gx NAME value; its lead, the name,
// and the value with the rest of the line.
var cshAssignment = regexp.MustCompile(`^(\s*(?:setenv|set(?:\s+--?[A-Za-z]+)*)\s+)([A-Za-z_][A-Za-z0-9_]*)(?:\s*=\s*|\s+)([^\n]+)`)

// shellWordAssignment matches an assignment anywhere in a line, as one
// shell word: after the line's start, a blank or an operator (;, &, |,
// a parenthesis), the name, and its value (a quoted string or an
// unquoted word).
var shellWordAssignment = regexp.MustCompile(`(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=('[^']*'|"(?:[^"\\]|\\.)*"|[^\s;&|()'"]*)`)

// withoutShellSecret is line with the value of a secret assignment
// (shellAssignment) emptied, the rest of the line with it: a comment or
// a second command after the value is dropped too. An assignment later
// in the line (export A=1 B_TOKEN=…, a test's && export …, then …; fi)
// loses its value alone (shellWordAssignment). allow and secrets are
// the step's environment filter (ScrubEnv's).
func withoutShellSecret(line string, f shellFilter) string {
	if !mayAssign(line) {
		return withoutTokenWords(line)
	}
	if m := cshAssignment.FindStringSubmatchIndex(line); m != nil {
		if f.secret(line[m[4]:m[5]], line[m[6]:m[7]]) {
			return line[:m[6]] + line[m[7]:]
		}
		return line
	}
	if m := shellAssignment.FindStringSubmatchIndex(line); m != nil {
		name, val := line[m[4]:m[5]], line[m[6]:m[7]]
		if f.secret(name, val) {
			line = line[:m[6]] + line[m[7]:]
		}
	}
	var out strings.Builder
	last := 0
	for _, m := range shellWordAssignment.FindAllStringSubmatchIndex(line, -1) {
		if f.secret(line[m[2]:m[3]], line[m[4]:m[5]]) {
			out.WriteString(line[last:m[4]])
			last = m[5]
		}
	}
	out.WriteString(line[last:])
	return withoutTokenWords(out.String())
}

// mayAssign reports whether line may set a variable as cshAssignment,
// shellAssignment or shellWordAssignment read it: the first needs a set
// (setenv or set), the others an =. Most lines of a machine's shell
// files hold neither and skip the expressions, whose backtracking was a
// fifth of the time of filtering /etc for each contained step (issue
// 32).
func mayAssign(line string) bool {
	return strings.Contains(line, "=") || strings.Contains(line, "set")
}

// shellWordBreaks are the bytes that end a word for withoutTokenWords:
// blanks, quotes, the shell's operators and expansions, and the
// separators of assignments, lists and options.
const shellWordBreaks = " \t\r\n'\"`;&|()<>{}$=:,\\"

// withoutTokenWords is line without the words that look like a token
// (tokenShaped) wherever they stand: a literal the assignment patterns
// do not reach (a continued line, an alias, a header in a function, a
// heredoc's body, printf -v, ${NAME:-default}, $'…', NAME+=) is
// still no token shown. A word holding a slash (a path, a URL) stays.
func withoutTokenWords(line string) string {
	var out strings.Builder
	start := -1
	for i := 0; i <= len(line); i++ {
		if i < len(line) && strings.IndexByte(shellWordBreaks, line[i]) < 0 {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if w := line[start:i]; !tokenShaped(w) {
				out.WriteString(w)
			}
			start = -1
		}
		if i < len(line) {
			out.WriteByte(line[i])
		}
	}
	return out.String()
}

// shellFilter is how a machine's shell file loses its secrets: the
// step's environment filter (ScrubEnv's allow and secrets), and parts,
// the names whose values a secret variable's value uses (A=…; B=…;
// GH_TOKEN="$A$B"), whose literals are secrets too.
type shellFilter struct {
	allow, secrets []string
	parts          map[string]bool
}

// newShellFilter is the shellFilter of the shell file b.
func newShellFilter(b []byte, allow, secrets []string) shellFilter {
	f := shellFilter{allow: allow, secrets: secrets, parts: map[string]bool{}}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, "=") {
			continue // no shellWordAssignment
		}
		for _, m := range shellWordAssignment.FindAllStringSubmatch(line, -1) {
			if !f.secretName(m[1]) {
				continue
			}
			for _, use := range scriptVarUse.FindAllString(m[2], -1) {
				f.parts[strings.Trim(use, "${}")] = true
			}
		}
	}
	return f
}

// secretName reports whether name says it holds a secret and the step's
// environment would not pass it.
func (f shellFilter) secretName(name string) bool {
	return secretName(name) && len(ScrubEnv([]string{name + "=x"}, f.allow, f.secrets...)) == 0
}

// secret says whether a literal value (val, as written) given to name is
// left out: one the step's environment would not pass, whose name says
// it is a secret, whose value looks like a token, or which a secret's
// value uses (parts); with no variable or command in it.
func (f shellFilter) secret(name, val string) bool {
	if strings.ContainsAny(val, "$`") || len(ScrubEnv([]string{name + "=x"}, f.allow, f.secrets...)) == 1 {
		return false
	}
	return secretName(name) || tokenShaped(val) || f.parts[name]
}

// secretNameParts are the parts of a variable's name (between its
// underscores, in upper case) that say it holds a secret, and
// secretNameWords those that do wherever they are in it.
var (
	secretNameParts = []string{"PASS", "PWD", "PW", "KEY", "PAT", "DSN"}
	secretNameWords = []string{"TOKEN", "SECRET", "PASSW", "PASSPHRASE", "APIKEY", "AUTH", "CREDENTIAL", "COOKIE"}
)

// secretName reports whether a variable's name says it holds a secret.
func secretName(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range secretNameWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	for _, part := range strings.Split(up, "_") {
		for _, p := range secretNameParts {
			if part == p {
				return true
			}
		}
	}
	return false
}

// tokenShaped reports whether a value (quotes and a trailing comment
// aside) is one word of at least 20 characters with letters and
// digits and no slash: a token's shape, not a folder's or an option's.
func tokenShaped(val string) bool {
	v := strings.TrimSpace(val)
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	v = strings.TrimRight(strings.Trim(v, `"'`), ";")
	if len(v) < 20 || strings.ContainsAny(v, "/ \t\"'") {
		return false
	}
	return strings.ContainsAny(v, "0123456789") && strings.ContainsAny(strings.ToLower(v), "abcdefghijklmnopqrstuvwxyz")
}

// shellFileRead matches a file a shell line reads by its absolute path:
// into a command substitution ($(cat FILE), $(< FILE), `cat FILE`, fish's
// (cat FILE), head or tail with their options) or as a command's input
// (< FILE).
var shellFileRead = regexp.MustCompile("(?:\\$\\(\\s*(?:<\\s*|(?:cat|head|tail)\\s+(?:-\\S+\\s+)*)|`\\s*(?:cat|head|tail)\\s+(?:-\\S+\\s+)*|\\(\\s*(?:cat|head|tail)\\s+(?:-\\S+\\s+)*|<\\s*)[\"']?(/[^\"'\\s;)`]+)")

// shellNamesSet matches the names a shell line sets: by an assignment
// (NAME=…), by read (read -r NAME), or in csh's and fish's words
// (setenv NAME, set -gx NAME).
var shellNamesSet = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)=|\b(?:read|setenv|set)\s+(?:-\S+\s+)*([A-Za-z_][A-Za-z0-9_]*)`)

// shellSecretFiles are the files a line of a machine's shell file reads
// into a variable whose name says it is a secret and which the step's
// environment would not pass (export GH_TOKEN=$(cat /etc/ci/gh-token),
// read -r DEPLOY_KEY < /srv/ci/key): the value stays out of the view
// because it is no literal, and the file itself is to cover.
func shellSecretFiles(line string, allow, secrets []string) []string {
	if !mayAssign(line) && !strings.Contains(line, "read") {
		return nil // shellNamesSet cannot match
	}
	secret := false
	for _, m := range shellNamesSet.FindAllStringSubmatch(line, -1) {
		name := m[1] + m[2]
		if secretName(name) && len(ScrubEnv([]string{name + "=x"}, allow, secrets...)) == 0 {
			secret = true
		}
	}
	if !secret {
		return nil
	}
	var out []string
	for _, m := range shellFileRead.FindAllStringSubmatch(line, -1) {
		out = append(out, m[1])
	}
	return out
}
