package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRedTeamKeyFilesNamedByInnocentVariables: a workflow or an image
// keeps a key's path in a variable whose name says nothing of a secret
// (APP_CONFIG=/srv/ci/deploy.pem, a GCLOUD_JSON, an ANDROID_UPLOAD
// keystore), or spells the path of a secret-named one as a URL
// (file://), curl's @file, quoted, with a trailing newline or as a list
// of paths: the variable stays with planex, but a contained agent read
// the file it names by its path. Now a held variable's path is covered
// also where the file starts as a private key, a cloud credential or a
// key store does, and the other spellings are read as the path they
// name; a certificate or a configuration named so stays readable.
func TestRedTeamKeyFilesNamedByInnocentVariables(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-innocentvar-")
	files := map[string]string{
		"ci/deploy.pem":    "-----BEGIN OPENSSH PRIVATE KEY-----\nloot-innocent-openssh",
		"ci/tls.key":       "-----BEGIN EC PRIVATE KEY-----\nloot-innocent-ec",
		"ci/gcp.json":      "{\n  \"type\": \"service_account\",\n  \"private_key_id\": \"loot-innocent-service-account\"\n}",
		"ci/adc.json":      "{\"client_id\": \"x\", \"refresh_token\": \"loot-innocent-refresh\", \"type\": \"authorized_user\"}",
		"ci/release.p12":   "\x30\x82\x0a\x1b\x02\x01\x03\x30loot-innocent-p12",
		"ci/upload.jks":    "\xfe\xed\xfe\xedloot-innocent-jks",
		"ci/signing.gpg":   "-----BEGIN PGP PRIVATE KEY BLOCK-----\nloot-innocent-pgp",
		"ci/url.key":       "loot-secret-named-file-url",
		"ci/curl.key":      "loot-secret-named-curl-at",
		"ci/quoted.key":    "loot-secret-named-quoted",
		"ci/newline.key":   "loot-secret-named-newline",
		"ci/list-a.key":    "loot-secret-named-list-first",
		"ci/list-b.key":    "loot-secret-named-list-second",
		"ci/release.jks":   "loot-jks-named",
		"ci/gcp-creds":     "loot-creds-named",
		"ci/vpn.p12":       "loot-p12-named",
		"ci/signing.pem":   "loot-pem-named",
		"ci/ca.pem":        "-----BEGIN CERTIFICATE-----\nca-readable",
		"ci/app.conf":      "listen = 8080 app-config-readable",
		"ci/settings.json": "{\"type\": \"settings\", \"theme\": \"settings-readable\"}",
		"ci/cacerts":       "\xfe\xed\xfe\xedjava-cacerts-readable",
		"ci/trust.p12":     "\x30\x82\x0a\x1b\x02\x01\x03\x30trust-store-readable",
	}
	plant(t, dir, files)
	ci := dir + "/ci/"
	env := []string{"PATH=/usr/bin:/bin",
		"APP_CONFIG=" + ci + "deploy.pem", "SERVER_TLS=" + ci + "tls.key", "GCLOUD_JSON=" + ci + "gcp.json",
		"ADC_FILE=" + ci + "adc.json", "RELEASE_STORE=" + ci + "release.p12", "ANDROID_UPLOAD=" + ci + "upload.jks",
		"SIGNING_BUNDLE=" + ci + "signing.gpg",
		"DEPLOY_KEY_URL=file://" + ci + "url.key", "UPLOAD_KEY_DATA=@" + ci + "curl.key",
		"DEPLOY_KEY_PATH=\"" + ci + "quoted.key\"", "SIGNING_KEY_FILE=" + ci + "newline.key\n",
		"SSH_KEY_FILES=" + ci + "list-a.key:" + ci + "list-b.key",
		"RELEASE_JKS=" + ci + "release.jks", "GCP_CREDS=" + ci + "gcp-creds", "VPN_P12=" + ci + "vpn.p12",
		"SIGNING_PEM=" + ci + "signing.pem",
		"EXTRA_CA=" + ci + "ca.pem", "APP_SETTINGS=" + ci + "app.conf", "UI_SETTINGS=" + ci + "settings.json",
		"JAVA_CACERTS_FILE=" + ci + "cacerts", "APP_TRUSTSTORE=" + ci + "trust.p12"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestValuePaths: the absolute paths a variable's value names, however
// it spells them.
func TestValuePaths(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		val  string
		want []string
	}{
		{"/srv/k", []string{"/srv/k"}},
		{"/srv/k\n", []string{"/srv/k"}},
		{` "/srv/k" `, []string{"/srv/k"}},
		{"'/srv/k'", []string{"/srv/k"}},
		{"file:///srv/k", []string{"/srv/k"}},
		{"@/srv/k", []string{"/srv/k"}},
		{"/srv/a:/srv/b::rel", []string{"/srv/a", "/srv/b"}},
		{"https://example.com/x", nil},
		{"relative/k", nil},
		{"", nil},
		{strings.Repeat("/a:", 40), slices.Repeat([]string{"/a"}, maxValuePaths)},
	} {
		if got := valuePaths(c.val); !slices.Equal(got, c.want) {
			t.Errorf("valuePaths(%q) = %q, want %q", c.val, got, c.want)
		}
	}
}

// TestLooksLikeSecret: which first bytes of a file are a key's.
func TestLooksLikeSecret(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		head string
		want bool
	}{
		{"-----BEGIN RSA PRIVATE KEY-----\n", true},
		{"Bag Attributes\n    localKeyID: 01\n-----BEGIN ENCRYPTED PRIVATE KEY-----\n", true},
		{"-----BEGIN PGP PRIVATE KEY BLOCK-----\n", true},
		{"PuTTY-User-Key-File-3: ssh-ed25519\n", true},
		{"# created: 2024\nAGE-SECRET-KEY-1QQQ\n", true},
		{"users:\n- name: ci\n  user:\n    client-key-data: LS0t\n", true},
		{"{\n  \"type\": \"service_account\",\n", true},
		{"\ufeff{\"installed\": {\"client_secret\": \"x\"}}", true},
		{"\xfe\xed\xfe\xed\x00\x00\x00\x02", true},
		{"\xce\xce\xce\xce\x00\x00\x00\x02", true},
		{"\x30\x82\x0a\x1b\x02\x01\x03\x30", true},
		{"\x30\x80\x02\x01\x03\x30", true},
		{"\x30\x82\x0a\x1b\x30\x82\x09\x03", false}, // a DER certificate
		{"-----BEGIN CERTIFICATE-----\n", false},
		{"-----BEGIN PUBLIC KEY-----\n", false},
		{"{\"type\": \"settings\"}", false},
		{"private_key_file = /srv/k\n", false},
		{"", false},
	} {
		if got := looksLikeSecret([]byte(c.head)) != sniffNone; got != c.want {
			t.Errorf("looksLikeSecret(%q) = %v, want %v", c.head, got, c.want)
		}
	}
}

// TestRedTeamServiceHomesOfTheLayout: a service account's home at a
// place of the file system's layout's depth was left alone as if it
// were a layout folder holding others' too: GoCD's /var/go (its agent's
// ssh key), BIND's /var/named, a container image's /jenkins; so was the
// home of an account with uid 0 other than root (BSD's toor, an admin's
// second root) and nobody's (65534) where an admin gave it a real
// folder. A contained agent read each. Now /var's folders are hidden
// but those of the layout (/var/lib, /var/cache, /var/spool, …), a top
// folder but /home, /srv, /data, /mnt, /media and the system's, and
// uid 0's and 65534's homes are judged as a service's.
func TestRedTeamServiceHomesOfTheLayout(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-layouthomes-")
	goHome, err := os.MkdirTemp("/var", "planex-go-")
	if err != nil {
		t.Skipf("needs a folder of its own in /var (run as root): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(goHome) })
	topHome, err := os.MkdirTemp("/", "planex-jenkins-")
	if err != nil {
		t.Skipf("needs a folder of its own in / (run as root): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(topHome) })
	for _, d := range []string{goHome, topHome} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"toor/.netrc":         "machine example.com password loot-toor-netrc",
		"nobody/.npmrc":       "//registry.npmjs.org/:_authToken=loot-nobody-npm",
		"people/app/.env":     "app-env-readable",
		"people/README":       "layout-readable",
		"unlisted/keys/a.txt": "unlisted-readable",
	}
	plant(t, dir, files)
	plant(t, goHome, map[string]string{".ssh/id_rsa": "loot-gocd-key"})
	plant(t, topHome, map[string]string{"credentials.xml": "<password>loot-top-jenkins</password>"})
	plant(t, dir, map[string]string{"passwd": strings.Join([]string{
		"root:x:0:0:root:/root:/bin/bash",
		"toor:x:0:0::" + dir + "/toor:/bin/sh",
		"go:x:997:997::" + goHome + ":/bin/bash",
		"jenkins:x:996:996::" + topHome + ":/bin/bash",
		"nobody:x:65534:65534:nobody:" + dir + "/nobody:/usr/sbin/nologin",
		"backup:x:34:34:backup:/var/backups:/usr/sbin/nologin",
		"man:x:6:12:man:/var/cache/man:/usr/sbin/nologin",
	}, "\n")})
	c := Containment{Sandbox: box, passwdFile: filepath.Join(dir, "passwd")}
	env := []string{"PATH=/usr/bin:/bin"}
	checkPlantedReads(t, "", c, env, dir, map[string]string{
		"toor/.netrc": files["toor/.netrc"], "nobody/.npmrc": files["nobody/.npmrc"],
		"people/app/.env": files["people/app/.env"], "people/README": files["people/README"],
	})
	out := runContained(t, c, env, "sh", "-c", "cat "+goHome+"/.ssh/id_rsa "+topHome+"/credentials.xml 2>&1; ls /var/backups /var/cache >/dev/null && echo layout-listed")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read a service's home at the layout's depth:\n%s", out)
	}
	if !strings.Contains(out, "layout-listed") {
		t.Errorf("a layout folder that is a service's home was hidden:\n%s", out)
	}
}

// TestRedTeamPackageManagerVariableFiles: dnf and yum fill a
// repository's $name from a file of that name in /etc/dnf/vars or
// /etc/yum/vars, where an admin keeps the private repository's token or
// password the .repo file's URL or password line uses, readable by
// every uid: the repository files were shown without their passwords,
// while a contained agent read the variables' files. Now a variable
// file is covered where a repository's URL user information, a
// password, user name or proxy setting uses it, where its name says a
// secret or where its value has a token's shape; the release's
// variables stay readable.
func TestRedTeamPackageManagerVariableFiles(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-dnfvars-")
	files := map[string]string{
		"etc/yum.repos.d/corp.repo": "[corp]\nbaseurl=https://ci:$repotoken@rpm.corp/$stream/$contentdir\n" +
			"[cs]\nbaseurl=https://dl.cloudsmith.io/${cstoken}/org/repo/rpm/el/9\n" +
			"[art]\nbaseurl=https://art.corp/rpm\nusername=ci\npassword=${artpass}\nproxy_username=$proxyuser\n",
		"etc/dnf/vars/repotoken":            "loot-dnf-var-userinfo",
		"etc/dnf/vars/artpass":              "loot-dnf-var-password",
		"etc/dnf/vars/proxyuser":            "loot-dnf-var-proxy-user",
		"etc/dnf/vars/cstoken":              "loot-8f3a9c2d7e1b4a6f0c5d",
		"etc/yum/vars/artifactory_password": "loot-yum-var-named",
		"etc/dnf/vars/stream":               "9-stream",
		"etc/dnf/vars/contentdir":           "centos",
	}
	out := catPlanted(t, box, dir, dir+"/etc", files)
	for _, kept := range []string{"9-stream", "centos", "baseurl=https://art.corp/rpm"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the package manager's configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamWgetrcHeaders: wget's machine-wide /etc/wgetrc sends the
// headers its header= lines give with every request, where an admin
// gives a private server's token (header = Authorization: Bearer …,
// header = PRIVATE-TOKEN: …): the file was shown without its password
// lines, the header lines kept, and a contained agent read the tokens.
// Now a header line carrying a credential is left out; other headers
// stay.
func TestRedTeamWgetrcHeaders(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-wgetrcheader-")
	files := map[string]string{
		"etc/wgetrc": "passive_ftp = on\nheader = Authorization: Bearer loot-wget-bearer\n" +
			"HEADER=PRIVATE-TOKEN: loot-wget-gitlab\nheader = X-JFrog-Art-Api: loot-wget-jfrog\n" +
			"header = Cookie: session=loot-wget-cookie\nheader = Accept: application/json\n",
	}
	out := catPlanted(t, box, dir, dir+"/etc", files)
	for _, kept := range []string{"passive_ftp = on", "header = Accept: application/json"} {
		if !strings.Contains(out, kept) {
			t.Errorf("wgetrc lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamUserMavenSettingsKeyElsewhere: the user's own Maven
// settings (~/.m2/settings.xml, hidden with the home) name a server's
// private key by a path outside the home (<privateKey>/opt/ci/deploy_key
// </privateKey>, as the Maven Wagon's scp deploy takes it): a contained
// agent read the key there. It is covered now, as the keys the
// installations' settings name are.
func TestRedTeamUserMavenSettingsKeyElsewhere(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-m2key-")
	files := map[string]string{
		"home/.m2/settings.xml": "<settings><servers><server><id>deploy</id>\n<privateKey>" + dir + "/ci/deploy_key</privateKey>\n" +
			"</server><server><id>site</id><privateKey>${env.CI_DIR}/site_key</privateKey></server></servers></settings>",
		"ci/deploy_key": "loot-maven-user-key",
		"ci2/site_key":  "loot-maven-user-env-key",
		"ci/readme":     "ci-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + dir + "/home", "CI_DIR=" + dir + "/ci2"}
	delete(files, "home/.m2/settings.xml") // hidden with the home
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamRSiteEnvironmentOfAnyR: R reads its site environment file
// from its own installation (R_HOME/etc/Renviron.site), which is
// /etc/R's only for Debian's R: an R installed by rig or r-lib's
// setup-r action lies in /opt/R/<version>, and R_HOME or R_ENVIRON may
// name another. An admin's GITHUB_PAT and proxy password there were
// read by a contained agent, /etc/R's alone being filtered. Now the
// site file of the R on PATH, of R_HOME and R_ENVIRON's are shown
// filtered the same way, R's own settings kept.
func TestRedTeamRSiteEnvironmentOfAnyR(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-rsite-")
	site := "R_LIBS_SITE=/opt/R/site-library\nGITHUB_PAT=loot-r-pat-0123456789abcdef%s\nhttps_proxy=http://ci:loot-r-proxy%s@proxy.corp:3128"
	files := map[string]string{
		"opt/R/4.4.0/bin/R":                   "#!/bin/sh",
		"opt/R/4.4.0/lib/R/etc/Renviron.site": fmt.Sprintf(site, "a", "a"),
		"rhome/etc/Renviron.site":             fmt.Sprintf(site, "b", "b"),
		"renviron/site":                       fmt.Sprintf(site, "c", "c"),
	}
	plant(t, dir, files)
	env := []string{"PATH=" + dir + "/opt/R/4.4.0/bin:/usr/bin:/bin", "R_HOME=" + dir + "/rhome", "R_ENVIRON=" + dir + "/renviron/site"}
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + "; ")
	}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", script.String()+"true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read an R installation's site environment:\n%s", out)
	}
	if n := strings.Count(out, "R_LIBS_SITE=/opt/R/site-library"); n != 3 {
		t.Errorf("R's settings kept in %d site files, want 3:\n%s", n, out)
	}
}

// TestRedTeamSystemGitConfigCredentials: git's system configuration
// (/etc/gitconfig), which every git a step runs reads, is where a
// self-hosted runner's admin gives every job the git host's token: a
// url.<base>.insteadOf whose base carries it, an http.extraHeader, a
// credential helper printing it or storing it in a file elsewhere, or
// a file it includes. A contained agent read each. Now the file is
// shown without them (and included files and the helper's store are
// covered); its other settings stay.
func TestRedTeamSystemGitConfigCredentials(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-gitconfig-")
	files := map[string]string{
		"etc/gitconfig": "[url \"https://x-access-token:loot-git-insteadof@github.com/\"]\n\tinsteadOf = https://github.com/\n" +
			"[http \"https://gitlab.corp/\"]\n\textraHeader = PRIVATE-TOKEN: loot-git-extraheader\n" +
			"[http]\n\textraheader = AUTHORIZATION: basic loot-git-basic\n\tsslVerify = true\n" +
			"[credential]\n\thelper = store --file " + dir + "/ci/git-credentials\n" +
			"[credential \"https://npm.corp\"]\n\thelper = \"!f() { echo username=ci; echo password=loot-git-inline-helper; }; f\"\n" +
			"[include]\n\tpath = " + dir + "/ci/secret.gitconfig\n[includeIf \"gitdir:/srv/\"]\n\tpath = gitconfig.d/srv.inc\n[core]\n\tautocrlf = input\n",
		"etc/gitconfig.d/srv.inc": "[url \"https://loot-git-relative-include@gitlab.corp/\"]\n\tinsteadOf = https://gitlab.corp/",
		"ci/git-credentials":      "https://ci:loot-git-store@github.com",
		"ci/secret.gitconfig":     "[url \"https://loot-git-included@gitlab.corp/\"]\n\tinsteadOf = https://gitlab.corp/",
	}
	out := catPlanted(t, box, dir, dir+"/etc", files)
	for _, kept := range []string{"autocrlf = input", "sslVerify = true", "insteadOf = https://github.com/"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the system git configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamClusterNodeCredentials: a self-hosted runner that is also
// a Kubernetes node keeps the cluster's admin credentials under /etc,
// often made readable by all for its jobs (k3s's write-kubeconfig-mode
// 644, a chmod of kubeadm's admin.conf): k3s's and RKE2's kubeconfig
// with its client key, k3s's registries.yaml with a registry's password
// and its config.yaml with the cluster's join token, kubeadm's
// kubeconfigs and its private keys. A contained agent read each. They
// are covered now; the cluster's CA certificate stays readable.
func TestRedTeamClusterNodeCredentials(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-k8snode-")
	files := map[string]string{
		"etc/rancher/k3s/k3s.yaml":           "users:\n- name: default\n  user:\n    client-key-data: loot-k3s-client-key",
		"etc/rancher/k3s/registries.yaml":    "configs:\n  registry.corp:\n    auth:\n      password: loot-k3s-registry",
		"etc/rancher/k3s/config.yaml":        "token: loot-k3s-join-token",
		"etc/rancher/rke2/rke2.yaml":         "client-key-data: loot-rke2-client-key",
		"etc/kubernetes/admin.conf":          "client-key-data: loot-kubeadm-admin",
		"etc/kubernetes/kubelet.conf":        "client-key-data: loot-kubeadm-kubelet",
		"etc/kubernetes/pki/sa.key":          "loot-kubeadm-sa-key",
		"etc/kubernetes/pki/etcd/peer.key":   "loot-kubeadm-etcd-key",
		"etc/kubernetes/pki/ca.crt":          "cluster-ca-readable",
		"etc/kubernetes/manifests/etcd.yaml": "kind: Pod manifests-readable",
	}
	out := catPlanted(t, box, dir, dir+"/etc", files)
	for _, kept := range []string{"cluster-ca-readable", "manifests-readable"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the node's configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestOverlayAliases: the names an overlay's point gives the folders its
// layers lie in or hold, read from the mount table's text.
func TestOverlayAliases(t *testing.T) {
	t.Parallel()
	info := "45 27 0:39 / /srv/merged rw,relatime - overlay overlay rw,lowerdir=/home/ci/.ssh:/srv/low\\040x,upperdir=/srv/up,workdir=/srv/work\n" +
		"46 27 0:40 / /srv/m2 rw shared:5 - overlay overlay rw,lowerdir+=/data,datadir+=/srv/dd\n" +
		"47 27 0:41 / /srv/plain rw - ext4 /dev/vdb rw,lowerdir=/home/ci\n"
	mounts := parseMountinfo(info)
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/home/ci", []string{"/srv/merged"}},
		{"/srv/low x/sub", []string{"/srv/merged/sub"}},
		{"/data/home/bob", []string{"/srv/m2/home/bob"}},
		{"/srv/dd", []string{"/srv/m2"}},
		{"/srv/work", nil},
		{"/home/other", nil},
	} {
		if got := overlayAliases(mounts, c.path); !slices.Equal(got, c.want) {
			t.Errorf("overlayAliases(%s) = %q, want %q", c.path, got, c.want)
		}
	}
}

// TestRedTeamUserSSHConfigRelativeIncludes: the user's ~/.ssh/config
// includes its other files the usual way, by a path relative to ~/.ssh
// (Include config.d/*) or with a tilde (Include ~/.ssh/work.conf), and
// those name keys outside the home: only absolute Include lines were
// followed, and a contained agent read both keys. Relative and tilde
// includes are read as ssh reads them now.
func TestRedTeamUserSSHConfigRelativeIncludes(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-sshrelinc-")
	files := map[string]string{
		"keys/relative": "loot-ssh-relative-include-key",
		"keys/tilde":    "loot-ssh-tilde-include-key",
		"keys/nested":   "loot-ssh-nested-include-key",
		"keys/readme":   "keys-readable",
	}
	plant(t, dir, files)
	plant(t, dir, map[string]string{
		"home/.ssh/config":           "Include config.d/*\nInclude ~/.ssh/work.conf\n",
		"home/.ssh/config.d/ci.conf": "Host ci\n  IdentityFile " + dir + "/keys/relative\nInclude nested.conf\n",
		"home/.ssh/nested.conf":      "Host n\n  IdentityFile " + dir + "/keys/nested\n",
		"home/.ssh/work.conf":        "Host work\n  IdentityFile " + dir + "/keys/tilde\n",
	})
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + dir + "/home"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamMoreMachineServiceSecrets: more places under /etc where an
// admin gives the machine's services and package managers a secret,
// readable by every uid by their packages' defaults: supervisord's
// program definitions (environment=AGENT_TOKEN="…" of a CI agent it
// runs) and its web password, Telegraf's outputs' tokens, RHEL's
// subscription manager's proxy password, SUSE's zypper repositories'
// URLs and credential files, Alpine's apk repositories' URLs. A
// contained agent read each. They are covered, or shown without the
// secret, now.
func TestRedTeamMoreMachineServiceSecrets(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-moreetc-")
	files := map[string]string{
		"etc/supervisor/conf.d/agent.conf": "[program:agent]\ncommand=/opt/agent/run\nenvironment=AGENT_TOKEN=\"loot-supervisor-env\"",
		"etc/supervisord.conf":             "[inet_http_server]\nport=127.0.0.1:9001\npassword=loot-supervisord-web",
		"etc/telegraf/telegraf.conf":       "[[outputs.influxdb_v2]]\n  token = \"loot-telegraf-token\"",
		"etc/telegraf/telegraf.d/out.conf": "[[outputs.http]]\n  headers = {\"Authorization\" = \"Bearer loot-telegraf-header\"}",
		"etc/rhsm/rhsm.conf":               "[server]\nhostname = subscription.rhsm.redhat.com\nproxy_password = loot-rhsm-proxy",
		"etc/zypp/repos.d/corp.repo":       "[corp]\nbaseurl=https://ci:loot-zypp-url@rpm.corp/sle15\nenabled=1",
		"etc/zypp/credentials.d/corp":      "username=ci\npassword=loot-zypp-credentials",
		"etc/apk/repositories":             "https://dl-cdn.alpinelinux.org/alpine/v3.20/main\nhttps://ci:loot-apk-url@apk.corp/alpine",
	}
	out := catPlanted(t, box, dir, dir+"/etc", files)
	for _, kept := range []string{"hostname = subscription.rhsm.redhat.com", "baseurl=https://rpm.corp/sle15", "https://dl-cdn.alpinelinux.org/alpine/v3.20/main", "https://apk.corp/alpine"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the machine's configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamKeyFileInEtcNamedByVariable: an admin keeps a service's
// TLS key or a cloud credential under /etc (/etc/myapp/tls.key, mode
// 644) and a workflow names it in a variable (TLS_KEY_FILE,
// APP_CREDENTIALS_JSON): the system's folders were left out of the
// variables' paths, for their names alone, and a contained agent read
// both. A file that starts as a key does is covered now wherever it
// lies but /proc, /sys and /dev; a configuration under /etc named by a
// secret-sounding variable stays readable.
func TestRedTeamKeyFileInEtcNamedByVariable(t *testing.T) {
	t.Parallel()
	box, _ := sandboxAndHostFolder(t, "planex-etckeyvar-")
	etc, err := os.MkdirTemp("/etc", "planex-keyvar-")
	if err != nil {
		t.Skipf("needs a folder of its own in /etc (run as root): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(etc) })
	if err := os.Chmod(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"tls.key":          "-----BEGIN PRIVATE KEY-----\nloot-etc-tls-key",
		"sa.json":          "{\"type\": \"service_account\", \"private_key_id\": \"loot-etc-service-account\"}",
		"auth-server.conf": "listen 8443 auth-config-readable",
	}
	plant(t, etc, files)
	env := []string{"PATH=/usr/bin:/bin", "TLS_KEY_FILE=" + etc + "/tls.key", "APP_CREDENTIALS_JSON=" + etc + "/sa.json",
		"AUTH_SERVER_CONFIG=" + etc + "/auth-server.conf"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, etc, files)
}

// TestRedTeamRSiteProfile: R runs its site profile (Rprofile.site, R
// code) at every session's start, where an admin sets the GITHUB_PAT
// packages are installed with (Sys.setenv(GITHUB_PAT = "…")) beside the
// CRAN mirror: /etc/R's and each installation's were read whole by a
// contained agent. They are shown filtered as the site environment
// files are now, the mirror kept.
func TestRedTeamRSiteProfile(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-rprofile-")
	profile := "options(repos = c(CRAN = \"https://cloud.r-project.org\"))\nSys.setenv(GITHUB_PAT = \"loot-r-profile-0123456789abcdef%s\")"
	files := map[string]string{
		"etc/R/Rprofile.site":                 fmt.Sprintf(profile, "a"),
		"opt/R/4.4.0/bin/R":                   "#!/bin/sh",
		"opt/R/4.4.0/lib/R/etc/Rprofile.site": fmt.Sprintf(profile, "b"),
		"rprofile/site.R":                     fmt.Sprintf(profile, "c"),
	}
	plant(t, dir, files)
	env := []string{"PATH=" + dir + "/opt/R/4.4.0/bin:/usr/bin:/bin", "R_PROFILE=" + dir + "/rprofile/site.R"}
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + "; ")
	}
	out := runContained(t, Containment{Sandbox: box, etcDir: dir + "/etc"}, env, "sh", "-c", script.String()+"true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read an R site profile's token:\n%s", out)
	}
	if n := strings.Count(out, "https://cloud.r-project.org"); n != 3 {
		t.Errorf("the CRAN mirror kept in %d site profiles, want 3:\n%s", n, out)
	}
}

// TestRedTeamContainerdRegistryAuth: containerd's configuration
// (/etc/containerd/config.toml, mode 644 by its packages) is where a
// Kubernetes node's or a runner host's admin gives the CRI plugin a
// private registry's credentials (registry.configs.<host>.auth's
// password, auth or identitytoken) and its hosts.toml files a header
// with a token: a contained agent read them. The folder is covered now
// (only the daemon reads it).
func TestRedTeamContainerdRegistryAuth(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-containerd-")
	files := map[string]string{
		"etc/containerd/config.toml":                      "[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.\"registry.corp\".auth]\n  username = \"ci\"\n  password = \"loot-containerd-password\"\n  auth = \"loot-containerd-auth\"",
		"etc/containerd/certs.d/registry.corp/hosts.toml": "[host.\"https://registry.corp\".header]\n  authorization = \"Bearer loot-containerd-header\"",
	}
	catPlanted(t, box, dir, dir+"/etc", files)
}

// TestAskpassSystemProgramStays: a workflow sets GIT_ASKPASS=/bin/true
// (so a git prompt fails at once) or SSH_ASKPASS to a system program:
// the variable stays with planex, and the file it names was covered as
// a credential, so the step's own /bin/true could not run (Permission
// denied). A compiled program in the system's folders is left alone now;
// a script elsewhere printing a token stays covered.
func TestAskpassSystemProgramStays(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-askpassprog-")
	truePath, err := filepath.EvalSymlinks("/bin/true")
	if err != nil {
		t.Skipf("no /bin/true here: %v", err)
	}
	plant(t, dir, map[string]string{"ci/askpass.sh": "#!/bin/sh\necho loot-askpass-token"})
	env := []string{"PATH=/usr/bin:/bin", "GIT_ASKPASS=" + truePath, "SSH_ASKPASS=" + dir + "/ci/askpass.sh"}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", truePath+" && echo true-ran; cat "+dir+"/ci/askpass.sh 2>&1; true")
	if !strings.Contains(out, "true-ran") {
		t.Errorf("the step could not run %s:\n%s", truePath, out)
	}
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read the askpass script:\n%s", out)
	}
}

// TestRedTeamMailRelayPasswordFiles: Postfix's and Exim's relay
// passwords (/etc/postfix/sasl_passwd and its .db, /etc/exim4/
// passwd.client), which their guides say to make private and admins
// leave readable by all: a contained agent read them. They are covered
// now, as ssmtp's and msmtp's passwords are left out.
func TestRedTeamMailRelayPasswordFiles(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-mailrelay-")
	files := map[string]string{
		"etc/postfix/sasl_passwd":    "[smtp.corp]:587 ci@corp:loot-postfix-relay",
		"etc/postfix/sasl_passwd.db": "loot-postfix-relay-db",
		"etc/exim4/passwd.client":    "smtp.corp:ci:loot-exim-relay",
		"etc/postfix/main.cf":        "relayhost = [smtp.corp]:587 main-cf-readable",
	}
	out := catPlanted(t, box, dir, dir+"/etc", files)
	if !strings.Contains(out, "main-cf-readable") {
		t.Errorf("Postfix's main.cf was covered:\n%s", out)
	}
}
