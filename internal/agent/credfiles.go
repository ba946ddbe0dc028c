package agent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/gitrepo"
)

// Credentials named by the environment.
//
// The allow-list keeps variables such as GOOGLE_APPLICATION_CREDENTIALS
// or KRB5CCNAME from a step, but not the files they name: where one lies
// outside the places the sandbox hides anyway (the homes, /tmp, the CI
// systems' temporary folders) a contained program read it by the path
// an image or an admin chose (/etc/gcloud/key.json, /opt/ci/kubeconfig,
// /var/lib/jenkins/.docker), which it can guess or find. So the files
// and folders that credential variables planex holds name are covered
// for every contained process; one passed on (--allow-env) is the
// user's grant and stays visible.

// credentialVar is a variable that names credentials: a file, a folder,
// or a list of files.
type credentialVar struct {
	name string
	kind credentialKind
}

// credentialKind says how a credential variable names its files.
type credentialKind int

const (
	// credFile names one file.
	credFile credentialKind = iota
	// credDir names a folder of credentials.
	credDir
	// credList names files separated by colons (KUBECONFIG).
	credList
	// credCommaList names files or folders separated by commas
	// (ANSIBLE_INVENTORY); an entry that is no path (a host list's
	// localhost) names nothing.
	credCommaList
	// credKerberos names a Kerberos cache or key table, maybe with a
	// type prefix (FILE:, DIR:, WRFILE:); other types name no file.
	credKerberos
	// credDBus is a D-Bus address list (unix:path=/…,guid=…;…): its
	// path sockets. An abstract one is Landlock's (section 1b of
	// docs/security.md), a listening address names no socket yet.
	credDBus
	// credSSHCommand is an ssh command line (GIT_SSH_COMMAND): the
	// files its -i, -F and -o IdentityFile= or CertificateFile= name.
	credSSHCommand
)

// credentialVars are the variables whose files are covered when
// planex holds the variable.
var credentialVars = []credentialVar{
	{"GOOGLE_APPLICATION_CREDENTIALS", credFile}, {"GOOGLE_GHA_CREDS_PATH", credFile},
	{"CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE", credFile}, {"CLOUDSDK_CONFIG", credDir},
	{"AWS_SHARED_CREDENTIALS_FILE", credFile}, {"AWS_CONFIG_FILE", credFile},
	{"AWS_WEB_IDENTITY_TOKEN_FILE", credFile},
	{"AZURE_FEDERATED_TOKEN_FILE", credFile}, {"AZURE_CLIENT_CERTIFICATE_PATH", credFile},
	{"AZURE_CONFIG_DIR", credDir},
	{"OCI_CLI_CONFIG_FILE", credFile}, {"BOTO_CONFIG", credFile},
	{"KUBECONFIG", credList}, {"HELM_REGISTRY_CONFIG", credFile},
	{"DOCKER_CONFIG", credDir}, {"DOCKER_CERT_PATH", credDir}, {"REGISTRY_AUTH_FILE", credFile},
	{"KRB5CCNAME", credKerberos}, {"KRB5_KTNAME", credKerberos}, {"KRB5_CLIENT_KTNAME", credKerberos},
	{"NETRC", credFile}, {"PGPASSFILE", credFile}, {"PGSSLKEY", credFile},
	{"NPM_CONFIG_USERCONFIG", credFile}, {"npm_config_userconfig", credFile},
	{"PIP_CONFIG_FILE", credFile}, {"TF_CLI_CONFIG_FILE", credFile},
	{"GH_CONFIG_DIR", credDir}, {"GNUPGHOME", credDir}, {"PASSWORD_STORE_DIR", credDir},
	{"ANSIBLE_VAULT_PASSWORD_FILE", credFile}, {"SOPS_AGE_KEY_FILE", credFile},
	// Infrastructure tools' own: Terraform's providers (Azure's
	// certificate and token file, Kubernetes' config list, the CLI's
	// older config variable), gcloud's token file, Oracle Cloud's
	// signing key, Helm's repository passwords, Ansible's SSH key,
	// PostgreSQL's service file, rclone's remotes, Databricks', Talos'
	// and Alibaba Cloud's configurations, Hugging Face's token, Kaggle's
	// folder, the TLS client keys of Vault, Consul, Nomad and etcd.
	{"ARM_CLIENT_CERTIFICATE_PATH", credFile}, {"ARM_OIDC_TOKEN_FILE_PATH", credFile},
	{"KUBE_CONFIG_PATH", credFile}, {"KUBE_CONFIG_PATHS", credList}, {"TERRAFORM_CONFIG", credFile},
	{"CLOUDSDK_AUTH_ACCESS_TOKEN_FILE", credFile}, {"OCI_CLI_KEY_FILE", credFile},
	{"HELM_REPOSITORY_CONFIG", credFile}, {"ANSIBLE_PRIVATE_KEY_FILE", credFile},
	{"PGSERVICEFILE", credFile}, {"RCLONE_CONFIG", credFile}, {"DATABRICKS_CONFIG_FILE", credFile},
	{"TALOSCONFIG", credFile}, {"ALIBABA_CLOUD_CREDENTIALS_FILE", credFile}, {"MYSQL_TEST_LOGIN_FILE", credFile},
	{"HF_TOKEN_PATH", credFile}, {"KAGGLE_CONFIG_DIR", credDir},
	{"VAULT_CLIENT_KEY", credFile}, {"CONSUL_CLIENT_KEY", credFile}, {"NOMAD_CLIENT_KEY", credFile}, {"ETCDCTL_KEY", credFile},
	// sbt's and Coursier's repository credentials, R's user environment
	// file (where GITHUB_PAT is kept), uv's configuration (an index's
	// URL with its password).
	{"SBT_CREDENTIALS", credFile}, {"COURSIER_CREDENTIALS", credFile}, {"R_ENVIRON_USER", credFile},
	{"UV_CONFIG_FILE", credFile},
	// The desktop session's: its bus starts programs for whoever
	// connects (systemd-run --user), and the runtime folder holds the
	// session's other sockets (a keyring daemon, gpg-agent, a Wayland
	// compositor, podman's). Default places (/run/user) are covered
	// anyway; these are for a session kept elsewhere (WSLg's
	// /mnt/wslg/runtime-dir, a bus address under /srv).
	{"DBUS_SESSION_BUS_ADDRESS", credDBus}, {"DBUS_SYSTEM_BUS_ADDRESS", credDBus},
	{"XDG_RUNTIME_DIR", credDir},
	// The user's base folders, which live in the home (hidden with it)
	// unless these variables move them: a CI image's or a user's
	// XDG_CONFIG_HOME=/config keeps gh's token (gh/hosts.yml), glab's,
	// sops' age key, rclone's and doctl's configurations outside every
	// home, the data folder keyrings and the state folder shell
	// histories. A contained process gets folders of its own for them.
	{"XDG_CONFIG_HOME", credDir}, {"XDG_DATA_HOME", credDir},
	{"XDG_STATE_HOME", credDir}, {"XDG_CACHE_HOME", credDir},
	// git's ssh command with a deploy key of its own
	// (GIT_SSH_COMMAND="ssh -i /opt/ci/deploy_key", as a workflow or
	// an image sets it to push), and the programs git and ssh ask for a
	// password (a script printing a token it holds).
	{"GIT_SSH_COMMAND", credSSHCommand}, {"GIT_ASKPASS", credFile}, {"SSH_ASKPASS", credFile},
	// Client keys and configurations with tokens of git's and the
	// package managers': git's TLS client key and certificate, Go's
	// environment file (go env -w GOPROXY=https://user:token@…), pip's
	// and npm's client keys, conda's configuration (a channel's
	// /t/<token>/ URL) and Poetry's folder (auth.toml).
	{"GIT_SSL_KEY", credFile}, {"GIT_SSL_CERT", credFile}, {"GOENV", credFile},
	{"PIP_CLIENT_CERT", credFile}, {"NPM_CONFIG_KEYFILE", credFile}, {"npm_config_keyfile", credFile},
	{"CONDARC", credFile}, {"POETRY_CONFIG_DIR", credDir},
	// A Buildkite job is told where its agent keeps its configuration
	// (with the agent's registration token), its hooks (an environment
	// hook exporting every build's secrets) and the job's environment
	// file (the job's session token among it): an agent started with
	// them elsewhere than the places the sandbox covers
	// (/etc/buildkite-agent) left them readable to its jobs.
	{"BUILDKITE_CONFIG_PATH", credFile}, {"BUILDKITE_HOOKS_PATH", credDir}, {"BUILDKITE_ENV_FILE", credFile},
	// Bundler's user configuration moved out of the home (a private gem
	// server's user:token, BUNDLE_GEMS__CORP__COM) and RubyGems' gemrc
	// (a source URL with a password).
	{"BUNDLE_USER_CONFIG", credFile}, {"GEMRC", credList},
	// More tools' key and password files: Terraform's Google provider
	// (a service account key's path, or the key itself, which names no
	// file), Snowflake's key pair, sudo's askpass program (the runner's
	// sudo password), restic's and Borg's repository keys, Consul's
	// token file and Ansible's become and connection password files.
	{"GOOGLE_CREDENTIALS", credFile}, {"GOOGLE_CLOUD_KEYFILE_JSON", credFile}, {"GCLOUD_KEYFILE_JSON", credFile},
	{"SNOWFLAKE_PRIVATE_KEY_PATH", credFile}, {"SUDO_ASKPASS", credFile},
	{"RESTIC_PASSWORD_FILE", credFile}, {"BORG_KEY_FILE", credFile}, {"CONSUL_HTTP_TOKEN_FILE", credFile},
	{"ANSIBLE_BECOME_PASSWORD_FILE", credFile}, {"ANSIBLE_CONNECTION_PASSWORD_FILE", credFile},
	// Ansible's inventories (files or folders, a comma-separated list;
	// ANSIBLE_HOSTS is the older name): the hosts' connection and become
	// passwords beside them.
	{"ANSIBLE_INVENTORY", credCommaList}, {"ANSIBLE_HOSTS", credCommaList},
	// Command-line clients' configurations with a token or password:
	// wget's (user, password), GitLab's glab and GitHub's hub, Scaleway's
	// and Hetzner Cloud's.
	{"WGETRC", credFile}, {"GLAB_CONFIG_DIR", credDir}, {"HUB_CONFIG", credFile},
	{"SCW_CONFIG_PATH", credFile}, {"HCLOUD_CONFIG", credFile},
	// What a service manager or a pod gives the process: systemd's
	// credentials of the unit running it (LoadCredential=, in
	// /run/credentials/<unit>, which a step with the network open
	// sees), EKS Pod Identity's token, which the pod's credential
	// endpoint exchanges for the role's keys.
	{"CREDENTIALS_DIRECTORY", credDir}, {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", credFile},
	// unixODBC's user DSN file (a DSN's password) and Pulumi's
	// passphrase file, moved out of the home.
	{"ODBCINI", credFile}, {"PULUMI_CONFIG_PASSPHRASE_FILE", credFile},
	// Object stores' and clouds' clients: the MinIO client's folder (an
	// alias's secret key), s3cmd's configuration, OpenStack's
	// clouds.yaml (a project's password); the password managers' CLIs'
	// folders (1Password's account key, Bitwarden's session) and
	// Vault's CLI configuration (its token helper).
	{"MC_CONFIG_DIR", credDir}, {"S3CMD_CONFIG", credFile}, {"OS_CLIENT_CONFIG_FILE", credFile},
	{"OP_CONFIG_DIR", credDir}, {"BITWARDENCLI_APPDATA_DIR", credDir}, {"VAULT_CONFIG_PATH", credFile},
}

// toolHomeCredentials are the files with tokens in the folders of build
// tools that variables move out of the home (a CI image's
// GRADLE_USER_HOME=/cache/gradle): Gradle's properties (a repository's
// or a signing key's password), Composer's auth.json (a GitHub token),
// Helm's registry logins. The folders themselves stay visible (their
// caches make builds work without the network); only these files are
// covered, when planex holds the variable.
var toolHomeCredentials = []struct{ name, file string }{
	{"GRADLE_USER_HOME", "gradle.properties"},
	// Its init scripts, which Gradle runs before every build: where an
	// admin or an image puts the company repository with its password.
	{"GRADLE_USER_HOME", "init.gradle"},
	{"GRADLE_USER_HOME", "init.gradle.kts"},
	{"GRADLE_USER_HOME", "init.d"},
	// A Gradle installation's own properties and init scripts (its
	// init.d folder), which can hold repository credentials too.
	{"GRADLE_HOME", "gradle.properties"},
	{"GRADLE_HOME", "init.d"},
	{"COMPOSER_HOME", "auth.json"},
	{"HELM_CONFIG_HOME", "registry/config.json"},
	{"HELM_CONFIG_HOME", "repositories.yaml"},
	// Bundler's application configuration folder: the Ruby images set
	// BUNDLE_APP_CONFIG to their GEM_HOME (/usr/local/bundle), where
	// `bundle config set --local` writes a gem server's credentials
	// beside every installed gem.
	{"BUNDLE_APP_CONFIG", "config"},
	// curl's configuration (user = name:password, an Authorization
	// header) and Pulumi's access tokens.
	{"CURL_HOME", ".curlrc"},
	{"PULUMI_HOME", "credentials.json"},
	// The .NET CLI's home moved out of the user's (a CI image's
	// DOTNET_CLI_HOME): NuGet's user configurations, where `dotnet
	// nuget add source --password` keeps a feed's password in clear on
	// Linux (.nuget/NuGet/NuGet.Config, and the extra ones of
	// .nuget/config). The package cache beside them stays.
	{"DOTNET_CLI_HOME", ".nuget/NuGet"},
	{"DOTNET_CLI_HOME", ".nuget/config"},
	// The JFrog CLI's server tokens, Conan's remotes' logins, Hex's API
	// key and cabal's Hackage password, in the homes these move.
	{"JFROG_CLI_HOME_DIR", "jfrog-cli.conf"},
	{"JFROG_CLI_HOME_DIR", "jfrog-cli.conf.v5"},
	{"JFROG_CLI_HOME_DIR", "jfrog-cli.conf.v6"},
	{"CONAN_HOME", "credentials.json"},
	{"HEX_HOME", "hex.config"},
	// An Oracle wallet in TNS_ADMIN (its auto-login and PKCS#12 stores,
	// the JDBC properties giving the wallet's password; tnsnames.ora
	// stays), Snowflake's connections and configuration, the IBM Cloud
	// CLI's tokens.
	{"TNS_ADMIN", "cwallet.sso"},
	{"TNS_ADMIN", "ewallet.p12"},
	{"TNS_ADMIN", "ewallet.pem"},
	{"TNS_ADMIN", "keystore.jks"},
	{"TNS_ADMIN", "ojdbc.properties"},
	{"SNOWFLAKE_HOME", "connections.toml"},
	{"SNOWFLAKE_HOME", "config.toml"},
	{"IBMCLOUD_HOME", ".bluemix"},
	{"CABAL_DIR", "config"},
	// The option file MySQL's and MariaDB's programs read from
	// MYSQL_HOME.
	{"MYSQL_HOME", "my.cnf"},
}

// toolHomeFiles are the files of toolHomeCredentials, and of
// projectToolCredentials outside the folders of keep, in the folders
// the variables of base planex holds (not in passed) name.
func toolHomeFiles(base, passed, keep []string) []string {
	var out []string
	for i, list := range [][]struct{ name, file string }{toolHomeCredentials, projectToolCredentials} {
		for _, c := range list {
			dir := lookup(base, c.name)
			if !filepath.IsAbs(dir) || lookup(passed, c.name) != "" {
				continue
			}
			p, err := walkedAbs(dir + "/" + c.file)
			if err == nil && !slices.Contains(out, p) && (i == 0 || !keptFolderHolds(keep, p)) {
				out = append(out, p)
			}
		}
	}
	return out
}

// keptFolderHolds reports whether p lies in a folder of keep other
// than / and the system's (a step run in / keeps no file by it).
func keptFolderHolds(keep []string, p string) bool {
	return slices.ContainsFunc(keep, func(k string) bool { return k != "" && coverableDir(k) && within(p, filepath.Clean(k)) })
}

// projectToolCredentials are toolHomeCredentials in folders that are
// often a project's own: dbt's profiles (a warehouse's password), where
// DBT_PROFILES_DIR names a folder outside the step's; one in a folder
// the step keeps (the checkout's profiles.yml, which names its
// passwords by env_var) is the repository's and stays.
var projectToolCredentials = []struct{ name, file string }{
	{"DBT_PROFILES_DIR", "profiles.yml"},
}

// credentialFiles lists the absolute paths the credential variables of
// base name, for each variable passed does not hold (not passed on).
// keep are folders the step must see (its working folder, what it may
// read or write, the repository): a folder that is one of them or holds
// one is not covered, nor is a folder the system needs (/, /etc, /usr,
// …). Paths that do not exist are left to the sandbox, which skips them.
func credentialFiles(base, passed, keep []string) []string {
	var out []string
	for _, v := range credentialVars {
		val := lookup(base, v.name)
		if val == "" || lookup(passed, v.name) != "" {
			continue
		}
		for _, p := range credentialPaths(val, v.kind) {
			abs, err := walkedAbs(p)
			if err != nil || slices.Contains(out, abs) {
				continue
			}
			if v.kind == credDir && !coverableDir(abs) {
				continue
			}
			if holdsAny(abs, keep) || systemProgram(abs) {
				continue
			}
			out = append(out, abs)
		}
	}
	for _, p := range slices.Concat(toolHomeFiles(base, passed, keep), namedSecretPaths(base, passed, keep), ansibleConfigKeys(base, passed),
		toolchainCredentials(base), gradleInstallCredentials(base), gradleOptionHomes(base)) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range append(append(append(gitSSHKeys(base), envConfigFiles(base)...), teamcityFiles(base)...), npmUserConfigs(base, passed)...) {
		if p, err := walkedAbs(p); err == nil && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// jvmOptionVars are the variables that give a JVM (Gradle's among
// them) its options.
var jvmOptionVars = []string{"GRADLE_OPTS", "JAVA_OPTS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"}

// gradleOptionHomes are the credential files base's JVM options name:
// those of the Gradle user homes (-Dgradle.user.home=/cache/gradle, a CI
// image's way of moving it, as GRADLE_USER_HOME does: their
// gradle.properties and init scripts, toolHomeCredentials'), and the TLS
// client keystore (-Djavax.net.ssl.keyStore=).
func gradleOptionHomes(base []string) []string {
	var out []string
	for _, v := range jvmOptionVars {
		for _, w := range gitrepo.ShellWords(lookup(base, v)) {
			if key, ok := strings.CutPrefix(w, "-Djavax.net.ssl.keyStore="); ok && filepath.IsAbs(key) {
				// The JVM's TLS client key: a keystore file.
				if p, err := walkedAbs(key); err == nil {
					out = append(out, p)
				}
				continue
			}
			home, ok := strings.CutPrefix(w, "-Dgradle.user.home=")
			if !ok || !filepath.IsAbs(home) {
				continue
			}
			for _, c := range toolHomeCredentials {
				if c.name != "GRADLE_USER_HOME" {
					continue
				}
				if p, err := walkedAbs(home + "/" + c.file); err == nil {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// toolchainCredentials are the credential files inside toolchain
// folders a step may see: Cargo's registry tokens (cargo login's
// credentials.toml, and the older credentials) in CARGO_HOME, which is
// passed on, or in ~/.cargo, which the documentation has users grant
// with --sandbox-read for a toolchain in the home. A Rust image keeps
// CARGO_HOME outside every home (/usr/local/cargo), where a workflow's
// cargo login left its token readable to every step. No build reads
// these files; publishing does. They are covered whatever the grants.
func toolchainCredentials(base []string) []string {
	dir := lookup(base, "CARGO_HOME")
	if dir == "" {
		if home := lookup(base, "HOME"); home != "" {
			dir = filepath.Join(home, ".cargo")
		}
	}
	if !filepath.IsAbs(dir) {
		return nil
	}
	dir = filepath.Clean(dir)
	return []string{filepath.Join(dir, "credentials.toml"), filepath.Join(dir, "credentials")}
}

// maxPathDirs bounds the PATH folders looked in for a tool.
const maxPathDirs = 64

// gradleInstallCredentials are the gradle.properties and init.d folder
// of each Gradle installation whose launcher is on PATH: an installation
// unpacked outside every home and linked into PATH (/usr/local/bin/gradle
// -> /opt/gradle-8.10/bin/gradle, with no GRADLE_HOME), where an admin
// keeps a repository's or a proxy's password for every build. The
// launcher's links are followed as its script follows them to find its
// installation; a folder that holds no Gradle library (lib/gradle-*.jar)
// is no installation and is left alone.
func gradleInstallCredentials(base []string) []string {
	var out []string
	for i, dir := range filepath.SplitList(lookup(base, "PATH")) {
		if i >= maxPathDirs {
			break
		}
		if !filepath.IsAbs(dir) {
			continue
		}
		real, err := filepath.EvalSymlinks(filepath.Join(dir, "gradle"))
		if err != nil {
			continue
		}
		for _, inst := range append([]string{filepath.Dir(filepath.Dir(real))}, gradleWrapperHomes(filepath.Join(dir, "gradle"))...) {
			if jars, _ := filepath.Glob(filepath.Join(inst, "lib", "gradle-*.jar")); len(jars) == 0 {
				continue
			}
			for _, p := range []string{filepath.Join(inst, "gradle.properties"), filepath.Join(inst, "init.d")} {
				if !slices.Contains(out, p) {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// maxWrapperScript bounds the launcher script read for
// launcherHomes.
const maxWrapperScript = 64 << 10

// wrapperLine matches a wrapper script's line naming a tool's
// installation: <home variable>=<folder> (export before it or not), or
// an exec of <folder>/bin/<prog>; quotes around the path allowed.
func wrapperLine(homeVars []string, prog string) *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:export\s+)?(?:(?:` + strings.Join(homeVars, "|") + `)=["']?(/[^"'\s;]+)|exec\s+["']?(/[^"'\s;]+)/bin/` + regexp.QuoteMeta(prog) + `\b)`)
}

// gradleWrapperHomes are the Gradle installations a launcher script
// names, followed through wrappers (wrappedHomes).
func gradleWrapperHomes(launcher string) []string {
	return wrappedHomes(launcher, "gradle", wrapperLine([]string{"GRADLE_HOME"}, "gradle"))
}

// scriptDirname is dirname of $0, ${0} or ${BASH_SOURCE[0]}, quoted or
// not, as a command substitution holds it.
const scriptDirname = `\s*dirname\s+(?:--\s+)?"?(?:\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\})"?\s*`

// scriptSelf matches what a shell script writes for its own folder:
// $(dirname "$0") (or of ${BASH_SOURCE[0]}, in backquotes too) and
// ${0%/*}; scriptSelfCd the same made absolute, $(cd "<folder>" && pwd),
// once scriptSelf's folder stands in it.
var (
	scriptSelf   = regexp.MustCompile(`\$\(` + scriptDirname + `\)|` + "`" + scriptDirname + "`" + `|\$\{(?:0|BASH_SOURCE(?:\[0\])?)%/\*\}`)
	scriptSelfCd = regexp.MustCompile(`\$\(\s*cd\s+(?:-P\s+)?(?:--\s+)?"?(/[^"\s;)]*)"?\s*(?:&&|;)\s*pwd(?:\s+-P)?\s*\)`)
)

// launcherHomes are the installations a launcher that is a shell
// script (a wrapper an image puts on PATH in place of a link), found at
// invoked, names by an absolute path on a line line matches, the links
// of each resolved. The script's own folder ($0's, by the name it was
// started by or by its links' target) stands where the script writes it
// (scriptSelf): exec "$(dirname "$0")/../gradle-8/bin/gradle".
func launcherHomes(invoked string, line *regexp.Regexp) []string {
	launcher, err := filepath.EvalSymlinks(invoked)
	// A FIFO put there would hold the open: regular files only.
	if fi, serr := os.Stat(launcher); err != nil || serr != nil || !fi.Mode().IsRegular() || fi.Size() > maxWrapperScript {
		return nil
	}
	b, err := readSmallRegular(launcher)
	if err != nil || !bytes.HasPrefix(b, []byte("#!")) {
		return nil
	}
	var out []string
	for _, self := range uniqueStrings(filepath.Dir(invoked), filepath.Dir(launcher)) {
		text := scriptSelf.ReplaceAllLiteralString(string(b), self)
		text = scriptSelfCd.ReplaceAllString(text, "$1")
		for _, l := range withScriptFolders(strings.Split(text, "\n")) {
			m := line.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			walked, err := walkedAbs(m[1] + m[2])
			if err != nil {
				continue
			}
			if real, err := filepath.EvalSymlinks(walked); err == nil && !slices.Contains(out, real) {
				out = append(out, real)
			}
		}
	}
	return out
}

// scriptFolderLine matches a script's line giving a variable an
// absolute folder, quoted or not, and nothing else.
var scriptFolderLine = regexp.MustCompile(`^\s*(?:export\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=["']?(/[^"'\s;$]*)["']?\s*$`)

// scriptVarUse matches a variable's use, $NAME or ${NAME}.
var scriptVarUse = regexp.MustCompile(`\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)`)

// withScriptFolders are lines with each variable a line before gave an
// absolute folder (scriptFolderLine) written out where it is used, $NAME
// or ${NAME}: DIR=…; APP_HOME="$DIR/../gradle-8"; exec "$APP_HOME/bin/gradle".
func withScriptFolders(lines []string) []string {
	vars := map[string]string{}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		l = scriptVarUse.ReplaceAllStringFunc(l, func(use string) string {
			if val, ok := vars[strings.Trim(use, "${}")]; ok {
				return val
			}
			return use
		})
		if m := scriptFolderLine.FindStringSubmatch(l); m != nil && len(vars) < 64 {
			vars[m[1]] = m[2]
		}
		out = append(out, l)
	}
	return out
}

// uniqueStrings are ss without repeats, in their order.
func uniqueStrings(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// walkedAbs is p made absolute as the kernel walks it: a ".." after a
// link leads to the parent of the link's target, which filepath.Abs's
// lexical cleaning does not see (/opt/link/../key is /srv/key when
// /opt/link leads to /srv/x, not /opt/key). The part up to the last ".."
// has its links resolved (when it exists); the rest, and a path without
// "..", is only cleaned, its links kept.
func walkedAbs(p string) (string, error) {
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("locating %s: %w", p, err)
		}
		p = wd + "/" + p
	}
	elems := strings.Split(p, "/")
	last := -1
	for i, e := range elems {
		if e == ".." {
			last = i
		}
	}
	if last < 0 {
		return filepath.Clean(p), nil
	}
	head, err := filepath.EvalSymlinks(strings.Join(elems[:last+1], "/"))
	if err != nil {
		return filepath.Clean(p), nil
	}
	return filepath.Join(append([]string{head}, elems[last+1:]...)...), nil
}

// credentialPaths splits a credential variable's value into the paths
// it names.
func credentialPaths(val string, kind credentialKind) []string {
	switch kind {
	case credList, credCommaList:
		sep := ":"
		if kind == credCommaList {
			sep = ","
		}
		var out []string
		for _, p := range strings.Split(val, sep) {
			if p != "" {
				out = append(out, p)
			}
		}
		return out
	case credDBus:
		var out []string
		for _, addr := range strings.Split(val, ";") {
			rest, ok := strings.CutPrefix(addr, "unix:")
			if !ok {
				continue
			}
			for _, kv := range strings.Split(rest, ",") {
				if p, ok := strings.CutPrefix(kv, "path="); ok && p != "" {
					out = append(out, dbusUnescape(p))
				}
			}
		}
		return out
	case credSSHCommand:
		return sshCommandFiles(val)
	case credKerberos:
		typ, rest, ok := strings.Cut(val, ":")
		if !ok {
			return []string{val}
		}
		switch typ {
		case "FILE", "WRFILE", "DIR":
			// DIR::/run/krb5/tktX names one cache of a collection:
			// the path follows a second colon.
			return []string{strings.TrimPrefix(rest, ":")}
		}
		return nil // KEYRING:, KCM:, MEMORY:, API: name no file
	}
	return []string{val}
}

// dbusUnescape decodes a D-Bus address value: a byte outside the few
// it may hold as they are is written %XX (a space as %20).
func dbusUnescape(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '%' && i+2 < len(v) {
			if n, err := strconv.ParseUint(v[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// coverableDir reports whether the folder d may be covered: not /, not a
// system folder or one above it.
func coverableDir(d string) bool {
	d = filepath.Clean(d)
	if d == "/" {
		return false
	}
	for _, sys := range systemDirs {
		if d == sys || strings.HasPrefix(sys, d+"/") {
			return false
		}
	}
	return true
}

// holdsAny reports whether p is one of dirs or a folder above one.
func holdsAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		d = filepath.Clean(d)
		if d == p || strings.HasPrefix(d, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

// secretPathWords are more words of a variable's name that say the file
// it names holds a key (secretName's aside), and secretPathParts more
// parts of it (between its underscores): a key store's or a PEM file's
// kind (RELEASE_JKS, SIGNING_PEM, VPN_P12) and CREDS (GCP_CREDS).
var (
	secretPathWords = []string{"KEYSTORE", "KEYFILE", "KEYRING", "PRIVKEY", "SERVICE_ACCOUNT"}
	secretPathParts = []string{"CREDS", "PEM", "P12", "PFX", "JKS"}
)

// namedSecretPaths are the files and folders that variables of base,
// which the step does not get (not in passed), name where their name
// says a secret (secretName's words and parts, secretPathWords,
// secretPathParts): a workflow's DEPLOY_KEY_PATH=/opt/ci/deploy_key,
// SIGNING_KEY_FILE, an ANDROID_KEYSTORE_FILE or a CI_SECRETS_DIR, of
// tools no list names (heldValuePaths).
func namedSecretPaths(base, passed, keep []string) []string {
	var out []string
	for _, hp := range heldValuePaths(base, passed, keep) {
		if secretPathName(hp.name) && !isProgramPath(hp.path) && !slices.Contains(out, hp.path) {
			out = append(out, hp.path)
		}
	}
	return out
}

// heldPath is a path a held variable names.
type heldPath struct{ name, path string }

// heldValuePaths are the paths the variables of base the step does not
// get (not in passed) name (valuePaths: as they are, quoted, a file://
// URL, curl's @file, a list), each of something that exists, not in
// the kernel's folders (/proc, /sys, /dev) and not one the step keeps
// or lying in a folder it keeps. PWD and OLDPWD, the shell's working
// folders, are no password's.
func heldValuePaths(base, passed, keep []string) []heldPath {
	return heldPathsOf(base, passed, keep, valuePaths)
}

// heldPathsOf is heldValuePaths with a value read as paths by paths.
func heldPathsOf(base, passed, keep []string, paths func(val string) []string) []heldPath {
	var out []heldPath
	for _, kv := range base {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || lookup(passed, name) != "" || name == "PWD" || name == "OLDPWD" {
			continue
		}
		for _, p := range paths(val) {
			p, err := walkedAbs(p)
			if err != nil || kernelPath(p) || !coverableDir(p) || holdsAny(p, keep) || keptFolderHolds(keep, p) {
				continue
			}
			if _, err := os.Stat(p); err == nil {
				out = append(out, heldPath{name, p})
			}
		}
	}
	return out
}

// kernelPath reports whether p lies in the kernel's folders (/proc,
// /sys, /dev), which no credential is covered in.
func kernelPath(p string) bool {
	return slices.ContainsFunc([]string{"/proc", "/sys", "/dev"}, func(d string) bool { return within(p, d) })
}

// secretPathName reports whether a variable's name says the path it
// holds leads to a secret.
func secretPathName(name string) bool {
	up := strings.ToUpper(name)
	if secretName(name) || slices.ContainsFunc(secretPathWords, func(w string) bool { return strings.Contains(up, w) }) {
		return true
	}
	return slices.ContainsFunc(strings.Split(up, "_"), func(part string) bool { return slices.Contains(secretPathParts, part) })
}

// ansibleKeySettings are the settings of Ansible's configuration that
// name a file holding a secret: the vault's password (or a program
// printing it), the ssh key, the become and connection passwords; as
// settingKey gives them, without their underscores (vault_password_file).
var ansibleKeySettings = []string{"vaultpasswordfile", "privatekeyfile", "becomepasswordfile", "connectionpasswordfile"}

// ansibleConfigKeys are the files Ansible's configurations name in
// ansibleKeySettings: the one ANSIBLE_CONFIG names, while planex holds
// it, the machine's /etc/ansible/ansible.cfg and the user's
// ~/.ansible.cfg (hidden with the home, but the files it names may lie
// elsewhere: /opt/ci/vault_pass). A path starting with ~/ is the home's
// (hidden already); only absolute ones count.
func ansibleConfigKeys(base, passed []string) []string {
	cfgs := []string{"/etc/ansible/ansible.cfg"}
	if c := lookup(base, "ANSIBLE_CONFIG"); lookup(passed, "ANSIBLE_CONFIG") == "" {
		cfgs = append(cfgs, c)
	}
	if home := lookup(base, "HOME"); home != "" {
		cfgs = append(cfgs, filepath.Join(home, ".ansible.cfg"))
	}
	var out []string
	for _, cfg := range cfgs {
		if !filepath.IsAbs(cfg) {
			continue
		}
		for _, line := range readLines(cfg) {
			k, v := settingKey(line)
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			switch {
			case slices.Contains(ansibleKeySettings, k) && filepath.IsAbs(v):
				out = append(out, v)
			case k == "vaultidentitylist":
				out = append(out, vaultIdentityFiles(v)...)
			}
		}
	}
	if v := lookup(base, "ANSIBLE_VAULT_IDENTITY_LIST"); lookup(passed, "ANSIBLE_VAULT_IDENTITY_LIST") == "" {
		out = append(out, vaultIdentityFiles(v)...)
	}
	return out
}

// vaultIdentityFiles are the absolute password files of an Ansible
// vault identity list (label@/path, comma-separated).
func vaultIdentityFiles(list string) []string {
	var out []string
	for _, id := range strings.Split(list, ",") {
		id = strings.TrimSpace(id)
		if _, p, ok := strings.Cut(id, "@"); ok {
			id = p
		}
		if filepath.IsAbs(id) {
			out = append(out, id)
		}
	}
	return out
}
