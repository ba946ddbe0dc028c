package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// errConfigLine is credentialsInFile's error for a setting a config
// file cannot hold on one line.
var errConfigLine = errors.New("a credential setting holds a line break")

// isCredentialSetting reports whether s carries a credential: an http
// extraheader (WithAuth's Authorization header, for every URL or one).
func isCredentialSetting(s setting) bool {
	return strings.HasSuffix(strings.ToLower(s.key), ".extraheader")
}

// credentialsInFile moves the credential settings of settings into a
// config file of mode 0600 and puts an include of that file in their
// place; file, when not nil, is a descriptor git must inherit as its
// first extra file (fd 3), which the include names; done closes and
// removes what was made. Without a credential setting, settings come
// back as they are.
func credentialsInFile(settings []setting) (out []setting, file *os.File, done func(), err error) {
	var body strings.Builder
	for _, s := range settings {
		if !isCredentialSetting(s) {
			out = append(out, s)
			continue
		}
		line, err := configFileLine(s)
		if err != nil {
			return nil, nil, func() {}, err
		}
		body.WriteString(line)
	}
	if body.Len() == 0 {
		return settings, nil, func() {}, nil
	}
	path, file, done, err := credentialFile([]byte(body.String()))
	if err != nil {
		return nil, nil, func() {}, err
	}
	return append(out, setting{"include.path", path}), file, done, nil
}

// credentialFileInFolder writes body to a file of mode 0600 in a folder
// of mode 0700 made for it and returns its path; done removes the
// folder. The file is named while git runs, and stays if planex is
// killed before done: the way of systems without /proc.
func credentialFileInFolder(body []byte) (path string, done func(), err error) {
	dir, err := os.MkdirTemp("", "planex-git-auth-")
	if err != nil {
		return "", func() {}, fmt.Errorf("creating the folder of git's credential config: %w", err)
	}
	done = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, "config")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		done()
		return "", func() {}, fmt.Errorf("writing git's credential config: %w", err)
	}
	return path, done, nil
}

// configFileLine is s as a config file's section and entry: a key
// section.subsection.name gives [section "subsection"], the subsection
// and the value quoted.
func configFileLine(s setting) (string, error) {
	if strings.ContainsAny(s.key+s.value, "\n\r\x00") {
		return "", errConfigLine
	}
	first, last := strings.Index(s.key, "."), strings.LastIndex(s.key, ".")
	if first < 0 {
		return "", fmt.Errorf("config key %q: %w", s.key, errConfigLine)
	}
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	section := "[" + s.key[:first] + "]"
	if last > first {
		section = "[" + s.key[:first] + ` "` + quote.Replace(s.key[first+1:last]) + `"]`
	}
	return section + "\n\t" + s.key[last+1:] + ` = "` + quote.Replace(s.value) + "\"\n", nil
}
