package agent

import (
	"bytes"
	"path/filepath"
	"regexp"
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
// without their credentials.
func cargoConfigViews(base []string) []FileOverlay {
	views, _ := strippedViews(cargoConfigFiles(base), stripCargoCredentials, false)
	return views
}
