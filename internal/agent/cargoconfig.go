package agent

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Cargo's configuration outside the home.
//
// Cargo takes a registry's token from its configuration as well as from
// credentials.toml (registries.<name>.token, registry.token), and a Rust
// image keeps CARGO_HOME outside every home (/usr/local/cargo), where an
// admin's config.toml gives the company registry its token and the
// proxy a password. credentials.toml is covered (toolchainCredentials);
// the configuration is shown without its tokens and URL passwords, the
// registries' addresses kept, as no build reads a token.

// cargoToken matches a token setting's value in a TOML line or inline
// table (token = "…", Token='…'), keeping what precedes the value.
var cargoToken = regexp.MustCompile(`(?i)(\btoken\s*=\s*)(?:"(?:[^"\\]|\\.)*"|'[^']*')`)

// cargoConfigFiles are the configurations in the folder Cargo keeps
// them in: CARGO_HOME, else ~/.cargo (shown when granted).
func cargoConfigFiles(base []string) []string {
	creds := toolchainCredentials(base)
	if len(creds) == 0 {
		return nil
	}
	dir := filepath.Dir(creds[0])
	return []string{filepath.Join(dir, "config.toml"), filepath.Join(dir, "config")}
}

// tomlKeyLine matches a TOML line setting a key (bare, quoted or
// dotted): the key and the value with the rest of the line.
var tomlKeyLine = regexp.MustCompile(`^\s*((?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*'))*)\s*=\s*(.*)`)

// tomlTable matches a table's header line, [name] or [[name]].
var tomlTable = regexp.MustCompile(`^\s*\[\[?\s*([^\]]*?)\s*\]`)

// stripCargoCredentials is a Cargo configuration with every token's
// value emptied and no user name or password in a URL. A token is any
// key whose last part is token, quoted or not (its value left out
// whole, a multi-line string with it), and in the [env] table, which
// gives builds their environment, any variable whose name says it is a
// secret or whose value looks like a token.
func stripCargoCredentials(b []byte) ([]byte, []string) {
	b = withoutTokenStrings(b)
	var out bytes.Buffer
	closing := "" // the end of a multi-line string being left out
	var table []string
	provider := false // within a credential provider's value
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if closing != "" {
			if bytes.Contains(line, []byte(closing)) {
				closing = ""
			}
			continue
		}
		if m := tomlTable.FindSubmatch(line); m != nil {
			table = tomlKeyParts(string(m[1]))
		}
		if m := tomlKeyLine.FindSubmatchIndex(line); m != nil && cargoSecretKey(string(line[m[2]:m[3]]), string(line[m[4]:m[5]]), table) {
			closing = multiLineOpen(string(line[m[4]:m[5]]))
			line = append(line[:m[4]:m[4]], "\"\"\n"...)
		}
		line = withoutUserinfo(cargoToken.ReplaceAll(line, []byte(`${1}""`)))
		key := tomlKeyLine.FindSubmatch(line)
		if provider || key != nil && strings.Contains(strings.ToLower(string(key[1])), "credential-provider") {
			// A credential provider's command line (an array over
			// lines, maybe) may hold the token: it is left out by its
			// shape (a git revision elsewhere, of that shape, stays).
			opens := provider || bytes.HasPrefix(bytes.TrimSpace(key[2]), []byte("["))
			provider = opens && !bytes.Contains(line, []byte("]"))
			line = []byte(withoutTokenWords(string(line)))
		}
		out.Write(line)
	}
	return out.Bytes(), nil
}

// tomlKeyParts are the parts of a dotted TOML key (or table name), as
// written, without their blanks and quotes, a double-quoted one with its
// escapes decoded (tomlKeyName).
func tomlKeyParts(key string) []string {
	parts := strings.Split(key, ".")
	for i, p := range parts {
		parts[i] = tomlKeyName(strings.TrimSpace(p))
	}
	return parts
}

// tomlKeyName is a TOML key part as TOML reads it: a bare one as it is,
// a literal one without its quotes, a basic one with its escapes
// (\u0065) decoded. One whose escapes planex cannot decode is taken
// for a token's.
func tomlKeyName(k string) string {
	if len(k) < 2 || k[0] != '"' || k[len(k)-1] != '"' || !strings.Contains(k, `\`) {
		return strings.Trim(k, `"'`)
	}
	if s, err := strconv.Unquote(k); err == nil {
		return s
	}
	return "token"
}

// tomlTokenKey matches where a key part that may name a token (bare
// token, or any quoted part) is set: the part and the blanks and = after
// it, the value following.
var tomlTokenKey = regexp.MustCompile(`(?i)(\btoken|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')\s*=\s*`)

// withoutTokenStrings is a Cargo configuration with the string value of
// every key part naming token (tomlKeyName's reading, in any case)
// emptied, wherever it stands (a line's key, an inline table's) and in
// whichever of TOML's four kinds of string, a multi-line one over as
// many lines as it takes.
func withoutTokenStrings(b []byte) []byte {
	var out []byte
	for {
		m := tomlTokenKey.FindSubmatchIndex(b)
		if m == nil {
			return append(out, b...)
		}
		end := m[1]
		n := 0
		if strings.EqualFold(tomlKeyName(string(b[m[2]:m[3]])), "token") {
			n = tomlStringLen(b[end:])
		}
		if n == 0 {
			out, b = append(out, b[:end]...), b[end:]
			continue
		}
		out = append(append(out, b[:end]...), `""`...)
		b = b[end+n:]
	}
}

// tomlStringLen is the length of the TOML string b starts with (basic,
// literal, or either multi-line kind), or 0 when it starts with none;
// one left open runs to the end.
func tomlStringLen(b []byte) int {
	for _, q := range []string{`"""`, `'''`, `"`, `'`} {
		if !bytes.HasPrefix(b, []byte(q)) {
			continue
		}
		escapes := q[0] == '"'
		for i := len(q); i < len(b); i++ {
			switch {
			case escapes && b[i] == '\\':
				i++
			case bytes.HasPrefix(b[i:], []byte(q)):
				// A multi-line string may end in up to two more quotes.
				j := i + len(q)
				for k := 0; len(q) == 3 && k < 2 && j < len(b) && b[j] == q[0]; k++ {
					j++
				}
				return j
			case len(q) == 1 && b[i] == '\n':
				return i
			}
		}
		return len(b)
	}
	return 0
}

// multiLineOpen is the delimiter of a TOML multi-line string that val
// opens and does not close on its line, or "".
func multiLineOpen(val string) string {
	for _, q := range []string{`"""`, `'''`} {
		if strings.HasPrefix(val, q) && !strings.Contains(val[len(q):], q) {
			return q
		}
	}
	return ""
}

// cargoSecretKey says whether a TOML key (as written) with value val,
// in the table named table, holds a secret: its last part is token, or
// it gives a variable of the env table ([env] NAME, env.NAME, [env.NAME]
// value, an inline { value = … }) whose name says so or whose value
// holds a word that looks like a token.
func cargoSecretKey(key, val string, table []string) bool {
	parts := append(slices.Clone(table), tomlKeyParts(key)...)
	if strings.EqualFold(parts[len(parts)-1], "token") {
		return true
	}
	if len(parts) < 2 || parts[0] != "env" {
		return false
	}
	return secretName(parts[1]) || withoutTokenWords(val) != val
}

// cargoConfigViews are the overlays showing Cargo's configurations
// without their credentials: CARGO_HOME's and those of the folders
// above each of work (cargoConfigsAbove).
func cargoConfigViews(base, work []string) []FileOverlay {
	views, _ := strippedViews(append(cargoConfigFiles(base), cargoConfigsAbove(work)...), stripCargoCredentials, false)
	return views
}

// cargoConfigsAbove are the .cargo/config.toml and .cargo/config files
// of every folder above each of dirs (absolute), to /: Cargo reads those
// of the folder it runs in and of each of its parents, a runner admin's
// (/srv/.cargo above the work folder) among them. A folder's own are
// its content, the step's to read as they are.
func cargoConfigsAbove(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		for p := filepath.Dir(filepath.Clean(d)); ; p = filepath.Dir(p) {
			for _, name := range []string{"config.toml", "config"} {
				if f := filepath.Join(p, ".cargo", name); !slices.Contains(out, f) {
					out = append(out, f)
				}
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	}
	return out
}
