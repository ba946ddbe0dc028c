package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The machine's proxy and package repository credentials.
//
// An admin of a self-hosted runner, or a corporate image, gives the
// machine's services and package managers the proxy's password and the
// private repositories' credentials in files under /etc that every uid
// reads: apt's configuration (Acquire::http::Proxy "http://user:pass@…"),
// its sources (deb https://user:token@…) and its netrc-style auth files,
// the Docker daemon's proxy (a systemd drop-in, as Docker's
// documentation gives it, or daemon.json's "proxies"), systemd's units
// (Environment=, EnvironmentFile=, a token on an ExecStart= line) and
// its manager-wide DefaultEnvironment=, yum's and dnf's repositories and
// proxy, wget's machine-wide wgetrc, RubyGems' gemrc, the shells'
// machine-wide profiles (/etc/profile.d/proxy.sh exporting
// https_proxy=http://user:pass@…) and the services' /etc/default and
// /etc/sysconfig files (SUSE's sysconfig/proxy, an old Docker's
// default/docker). A contained process is shown each
// without its credentials, or not at all where the whole file is one.

// sysConfigFilter is how a machine-wide file loses its credentials.
type sysConfigFilter int

const (
	// filterURLs removes the user names and passwords of URLs and of
	// proxy addresses (apt's files, daemon.json).
	filterURLs sysConfigFilter = iota
	// filterPasswords also leaves out the ini lines whose key names a
	// password (yum's, dnf's and wget's password, proxy_password,
	// http_passwd, …) and covers the client keys they name.
	filterPasswords
	// filterEnvironment keeps of systemd's Environment= and
	// DefaultEnvironment= lines only the variables the step's
	// environment would pass.
	filterEnvironment
	// filterCover covers the whole file (a netrc-style auth file).
	filterCover
	// filterShellURLs removes only the user names and passwords of URLs
	// with a scheme: a shell script (a profile, /etc/default's files)
	// holds words such as ${debian_chroot:+…}\u@\h that a proxy address
	// without a scheme would match.
	filterShellURLs
	// filterMountOptions leaves out the password options of mount
	// options (fstab's and autofs maps' password=, pass=) and covers
	// the credentials= files they name.
	filterMountOptions
	// filterNuGetPasswords leaves out the lines of a NuGet
	// configuration that give a feed's password (<add
	// key="ClearTextPassword" value="…"/>, or "Password"): NuGet on
	// Linux cannot encrypt one, so it is kept in clear.
	filterNuGetPasswords
	// filterMySQL is filterPasswords for MySQL's and MariaDB's option
	// files, whose !include and !includedir lines name more files to
	// show so (mysqlIncludes).
	filterMySQL
	// filterGitConfig is filterPasswords for git's configuration: its
	// credential helpers and extra headers are left out too, and the
	// files a helper stores credentials in or the configuration
	// includes are covered (withoutGitCredentials).
	filterGitConfig
)

// nugetPasswordLine matches a NuGet configuration's line giving a
// password, quoted either way, in any case, blanks around the =: a
// feed's (Password, ClearTextPassword) or the proxy's
// (http_proxy.password), any key ending in password.
var nugetPasswordLine = regexp.MustCompile(`(?i)\bkey\s*=\s*["'][^"']*password["']`)

// xmlCharRef matches an XML character reference, decimal or hex
// (&#119;, &#x43;), and the predefined entities.
var xmlCharRef = regexp.MustCompile(`&#[xX]([0-9a-fA-F]{1,8});|&#([0-9]{1,10});|&(amp|lt|gt|quot|apos);`)

// xmlUnescaped is s with its character references and predefined
// entities replaced by what they stand for, as NuGet's XML reader reads
// an attribute: a key may spell "Password" as "Pass&#119;ord". A
// reference to no character stands for U+FFFD.
func xmlUnescaped(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	entities := map[string]string{"amp": "&", "lt": "<", "gt": ">", "quot": `"`, "apos": "'"}
	return xmlCharRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := xmlCharRef.FindStringSubmatch(ref)
		if m[3] != "" {
			return entities[m[3]]
		}
		base, digits := 16, m[1]
		if digits == "" {
			base, digits = 10, m[2]
		}
		n, err := strconv.ParseUint(digits, base, 32)
		if err != nil || !utf8.ValidRune(rune(n)) {
			return string(utf8.RuneError)
		}
		return string(rune(n))
	})
}

// isNuGetPassword reports whether text (an <add> element, a line) gives
// a password, its character references decoded, or names its key with
// an entity of the file's own DOCTYPE (&p;), which planex does not
// expand: that key may spell Password, so the element is taken for one.
func isNuGetPassword(text string) bool {
	plain := xmlUnescaped(text)
	return nugetPasswordLine.MatchString(plain) || nugetEntityKey.MatchString(plain)
}

// nugetEntityKey matches a key attribute whose value holds an entity
// reference of a name XML does not predefine.
var nugetEntityKey = regexp.MustCompile(`(?i)\bkey\s*=\s*(?:"[^"]*&[A-Za-z_:][-\w.:]*;[^"]*"|'[^']*&[A-Za-z_:][-\w.:]*;[^']*')`)

// nugetAddElement matches an <add …> element of a NuGet configuration
// over as many lines as it takes, a > inside a quoted value with it, a
// namespace prefix before its name too (<n:add …>: a reader that goes
// by the local name takes it for an add).
var nugetAddElement = regexp.MustCompile(`(?i)<(?:[\w.-]+:)?add\b(?:[^>"']|"[^"]*"|'[^']*')*>`)

// withoutNuGetPasswords is a NuGet configuration without the <add>
// elements giving a password (nugetPasswordLine), wherever their key
// stands and however many lines they take: a value on the line after
// its key was shown. Each leaves a NUL (which XML text cannot hold) in
// its place, so that a line it leaves blank is dropped (nugetLine).
func withoutNuGetPasswords(b []byte) []byte {
	return nugetAddElement.ReplaceAllFunc(b, func(el []byte) []byte {
		if isNuGetPassword(string(el)) {
			return []byte{0}
		}
		return el
	})
}

// nugetLine is a line of withoutNuGetPasswords' answer as shown: without
// its NULs, and dropped (false) where nothing but blanks is left around
// them, or where it still gives a password.
func nugetLine(line string) (string, bool) {
	if isNuGetPassword(line) {
		return "", false
	}
	if !strings.Contains(line, "\x00") {
		return line, true
	}
	line = strings.ReplaceAll(line, "\x00", "")
	return line, strings.TrimSpace(line) != ""
}

// sysConfigs are the machine-wide files, as globs under /etc, and how
// each loses its credentials.
var sysConfigs = []struct {
	glob   string
	filter sysConfigFilter
}{
	{"apt/apt.conf", filterURLs}, {"apt/apt.conf.d/*", filterURLs},
	{"apt/sources.list", filterURLs}, {"apt/sources.list.d/*", filterURLs},
	{"apt/auth.conf", filterCover}, {"apt/auth.conf.d/*", filterCover},
	{"docker/daemon.json", filterURLs},
	{"yum.conf", filterPasswords}, {"dnf/dnf.conf", filterPasswords},
	{"yum.repos.d/*.repo", filterPasswords}, {"wgetrc", filterPasswords},
	{"gemrc", filterURLs},
	{"profile", filterShellURLs}, {"profile.d/*", filterShellURLs}, {"bash.bashrc", filterShellURLs},
	{"bashrc", filterShellURLs}, {"zshenv", filterShellURLs}, {"zsh/zshenv", filterShellURLs},
	{"zsh/zprofile", filterShellURLs}, {"default/*", filterShellURLs}, {"sysconfig/*", filterShellURLs},
	// The other shells' startup files every login reads, by the names
	// Debian's and Red Hat's packages give them: zsh's rc and login
	// files, csh's and fish's (cshAssignment reads their syntax).
	{"zsh/zshrc", filterShellURLs}, {"zsh/zlogin", filterShellURLs}, {"zsh/zlogout", filterShellURLs},
	{"zshrc", filterShellURLs}, {"zprofile", filterShellURLs}, {"zlogin", filterShellURLs}, {"zlogout", filterShellURLs},
	{"bash.bash_logout", filterShellURLs}, {"csh.cshrc", filterShellURLs}, {"csh.login", filterShellURLs},
	{"csh.logout", filterShellURLs}, {"fish/config.fish", filterShellURLs}, {"fish/conf.d/*", filterShellURLs},
	// The skeleton useradd copies into each new home: its rc, profile
	// and alias files.
	{"skel/.*", filterShellURLs}, {"skel/.config/fish/*", filterShellURLs},
	// The cron tables and rc.local: shell command lines (a job's token
	// in its curl header, an assignment above the jobs).
	{"crontab", filterShellURLs}, {"cron.d/*", filterShellURLs}, {"rc.local", filterShellURLs},
	// R's site environment file, read into every R session (NAME=value
	// lines: a GITHUB_PAT for installing packages, a proxy).
	{"R/Renviron.site", filterShellURLs}, {"R/Rprofile.site", filterShellURLs},
	// Database clients' machine-wide options and data sources, and
	// Subversion's proxy: their password settings.
	{"my.cnf", filterMySQL}, {"mysql/my.cnf", filterMySQL}, {"mysql/conf.d/*", filterMySQL},
	{"mysql/mariadb.conf.d/*", filterMySQL}, {"odbc.ini", filterPasswords},
	{"postgresql-common/pg_service.conf", filterPasswords}, {"subversion/servers", filterPasswords},
	// boto's keys (gsutil's, the older AWS tools'): no build reads them.
	{"boto.cfg", filterCover},
	// A private registry's client keys for the container engines
	// (Docker's and Podman's certs.d; their CA certificates stay) and
	// OpenVPN's folder (a client's key, inline or beside it, and its
	// auth-user-pass file), as an admin copies them, readable by all.
	{"docker/certs.d/*/*.key", filterCover}, {"containers/certs.d/*/*.key", filterCover},
	{"openvpn", filterCover},
	{"fstab", filterMountOptions}, {"auto.*", filterMountOptions},
	{"libnss-ldap.conf", filterPasswords}, {"pam_ldap.conf", filterPasswords}, {"nslcd.conf", filterPasswords},
	{"ldap.conf", filterPasswords}, {"ssmtp/ssmtp.conf", filterPasswords}, {"msmtprc", filterPasswords},
	{"systemd/system.conf", filterEnvironment}, {"systemd/user.conf", filterEnvironment},
	{"systemd/system.conf.d/*.conf", filterEnvironment}, {"systemd/user.conf.d/*.conf", filterEnvironment},
	// NuGet's machine-wide configurations on Linux, read by every
	// dotnet restore: a private feed's password in clear.
	{"opt/NuGet/Config/*.config", filterNuGetPasswords}, {"opt/NuGet/Config/*.Config", filterNuGetPasswords},
	// git's system configuration, read by every git a step runs: a
	// token in an insteadOf URL, an extra header or a helper.
	{"gitconfig", filterGitConfig},
	// A Kubernetes node's credentials: k3s's and RKE2's folder (the
	// kubeconfig with its client key, registries.yaml's passwords,
	// config.yaml's join token) and kubeadm's kubeconfigs and private
	// keys (its CA certificates and manifests stay).
	{"rancher", filterCover}, {"kubernetes/*.conf", filterCover},
	{"kubernetes/pki/*.key", filterCover}, {"kubernetes/pki/etcd/*.key", filterCover},
	// Services' definitions with their secrets, no build reads:
	// supervisord's programs (environment=AGENT_TOKEN="…") and web
	// password, Telegraf's outputs' tokens and headers.
	{"supervisor", filterCover}, {"supervisord.conf", filterCover}, {"supervisord.d", filterCover},
	{"telegraf", filterCover},
	// containerd's configuration: the CRI plugin's registry
	// credentials and hosts.toml headers.
	{"containerd", filterCover},
	// Postfix's and Exim's mail relay passwords.
	{"postfix/sasl_passwd", filterCover}, {"postfix/sasl_passwd.*", filterCover}, {"postfix/sasl/*", filterCover},
	{"exim4/passwd.client", filterCover},
	// Other distributions' package managers: RHEL's subscription
	// manager's proxy password, SUSE's zypper repositories and their
	// credential files, Alpine's apk repositories.
	{"rhsm/rhsm.conf", filterPasswords}, {"zypp/repos.d/*.repo", filterPasswords},
	{"zypp/credentials.d", filterCover}, {"zypp/credentials.cat", filterCover},
	{"apk/repositories", filterURLs},
	// Monitoring and log shipping agents' configurations, with the key
	// or password each sends with (Datadog's api_key and its checks'
	// passwords, New Relic's license key, the outputs of Fluent Bit,
	// td-agent, fluentd, Vector, the OpenTelemetry Collector, Alloy,
	// Grafana's agent, Promtail and the Beats, Zabbix's pre-shared
	// keys), and cloud-init's (a datasource's credentials, MAAS's
	// OAuth token): only the agents read them.
	{"datadog-agent", filterCover}, {"newrelic-infra.yml", filterCover}, {"newrelic-infra", filterCover},
	{"fluent-bit", filterCover}, {"td-agent-bit", filterCover}, {"td-agent", filterCover}, {"fluent", filterCover},
	{"vector", filterCover}, {"otelcol", filterCover}, {"otelcol-contrib", filterCover}, {"alloy", filterCover},
	{"grafana-agent.yaml", filterCover}, {"grafana-agent", filterCover}, {"promtail", filterCover},
	{"filebeat", filterCover}, {"metricbeat", filterCover}, {"heartbeat", filterCover}, {"auditbeat", filterCover},
	{"elastic-agent", filterCover}, {"zabbix", filterCover}, {"cloud", filterCover},
	// Ansible's default inventory and the variables beside it: the
	// hosts' connection and become passwords (ansible.cfg stays).
	{"ansible/hosts", filterCover}, {"ansible/group_vars", filterCover}, {"ansible/host_vars", filterCover},
	{"ansible/inventory", filterCover}, {"ansible/inventories", filterCover},
}

// nugetCommonDataViews are the overlays showing NuGet's machine-wide
// configurations without their passwords where NUGET_COMMON_APPLICATION_DATA
// moves them from /etc/opt (machineConfigViews'): NuGet then reads
// <that folder>/NuGet/Config/*.config. Those past the bound are shown
// empty.
func nugetCommonDataViews(base []string) []FileOverlay {
	dir := lookup(base, "NUGET_COMMON_APPLICATION_DATA")
	if !filepath.IsAbs(dir) {
		return nil
	}
	var out []FileOverlay
	for _, ext := range []string{"*.config", "*.Config"} {
		m, _ := filepath.Glob(filepath.Join(dir, "NuGet", "Config", ext))
		read, rest := boundedMatches(m)
		for _, p := range rest {
			out = append(out, FileOverlay{Path: p})
		}
		for _, p := range read {
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue
			}
			if b, ok := readConfigToShow(real); ok {
				view, _ := filterSysConfig(b, filterNuGetPasswords, nil, nil)
				if b == nil || !bytes.Equal(view, b) {
					out = append(out, FileOverlay{Path: real, Content: view})
				}
			}
		}
	}
	return out
}

// unitDirs are the folders of the admin's systemd units under /etc,
// covered whole: a unit's command line may carry a token, and no build
// reads them. The environment files their units name are shown
// filtered as /etc/environment is.
var unitDirs = []string{"systemd/system", "systemd/user"}

// unitFolders are the admin's unit folders of the machine whose /etc is
// etc: /etc's (unitDirs) and /usr/local/lib's, which systemd reads too
// (found beside etc, a test's stand-in too).
func unitFolders(etc string) []string {
	var out []string
	for _, d := range unitDirs {
		out = append(out, filepath.Join(etc, d), filepath.Join(filepath.Dir(etc), "usr", "local", "lib", d))
	}
	return out
}

// maxUnitFiles bounds the unit files read in each unit folder.
const maxUnitFiles = 1024

// machineConfigViews are the overlays showing the machine's proxy and
// repository configurations under etc (/etc) without their credentials
// and the files and folders to cover: apt's auth files, the client keys
// the configurations name, the unit folders. allow and secrets are the
// step's environment filter (ScrubEnv's); keep are the folders the step
// must see, never covered.
func machineConfigViews(etc string, allow, secrets, keep []string) (overlays []FileOverlay, masks []string) {
	var sourced, included []string
	add := func(o []FileOverlay) {
		for _, v := range o {
			if !slices.ContainsFunc(overlays, func(h FileOverlay) bool { return h.Path == v.Path }) {
				overlays = append(overlays, v)
			}
		}
	}
	// The units' environment files first: one in /etc/default is shown
	// filtered as an environment (only allowed variables), not only
	// without URL credentials as the rest of that folder is.
	for _, d := range unitFolders(etc) {
		dir, err := filepath.EvalSymlinks(d)
		if err != nil || !isDirectory(dir) || !coverableDir(dir) || holdsAny(dir, keep) {
			continue
		}
		masks = append(masks, dir)
		masks = append(masks, slices.DeleteFunc(linkedUnits(dir, etc), func(f string) bool { return holdsAny(f, keep) })...)
		for _, f := range unitEnvironmentFiles(dir) {
			if !holdsAny(f, keep) && !inUnitDirs(f, etc) {
				add(environmentFileView(f, envAssignments, allow, secrets))
			}
		}
	}
	for _, sc := range sysConfigs {
		paths, _ := filepath.Glob(filepath.Join(etc, sc.glob))
		paths, rest := boundedMatches(paths)
		masks = append(masks, slices.DeleteFunc(rest, func(p string) bool { return holdsAny(p, keep) })...)
		for _, p := range paths {
			real, err := filepath.EvalSymlinks(p)
			if err != nil || holdsAny(real, keep) {
				continue
			}
			if sc.filter == filterCover {
				masks = append(masks, real)
				continue
			}
			b, ok := readConfigToShow(real)
			if !ok {
				continue
			}
			view, keys := filterSysConfig(b, sc.filter, allow, secrets)
			masks = append(masks, absKeys(keys, filepath.Dir(real))...)
			if b == nil || !bytes.Equal(view, b) {
				add([]FileOverlay{{Path: real, Content: view}})
			}
			sourced, included = append(sourced, named(sc.filter, b, real, filterShellURLs, sourcedFilesIn)...),
				append(included, named(sc.filter, b, real, filterMySQL, mysqlIncludes)...)
		}
	}
	sourcedOverlays, sourcedKeys := sourcedViews(sourced, allow, secrets, keep)
	add(sourcedOverlays)
	includedOverlays, includedMasks := mysqlIncludedViews(included, keep)
	add(includedOverlays)
	return overlays, slices.Concat(masks, sourcedKeys, includedMasks, pkgVarFiles(etc, keep))
}

// maxSourcedFiles bounds the files sourced by the machine's shell files
// that are read to be shown filtered.
const maxSourcedFiles = 256

// sourcedLine matches a shell line (or the end of one, after && or ;)
// that sources a file by its absolute path: . FILE or source FILE,
// quoted or not.
var sourcedLine = regexp.MustCompile(`(?:^|[;&|]\s*|\bthen\s+)\s*(?:\.|source)\s+["']?(/[^"'\s;&|)]+)`)

// sourcedFiles are the absolute files the shell code b sources.
func sourcedFiles(b []byte) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		for _, m := range sourcedLine.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// sourcedViews are the overlays showing the files the machine's shell
// files source (set -a; . /opt/ci/secrets.env; set +a), and those they
// source in turn, filtered as shell code: they lie anywhere, outside the
// folders planex filters, and hold what the profiles give every login.
// Files of keep and those past maxSourcedFiles are left as they are;
// keys are the files they read secrets from (shellSecretFiles), to cover.
func sourcedViews(files, allow, secrets, keep []string) (out []FileOverlay, keys []string) {
	var seen []string
	for i := 0; i < len(files) && len(seen) < maxSourcedFiles; i++ {
		walked, err := walkedAbs(files[i])
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(walked)
		if err != nil || slices.Contains(seen, real) || holdsAny(real, keep) {
			continue
		}
		seen = append(seen, real)
		b, ok := readConfigToShow(real)
		if !ok {
			continue
		}
		view, named := filterSysConfig(b, filterShellURLs, allow, secrets)
		if b == nil || !bytes.Equal(view, b) {
			out = append(out, FileOverlay{Path: real, Content: view})
		}
		keys = append(keys, absKeys(named, filepath.Dir(real))...)
		files = append(files, sourcedFiles(b)...)
	}
	return out, keys
}

// absKeys are the key files named, made absolute from dir where
// relative, as a process opening them would walk them.
func absKeys(keys []string, dir string) []string {
	var out []string
	for _, k := range keys {
		if !filepath.IsAbs(k) {
			k = dir + "/" + k
		}
		if k, err := walkedAbs(k); err == nil {
			out = append(out, k)
		}
	}
	return out
}

// inUnitDirs reports whether f lies in a unit folder of etc, covered
// whole.
func inUnitDirs(f, etc string) bool {
	for _, d := range unitFolders(etc) {
		real, err := filepath.EvalSymlinks(d)
		if err == nil && strings.HasPrefix(f, real+"/") {
			return true
		}
	}
	return false
}

func isDirectory(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// filterSysConfig is b as a contained process is shown it under filter,
// and the key files it names.
func filterSysConfig(b []byte, filter sysConfigFilter, allow, secrets []string) (view []byte, keyFiles []string) {
	if filter == filterNuGetPasswords {
		// NuGet reads a UTF-16 file as well: it is judged as text and
		// shown in its own encoding. One holding NULs still is no XML
		// NuGet reads, and a NUL is the filter's mark: it is shown empty.
		text, back := xmlText(b)
		if bytes.IndexByte(text, 0) >= 0 {
			return nil, nil
		}
		view, keyFiles = filterSysConfigText(withoutNuGetPasswords(text), filter, allow, secrets)
		return back(view), keyFiles
	}
	return filterSysConfigText(b, filter, allow, secrets)
}

// filterSysConfigText is filterSysConfig of b, UTF-8 text.
func filterSysConfigText(b []byte, filter sysConfigFilter, allow, secrets []string) (view []byte, keyFiles []string) {
	var out bytes.Buffer
	lines := strings.SplitAfter(string(b), "\n")
	if filter == filterEnvironment {
		// A file without credentials is shown as it is: only systemd's
		// continued lines are joined, to be judged whole.
		lines = unitLines(b)
	}
	switch filter {
	case filterPasswords, filterMySQL:
		lines, keyFiles = withoutPasswordSettings(lines)
	case filterGitConfig:
		lines, keyFiles = withoutGitCredentials(lines)
	}
	var shells shellFilter
	if filter == filterShellURLs {
		shells = newShellFilter(b, allow, secrets)
	}
	for _, line := range lines {
		switch filter {
		case filterMountOptions:
			var files []string
			line, files = withoutMountPasswords(line)
			keyFiles = append(keyFiles, files...)
		case filterEnvironment:
			if l, ok := filterEnvironmentLine(line, allow, secrets); ok {
				line = l
			}
		case filterNuGetPasswords:
			l, ok := nugetLine(line)
			if !ok {
				continue
			}
			line = l
		}
		if privateKeyLine.MatchString(line) {
			continue
		}
		if filter == filterShellURLs {
			keyFiles = append(keyFiles, shellSecretFiles(line, allow, secrets)...)
			line = withoutShellSecret(line, shells)
			if !strings.Contains(line, "://") {
				out.WriteString(line) // no urlUserinfo, no pathToken
				continue
			}
			out.Write(withoutPathTokens(urlUserinfo.ReplaceAll([]byte(line), []byte("$1"))))
			continue
		}
		out.Write(withoutUserinfo([]byte(line)))
	}
	return out.Bytes(), keyFiles
}

// withoutPasswordSettings are lines without the settings whose key
// names a password (passwordKey), and the client keys the others name
// (sslclientkey). A password's value continued on the lines after it
// goes with it: Python's configparser (yum's, pip's) and Subversion read
// the blank lines and those indented deeper than the key that follow it
// as more of its value.
func withoutPasswordSettings(lines []string) (kept, keyFiles []string) {
	dropping, indent := false, 0
	for _, line := range lines {
		body := strings.TrimRight(line, "\r\n")
		lead := len(body) - len(strings.TrimLeft(body, " \t"))
		if dropping && (strings.TrimSpace(body) == "" || lead > indent) {
			continue
		}
		dropping = false
		k, val := settingKey(line)
		if passwordKey(k) || k == "header" && !plainHeader(val) {
			dropping, indent = true, lead
			continue
		}
		if strings.HasSuffix(k, "sslclientkey") || k == "sslkey" {
			if v := strings.Trim(strings.TrimSpace(val), `"'`); v != "" {
				keyFiles = append(keyFiles, v)
			}
		}
		kept = append(kept, line)
	}
	return kept, keyFiles
}

// plainHeaders are the HTTP headers, in lower case, that carry no
// credential: a header= line of wgetrc giving another (Authorization,
// PRIVATE-TOKEN, X-JFrog-Art-Api, Cookie, a header of the server's own)
// is left out.
var plainHeaders = []string{"accept", "accept-language", "accept-encoding", "accept-charset", "user-agent",
	"cache-control", "pragma", "referer", "connection", "content-type", "dnt", "from"}

// plainHeader reports whether a header setting's value (Name: value)
// gives one of plainHeaders.
func plainHeader(val string) bool {
	name, _, _ := strings.Cut(val, ":")
	return slices.Contains(plainHeaders, strings.ToLower(strings.TrimSpace(name)))
}

// settingKey is the key of a configuration line (ini's key = value and
// key: value, or the key value of ldap.conf, msmtprc and their kind),
// lower case without _, - and blanks, and the value after it.
func settingKey(line string) (key, val string) {
	t := strings.TrimSpace(line)
	end := strings.IndexAny(t, "=: \t")
	if end < 0 {
		return "", ""
	}
	key = withoutSeparators(strings.ToLower(t[:end]))
	val = strings.TrimLeft(t[end:], " \t")
	if v, ok := strings.CutPrefix(val, ":"); ok {
		return key, v
	}
	return key, strings.TrimPrefix(val, "=")
}

// withoutSeparators is k without its underscores and hyphens: a
// setting's key as the programs reading it compare it. (A replacer made
// for each line was a tenth of the CPU of filtering /etc.)
func withoutSeparators(k string) string {
	if !strings.ContainsAny(k, "_-") {
		return k
	}
	b := make([]byte, 0, len(k))
	for i := 0; i < len(k); i++ {
		if k[i] != '_' && k[i] != '-' {
			b = append(b, k[i])
		}
	}
	return string(b)
}

// passwordKey reports whether a setting key (settingKey's) names a
// password: password, passwd, pass (ssmtp's AuthPass), pw (LDAP's
// bindpw, rootbindpw), pwd (ODBC's), with any prefix (proxy_password,
// http_passwd) and any number after it (MySQL's password1 to password3,
// mount.cifs' password2).
func passwordKey(k string) bool {
	k = strings.TrimRight(k, "0123456789")
	for _, suffix := range []string{"password", "passwd", "pass", "pwd", "pw"} {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	// MariaDB takes a long option by a prefix no other option shares
	// (pas=, passw=, passwor=), also after loose- (an option a program
	// does not know is skipped, not refused).
	k = strings.TrimPrefix(k, "loose")
	return len(k) >= 3 && strings.HasPrefix("password", k)
}

// mountWord matches a word of a mount table line.
var mountWord = regexp.MustCompile(`\S+`)

// withoutMountPasswords is a line of a mount table (fstab, an autofs
// map) without the password options of its comma-separated option
// lists (password=, pass=: CIFS's; what follows a % in user= and
// username=, where mount.cifs takes the password too), and the
// credentials= files they name, to cover. Comments pass as they are.
func withoutMountPasswords(line string) (string, []string) {
	if strings.HasPrefix(strings.TrimSpace(line), "#") {
		return line, nil
	}
	var files []string
	out := mountWord.ReplaceAllStringFunc(line, func(w string) string {
		if !strings.Contains(w, "=") {
			return w
		}
		var kept []string
		for _, opt := range strings.Split(w, ",") {
			name, val, _ := strings.Cut(opt, "=")
			k := strings.ToLower(strings.TrimLeft(name, "-"))
			if passwordKey(k) {
				continue
			}
			if (k == "credentials" || k == "cred") && filepath.IsAbs(val) {
				files = append(files, val)
			}
			if user, _, ok := strings.Cut(val, "%"); ok && (k == "user" || k == "username") {
				// mount.cifs takes the password after a % in the
				// user name (user=ci%secret).
				opt = name + "=" + user
			}
			kept = append(kept, opt)
		}
		return strings.Join(kept, ",")
	})
	return out, files
}

// unitLines splits b into lines, each with its newline, a line ending
// in a backslash joined with the next as systemd and ini readers join
// them (so a continued value is judged whole).
func unitLines(b []byte) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.SplitAfter(string(b), "\n") {
		body := strings.TrimRight(l, "\r\n")
		if strings.HasSuffix(body, "\\") {
			cur.WriteString(strings.TrimSuffix(body, "\\") + " ")
			continue
		}
		cur.WriteString(l)
		if cur.Len() > 0 {
			out = append(out, cur.String())
		}
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, cur.String()+"\n")
	}
	return out
}

// filterEnvironmentLine is an Environment= or DefaultEnvironment= line
// with only the assignments the step's environment would pass (no
// line when none passes); ok is false for any other line.
func filterEnvironmentLine(line string, allow, secrets []string) (string, bool) {
	key, val, found := strings.Cut(line, "=")
	k := strings.TrimSpace(key)
	if !found || (k != "Environment" && k != "DefaultEnvironment") {
		return line, false
	}
	var kept []string
	for _, w := range unitWords(val) {
		name, _, _ := strings.Cut(w, "=")
		if len(ScrubEnv([]string{name + "=x"}, allow, secrets...)) == 1 {
			kept = append(kept, quoteUnitWord(w))
		}
	}
	if len(kept) == 0 {
		return "", true
	}
	return k + "=" + strings.Join(kept, " ") + "\n", true
}

// unitWords splits a systemd value into its words: blanks separate
// them, single and double quotes group, a backslash escapes the next
// character.
func unitWords(v string) []string {
	var words []string
	var w strings.Builder
	in, quote, esc := false, byte(0), false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case esc:
			w.WriteByte(c)
			esc = false
		case c == '\\':
			esc, in = true, true
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// quoteUnitWord writes a word back so that unitWords reads it again.
func quoteUnitWord(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t\"'\\") {
		return w
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(w) + `"`
}

// unitFiles are the units and drop-ins of dir and its subfolders: its
// regular files and its links to regular files (systemctl link's units
// kept beside their service, .wants folders' links), each once by the
// file it leads to.
func unitFiles(dir string) []string {
	var files, seen []string
	for _, g := range []string{"*", "*/*"} {
		m, _ := filepath.Glob(filepath.Join(dir, g))
		for _, f := range m {
			real, err := filepath.EvalSymlinks(f)
			if err != nil || slices.Contains(seen, real) {
				continue
			}
			if fi, err := os.Stat(real); err == nil && fi.Mode().IsRegular() {
				seen = append(seen, real)
				files = append(files, real)
			}
		}
	}
	return files
}

// linkedUnits are the unit files dir's links lead to outside the unit
// folders of etc and the packages' (/usr/lib, /lib): a unit kept beside
// its service, whose Environment= lines the cover of dir leaves shown.
func linkedUnits(dir, etc string) []string {
	var out []string
	for _, f := range unitFiles(dir) {
		if strings.HasPrefix(f, dir+"/") || inUnitDirs(f, etc) || strings.HasPrefix(f, "/usr/lib/") || strings.HasPrefix(f, "/lib/") {
			continue
		}
		out = append(out, f)
	}
	return out
}

// unitEnvironmentFiles are the absolute files the EnvironmentFile=
// lines of the unit files in dir and its subfolders (drop-ins) name,
// their links resolved.
func unitEnvironmentFiles(dir string) []string {
	var out []string
	for i, f := range unitFiles(dir) {
		if i >= maxUnitFiles {
			// environmentPastBound refuses the step.
			break
		}
		b, err := readSmallRegular(f)
		if err != nil {
			continue
		}
		for _, line := range unitLines(b) {
			key, val, ok := strings.Cut(line, "=")
			if !ok || strings.TrimSpace(key) != "EnvironmentFile" {
				continue
			}
			for _, p := range unitWords(val) {
				p = strings.TrimPrefix(p, "-")
				if !filepath.IsAbs(p) {
					continue
				}
				if real, err := walkedAbs(p); err == nil && !slices.Contains(out, real) {
					out = append(out, real)
				}
			}
		}
	}
	return out
}

// named is what files finds in b, the content of file real, when it is
// shown under filter want (the files a shell file sources, an option
// file includes); none else.
func named(filter sysConfigFilter, b []byte, real string, want sysConfigFilter, files func(b []byte, dir string) []string) []string {
	if filter != want {
		return nil
	}
	return files(b, filepath.Dir(real))
}

// sourcedFilesIn is sourcedFiles for named: the absolute files shell
// code sources, wherever it lies.
func sourcedFilesIn(b []byte, _ string) []string { return sourcedFiles(b) }

// maxMySQLIncludes bounds the files MySQL's option files include that
// are read to be shown filtered.
const maxMySQLIncludes = 256

// mysqlIncludes are the files an option file's !include lines name and
// the option files (*.cnf, *.ini) of the folders its !includedir lines
// name, relative ones taken from dir.
func mysqlIncludes(b []byte, dir string) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		word, arg, ok := strings.Cut(strings.TrimSpace(line), " ")
		arg = strings.TrimSpace(arg)
		if !ok || arg == "" {
			continue
		}
		if !filepath.IsAbs(arg) {
			arg = filepath.Join(dir, arg)
		}
		switch word {
		case "!include":
			out = append(out, arg)
		case "!includedir":
			for _, pattern := range []string{"*.cnf", "*.ini"} {
				m, _ := filepath.Glob(filepath.Join(arg, pattern))
				out = append(out, m...)
			}
		}
	}
	return out
}

// mysqlIncludedViews are the overlays showing the option files that
// MySQL's machine-wide ones include (files, and what they include in
// turn), wherever they lie, without their passwords, and the files to
// cover: the client keys they name and the included files past
// maxMySQLIncludes. A file in a folder of keep is the step's own and
// is left alone.
func mysqlIncludedViews(files, keep []string) (out []FileOverlay, masks []string) {
	var seen []string
	for i := 0; i < len(files); i++ {
		real, err := filepath.EvalSymlinks(files[i])
		if err != nil || slices.Contains(seen, real) || holdsAny(real, keep) {
			continue
		}
		if len(seen) >= maxMySQLIncludes {
			masks = append(masks, real)
			continue
		}
		seen = append(seen, real)
		b, ok := readConfigToShow(real)
		if !ok {
			continue
		}
		view, keys := filterSysConfig(b, filterMySQL, nil, nil)
		if b == nil || !bytes.Equal(view, b) {
			out = append(out, FileOverlay{Path: real, Content: view})
		}
		masks = append(masks, absKeys(keys, filepath.Dir(real))...)
		files = append(files, mysqlIncludes(b, filepath.Dir(real))...)
	}
	return out, masks
}
