package agent

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
)

// Maven's machine-wide settings.
//
// Maven reads the settings of its installation (<maven home>/conf/
// settings.xml: a tool cache's or an image's Maven, Debian's
// /etc/maven/settings.xml) besides the user's: an admin keeps the
// repository manager's <server> passwords there, outside every home and
// readable by every uid. A contained process is shown each such file
// with its passwords, passphrases and private keys emptied and no user
// name or password in a URL; mirrors, profiles and the rest stay.

// mavenSecretElements match the settings elements that hold a
// credential, whatever their content (on one line or several).
var mavenSecretElements = []*regexp.Regexp{
	regexp.MustCompile(`(?s)(<password>).*?(</password>)`),
	regexp.MustCompile(`(?s)(<passphrase>).*?(</passphrase>)`),
	regexp.MustCompile(`(?s)(<privateKey>).*?(</privateKey>)`),
}

// mavenSettingsFiles are the installation settings of each Maven on
// planex's PATH (<prefix>/conf/settings.xml beside bin/mvn), of
// MAVEN_HOME and M2_HOME, and Debian's.
func mavenSettingsFiles(base []string) []string {
	var out []string
	add := func(p string) {
		if filepath.IsAbs(p) && !slices.Contains(out, filepath.Clean(p)) {
			out = append(out, filepath.Clean(p))
		}
	}
	for i, dir := range filepath.SplitList(lookup(base, "PATH")) {
		if i >= 64 {
			break
		}
		if mvn := filepath.Join(dir, "mvn"); filepath.IsAbs(dir) {
			if real, err := filepath.EvalSymlinks(mvn); err == nil {
				add(filepath.Join(filepath.Dir(filepath.Dir(real)), "conf", "settings.xml"))
			}
		}
	}
	for _, name := range []string{"MAVEN_HOME", "M2_HOME"} {
		if h := lookup(base, name); h != "" {
			add(filepath.Join(h, "conf", "settings.xml"))
		}
	}
	add("/etc/maven/settings.xml")
	return out
}

// mavenPrivateKey matches a server's private key file.
var mavenPrivateKey = regexp.MustCompile(`<privateKey>\s*([^<\s]+)\s*</privateKey>`)

// mavenConfigViews are the overlays showing each Maven installation's
// settings without credentials, where stripping changed them, and the
// private key files (absolute) its servers name, to cover.
func mavenConfigViews(base []string) (out []FileOverlay, keys []string) {
	for _, p := range mavenSettingsFiles(base) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		b, err := readSmallRegular(real)
		if err != nil {
			continue
		}
		for _, m := range mavenPrivateKey.FindAllSubmatch(b, -1) {
			if k := string(m[1]); filepath.IsAbs(k) {
				if k, err := walkedAbs(k); err == nil {
					keys = append(keys, k)
				}
			}
		}
		view := stripMavenCredentials(b)
		if !bytes.Equal(view, b) && !slices.ContainsFunc(out, func(o FileOverlay) bool { return o.Path == real }) {
			out = append(out, FileOverlay{Path: real, Content: view})
		}
	}
	return out, keys
}

// stripMavenCredentials empties the credential elements of a Maven
// settings file and removes user names and passwords from its URLs.
func stripMavenCredentials(b []byte) []byte {
	for _, re := range mavenSecretElements {
		b = re.ReplaceAll(b, []byte("${1}${2}"))
	}
	return urlUserinfo.ReplaceAll(b, []byte("$1"))
}
