package agent

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/planexhq/planex/internal/gitrepo"
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
// A tag may hold white space before its > (<password >, </password\n>),
// which XML and Maven's parser accept.
var mavenSecretElements = []*regexp.Regexp{
	regexp.MustCompile(`(?s)(<password\s*>).*?(</password\s*>)`),
	regexp.MustCompile(`(?s)(<passphrase\s*>).*?(</passphrase\s*>)`),
	regexp.MustCompile(`(?s)(<privateKey\s*>).*?(</privateKey\s*>)`),
}

// mavenHeaders matches a server configuration's HTTP headers, whose
// values carry a repository manager's token (GitLab's Private-Token,
// an Authorization header), and mavenHeaderValue one such value.
var (
	mavenHeaders     = regexp.MustCompile(`(?s)<httpHeaders\s*>.*?</httpHeaders\s*>`)
	mavenHeaderValue = regexp.MustCompile(`(?s)(<value\s*>).*?(</value\s*>)`)
)

// mavenSettingsFiles are the installation settings of each Maven on
// planex's PATH (<prefix>/conf/settings.xml beside bin/mvn), of
// MAVEN_HOME and M2_HOME, the ones MAVEN_ARGS or MAVEN_OPTS name (-s,
// -gs: a CI image's settings kept outside every home), and Debian's.
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
				// A wrapper script names its installation instead.
				for _, h := range launcherHomes(mvn, wrapperLine([]string{"MAVEN_HOME", "M2_HOME"}, "mvn")) {
					add(filepath.Join(h, "conf", "settings.xml"))
				}
			}
		}
	}
	for _, name := range []string{"MAVEN_HOME", "M2_HOME"} {
		if h := lookup(base, name); h != "" {
			add(filepath.Join(h, "conf", "settings.xml"))
		}
	}
	for _, p := range mavenArgFiles(base, mavenSettingsOptions) {
		add(p)
	}
	add("/etc/maven/settings.xml")
	return out
}

// mavenSettingsOptions are mvn's options naming a settings file, and
// mavenSecurityOptions the property naming the file that holds the
// master password the settings' encrypted passwords open with.
var (
	mavenSettingsOptions = []string{"-s", "--settings", "-gs", "--global-settings"}
	mavenSecurityOptions = []string{"-Dsettings.security"}
)

// mavenArgFiles are the absolute files the options opts name in the
// arguments mvn takes from the environment (MAVEN_ARGS, Maven 3.9's, and
// MAVEN_OPTS, the JVM's, where -D properties go): "-s FILE", "-s=FILE",
// "-sFILE" for a one-letter option.
func mavenArgFiles(base []string, opts []string) []string {
	var out []string
	for _, v := range []string{"MAVEN_ARGS", "MAVEN_OPTS"} {
		words := gitrepo.ShellWords(lookup(base, v))
		for i, w := range words {
			for _, o := range opts {
				var p string
				switch {
				case w == o && i+1 < len(words):
					p = words[i+1]
				case strings.HasPrefix(w, o+"="):
					p = w[len(o)+1:]
				case len(o) == 2 && strings.HasPrefix(w, o) && len(w) > 2:
					p = w[2:]
				}
				if filepath.IsAbs(p) {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// mavenPrivateKey matches a server's private key file: the tags with
// blanks before their >, the path maybe in a CDATA section, written
// with character references maybe (mavenKeyPath reads it).
var mavenPrivateKey = regexp.MustCompile(`<privateKey\s*>\s*((?:<!\[CDATA\[)?[^<\s]*?(?:\]\]>)?)\s*</privateKey\s*>`)

// mavenKeyPath is the path a private key element's content (a match of
// mavenPrivateKey) names, as Maven's XML reader reads it.
func mavenKeyPath(content string) string {
	if inner, ok := strings.CutPrefix(content, "<![CDATA["); ok {
		return strings.TrimSuffix(inner, "]]>")
	}
	return xmlUnescaped(content)
}

// mavenConfigViews are the overlays showing each Maven installation's
// settings without credentials, where stripping changed them, and the
// private key files (absolute) its servers name, to cover.
func mavenConfigViews(base []string) (out []FileOverlay, keys []string) {
	out, keys = strippedViews(mavenSettingsFiles(base), func(b []byte) ([]byte, []string) {
		// Maven reads a UTF-16 file as well: it is judged as text and
		// shown in its own encoding.
		text, back := xmlText(b)
		var named []string
		for _, m := range mavenPrivateKey.FindAllSubmatch(text, -1) {
			if p := mavenKeyPath(string(m[1])); p != "" {
				named = append(named, p)
			}
		}
		return back(stripMavenCredentials(text)), named
	}, false)
	for _, k := range append(mavenArgFiles(base, mavenSecurityOptions), mavenUserKeys(base)...) {
		if k, err := walkedAbs(k); err == nil {
			keys = append(keys, k)
		}
	}
	return out, keys
}

// mavenUserKeys are the private key files the user's own Maven settings
// (~/.m2/settings.xml of HOME and of planex's account, hidden with the
// home) name by an absolute path, which may lie outside the home
// (/opt/ci/deploy_key): ${user.home} and ${env.NAME} written out as
// Maven interpolates them.
func mavenUserKeys(base []string) []string {
	homes := []string{lookup(base, "HOME")}
	if h, err := os.UserHomeDir(); err == nil {
		homes = append(homes, h)
	}
	var out []string
	for _, h := range homes {
		if !filepath.IsAbs(h) {
			continue
		}
		b, err := readSmallRegular(filepath.Join(h, ".m2", "settings.xml"))
		if err != nil {
			continue
		}
		text, _ := xmlText(b)
		for _, m := range mavenPrivateKey.FindAllSubmatch(text, -1) {
			p := mavenSettingsVars.ReplaceAllStringFunc(mavenKeyPath(string(m[1])), func(v string) string {
				if v == "${user.home}" {
					return h
				}
				return lookup(base, strings.TrimSuffix(strings.TrimPrefix(v, "${env."), "}"))
			})
			if filepath.IsAbs(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// mavenSettingsVars matches the expressions Maven writes out in its
// settings that name a place: ${user.home} and ${env.NAME}.
var mavenSettingsVars = regexp.MustCompile(`\$\{(?:user\.home|env\.[A-Za-z_][A-Za-z0-9_]*)\}`)

// stripMavenCredentials empties the credential elements of a Maven
// settings file and removes user names and passwords from its URLs.
func stripMavenCredentials(b []byte) []byte {
	for _, re := range mavenSecretElements {
		b = re.ReplaceAll(b, []byte("${1}${2}"))
	}
	b = mavenHeaders.ReplaceAllFunc(b, func(h []byte) []byte {
		return mavenHeaderValue.ReplaceAll(h, []byte("${1}${2}"))
	})
	return urlUserinfo.ReplaceAll(b, []byte("$1"))
}
