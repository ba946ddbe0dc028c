package agent

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
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

// stripCargoCredentials is a Cargo configuration with every token's
// value emptied and no user name or password in a URL.
func stripCargoCredentials(b []byte) ([]byte, []string) {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		out.Write(withoutUserinfo(cargoToken.ReplaceAll(line, []byte(`${1}""`))))
	}
	return out.Bytes(), nil
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
