package agent

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"

	"gopkg.in/yaml.v3"
)

// conda's machine-wide configurations.
//
// conda reads a .condarc of the machine (/etc/conda, /var/lib/conda) and
// of its installation (the root conda runs from, CONDA_ROOT; and the
// active environment's, CONDA_PREFIX), each also as condarc and as the
// files of a condarc.d folder, besides the user's. A CI image's `conda
// config --system --add channels https://conda.anaconda.org/t/<token>/org`
// leaves a private channel's token there (in the URL's /t/ part), or an
// admin a proxy's password, outside every home and readable by every
// uid. A contained process is shown each without them: every /t/<token>
// part and URL user name and password removed, the rest (channels,
// mirrors) kept; the client key and certificate a file names
// (client_ssl_cert_key, client_ssl_cert) are covered.

// condaSystemRoots are the machine's own conda configuration folders.
var condaSystemRoots = []string{"/etc/conda", "/var/lib/conda"}

// condaToken matches the token part of a conda channel URL.
var condaToken = regexp.MustCompile(`/t/[A-Za-z0-9_-]+`)

// condaKeyFileSetting matches a setting naming a client key or
// certificate, and its value.
var condaKeyFileSetting = regexp.MustCompile(`^\s*(client_ssl_cert_key|client_ssl_cert)\s*:\s*['"]?([^'"#\s]+)`)

// condaConfigFiles are the machine-wide conda configurations base leads
// to: those of the machine, of CONDA_ROOT, CONDA_PREFIX and the
// installation CONDA_EXE or a conda on PATH runs from; and the
// condarc.d files past the bound, to cover (boundedMatches).
func condaConfigFiles(base []string) (files, cover []string) {
	roots := slices.Clone(condaSystemRoots)
	for _, v := range []string{"CONDA_ROOT", "CONDA_PREFIX"} {
		roots = append(roots, lookup(base, v))
	}
	exes := []string{lookup(base, "CONDA_EXE")}
	for i, dir := range filepath.SplitList(lookup(base, "PATH")) {
		if i >= 64 {
			break
		}
		exes = append(exes, filepath.Join(dir, "conda"))
	}
	for _, exe := range exes {
		if !filepath.IsAbs(exe) {
			continue
		}
		roots = append(roots, filepath.Dir(filepath.Dir(exe)))
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			roots = append(roots, filepath.Dir(filepath.Dir(real)))
		}
	}
	for _, r := range roots {
		if !filepath.IsAbs(r) || filepath.Clean(r) == "/" {
			continue
		}
		found := []string{filepath.Join(r, ".condarc"), filepath.Join(r, "condarc")}
		for _, pattern := range []string{"*.yml", "*.yaml"} {
			m, _ := filepath.Glob(filepath.Join(r, "condarc.d", pattern))
			read, rest := boundedMatches(m)
			found, cover = append(found, read...), append(cover, rest...)
		}
		for _, f := range found {
			if f = filepath.Clean(f); !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	return files, cover
}

// stripCondaCredentials returns a condarc without channel tokens and URL
// user names and passwords, and the client key files it names. The
// lines are filtered as they read; then the file is read as YAML, as
// conda reads it (condaYAMLView), for what its escapes and continued
// strings spell.
func stripCondaCredentials(b []byte) (view []byte, keyFiles []string) {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if m := condaKeyFileSetting.FindSubmatch(line); m != nil {
			keyFiles = append(keyFiles, string(m[2]))
		}
		out.Write(withoutCondaCredentials(line))
	}
	view, named := condaYAMLView(out.Bytes())
	for _, k := range named {
		if !slices.Contains(keyFiles, k) {
			keyFiles = append(keyFiles, k)
		}
	}
	return view, keyFiles
}

// withoutCondaCredentials is s without channel tokens and URL user
// names and passwords.
func withoutCondaCredentials(s []byte) []byte {
	return condaToken.ReplaceAll(withoutUserinfo(s), nil)
}

// condaYAMLView is view, a condarc the line filter has passed, as YAML:
// a double-quoted string may spell a character as an escape
// (\x40 for an @, \x2f for a slash) or go on over lines, so a token
// or a password the lines did not show whole is found in the strings
// YAML reads. Where one is, the document is shown written anew with
// every string filtered; a file that is no YAML conda reads is shown as
// the lines were filtered. The client key files its settings name are
// returned as YAML reads them.
func condaYAMLView(view []byte) ([]byte, []string) {
	var doc yaml.Node
	if err := yaml.Unmarshal(view, &doc); err != nil {
		return view, nil
	}
	changed, keys := scrubCondaNode(&doc, 0)
	if !changed {
		return view, keys
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, keys
	}
	return out, keys
}

// maxCondaDepth bounds how deep scrubCondaNode walks a document.
const maxCondaDepth = 64

// scrubCondaNode filters every string of n (withoutCondaCredentials),
// reporting whether one changed, and returns the files the client key
// settings within it name. Past maxCondaDepth a node is emptied.
func scrubCondaNode(n *yaml.Node, depth int) (changed bool, keys []string) {
	if depth > maxCondaDepth {
		*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
		return true, nil
	}
	if n.Kind == yaml.ScalarNode {
		if v := string(withoutCondaCredentials([]byte(n.Value))); v != n.Value {
			n.Value, n.Style = v, yaml.DoubleQuotedStyle
			return true, nil
		}
		return false, nil
	}
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 1 && c.Kind == yaml.ScalarNode {
			if k := n.Content[i-1].Value; k == "client_ssl_cert_key" || k == "client_ssl_cert" {
				keys = append(keys, c.Value)
			}
		}
		ch, named := scrubCondaNode(c, depth+1)
		changed, keys = changed || ch, append(keys, named...)
	}
	return changed, keys
}

// condaConfigViews are the overlays showing each machine-wide conda
// configuration without its credentials, where that changed it, and
// the absolute client key files they name, to cover.
func condaConfigViews(base []string) (overlays []FileOverlay, keys []string) {
	files, cover := condaConfigFiles(base)
	overlays, keys = strippedViews(files, stripCondaCredentials, false)
	return overlays, append(keys, cover...)
}
