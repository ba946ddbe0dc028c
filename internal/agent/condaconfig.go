package agent

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
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
// user names and passwords, and the client key files it names.
func stripCondaCredentials(b []byte) (view []byte, keyFiles []string) {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if m := condaKeyFileSetting.FindSubmatch(line); m != nil {
			keyFiles = append(keyFiles, string(m[2]))
		}
		out.Write(condaToken.ReplaceAll(withoutUserinfo(line), nil))
	}
	return out.Bytes(), keyFiles
}

// condaConfigViews are the overlays showing each machine-wide conda
// configuration without its credentials, where that changed it, and
// the absolute client key files they name, to cover.
func condaConfigViews(base []string) (overlays []FileOverlay, keys []string) {
	files, cover := condaConfigFiles(base)
	overlays, keys = strippedViews(files, stripCondaCredentials, false)
	return overlays, append(keys, cover...)
}
