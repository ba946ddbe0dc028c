package agent

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRedTeamKeysPastTheSniffAndInFolders: a held variable's file was
// judged by its first 4 KiB, and a folder one names not at all. A
// combined PEM, as HAProxy and other proxies take it (the certificate
// chain, several KiB, then the key), and the key files of a folder a
// variable whose name says nothing of a secret names (TLS_DIR=/srv/tls
// holding server.key, live/corp/privkey.pem below it, a link to a key
// there) were read by a contained agent. Now the first 64 KiB are
// judged, and the files of a folder so named and of its folders; its
// certificates and configurations stay readable.
func TestRedTeamKeysPastTheSniffAndInFolders(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-keyfolders-")
	chain := strings.Repeat("-----BEGIN CERTIFICATE-----\n"+strings.Repeat("MIIFazCCA1OgAwIBAgIRAIIQz7DSQONZRGPgu2OCiwAwDQYJKoZIhvcNAQELBQAw\n", 28)+"-----END CERTIFICATE-----\n", 3)
	files := map[string]string{
		"haproxy/site.pem":          chain + "-----BEGIN PRIVATE KEY-----\nloot-combined-pem",
		"tls/server.key":            "-----BEGIN EC PRIVATE KEY-----\nloot-folder-key",
		"tls/client.p12":            "\x30\x82\x0a\x1b\x02\x01\x03\x30loot-folder-p12",
		"tls/server.crt":            "-----BEGIN CERTIFICATE-----\nfolder-cert-readable",
		"tls/live/corp/privkey.pem": "-----BEGIN PRIVATE KEY-----\nloot-nested-key",
		"tls/bundle.pem":            chain + "-----BEGIN RSA PRIVATE KEY-----\nloot-folder-combined-pem",
		"tls/app.conf":              "listen 443 folder-conf-readable",
		"keys/deploy":               "-----BEGIN OPENSSH PRIVATE KEY-----\nloot-linked-key",
		"tls2/readme.txt":           "folder-readme-readable",
		"tls2/nested/ca.pem":        "-----BEGIN CERTIFICATE-----\nnested-cert-readable",
	}
	plant(t, dir, files)
	if err := os.Symlink(dir+"/keys/deploy", dir+"/tls2/deploy"); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "PROXY_BUNDLE=" + dir + "/haproxy/site.pem", "TLS_DIR=" + dir + "/tls",
		"APP_CONF_DIR=" + dir + "/tls2"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", "cat "+dir+"/tls2/deploy 2>&1; true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read a key through the folder's link: %s", out)
	}
}

// TestRedTeamCredentialFilesByTheirText: a held variable whose name says
// nothing of a secret names another client's credential file, or a key
// written as base64 (a workflow's secret stored so and written out as
// it is): a .netrc, git's credential store, a JSON Web Token (an OIDC
// token file), a cookie jar, a registry client's auth.json, AWS's
// shared credentials, a .pgpass. A contained agent read each. Now
// such files are judged by their text as keys are.
func TestRedTeamCredentialFilesByTheirText(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-credtext-")
	files := map[string]string{
		"a/netrc":       "# the build's hosts\nmachine git.corp login ci password loot-netrc",
		"a/gitcreds":    "https://ci:loot-gitcreds@git.corp",
		"a/jwt":         "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaSJ9.loot-jwt",
		"a/cookies":     "# Netscape HTTP Cookie File\n.corp\tTRUE\t/\tTRUE\t0\tsession\tloot-cookie",
		"a/key.b64":     "LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0Kloot-b64",
		"a/auth.json":   "{\"auths\": {\"registry.corp\": {\"auth\": \"loot-registry\"}}}",
		"a/aws":         "[default]\naws_access_key_id = AKIA\naws_secret_access_key = loot-aws",
		"a/pgpass":      "db.corp:5432:*:ci:loot-pgpass",
		"a/notes.txt":   "by default the account settings are kept notes-readable",
		"a/event.json":  "{\"comment\": {\"body\": \"see https://example.com/x\"}, \"n\": \"event-readable\"}",
		"a/hosts":       "127.0.0.1 localhost hosts-readable",
		"a/version.txt": "3.12.4 version-readable",
	}
	plant(t, dir, files)
	a := dir + "/a/"
	env := []string{"PATH=/usr/bin:/bin", "GIT_HOSTS=" + a + "netrc", "APP_GITCONF=" + a + "gitcreds",
		"OIDC_FILE=" + a + "jwt", "SESSION_JAR=" + a + "cookies", "APP_DATA=" + a + "key.b64",
		"REGISTRY_CONF=" + a + "auth.json", "CLOUD_CONF=" + a + "aws", "DB_CONF=" + a + "pgpass",
		"APP_NOTES=" + a + "notes.txt", "APP_EVENT=" + a + "event.json", "APP_HOSTS=" + a + "hosts",
		"APP_VERSION=" + a + "version.txt"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestLooksLikeCredentialText: which first bytes are another client's
// credential file, or a key's base64.
func TestLooksLikeCredentialText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		head string
		want bool
	}{
		{"machine git.corp login ci password x\n", true},
		{"machine a\n  login ci\n  password x\n", true},
		{"default login anonymous password me@corp\n", true},
		{"by default your account settings\n", false},
		{"https://ci:tok@git.corp\n", true},
		{"url = https://git.corp/x\n", false},
		{"https://git.corp/x\n", false},
		{"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaSJ9.c2ln\n", true},
		{"eyJhbGciOiJSUzI1NiJ9 and more\n", false},
		{"# Netscape HTTP Cookie File\n", true},
		{"{\"auths\": {}}", true},
		{"{\"credsStore\": \"desktop\"}", false},
		{"[default]\naws_secret_access_key = x\n", true},
		{"[default]\nregion = eu-west-1\n", false},
		{"db:5432:app:ci:pw\n", true},
		{"root:x:0:0:root:/root:/bin/bash\n", false},
		{"LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlC\n", true},
		{"ewogICJ0eXBlIjogInNlcnZpY2VfYWNjb3VudCIsCg==\n", true},
		{"aGVsbG8gd29ybGQsIHRoaXMgaXMgbm8ga2V5IGF0IGFsbA==\n", false},
		{"3f786850e387550fdab836ed7e6dc881de23001b\n", false},
	} {
		if got := looksLikeSecret([]byte(c.head)) != sniffNone; got != c.want {
			t.Errorf("looksLikeSecret(%q) = %v, want %v", c.head, got, c.want)
		}
	}
}

// TestRedTeamMonitoringAgentSecrets: the monitoring and log shipping
// agents of a runner's host keep the key they send with under /etc:
// Datadog's api_key (and its checks' database passwords), New Relic's
// license key, the outputs' tokens and passwords of Fluent Bit,
// td-agent, Vector, the OpenTelemetry Collector, Grafana's Alloy and
// agent, Promtail, Filebeat and Metricbeat, Zabbix's pre-shared key,
// and the credentials MAAS leaves cloud-init in /etc/cloud, many of
// them readable by all. A contained agent read each. They are covered
// now: only the agents read them.
func TestRedTeamMonitoringAgentSecrets(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-monitoring-")
	files := map[string]string{
		"etc/datadog-agent/datadog.yaml":                "api_key: loot-datadog-api-key",
		"etc/datadog-agent/conf.d/postgres.d/conf.yaml": "instances:\n  - password: loot-datadog-check",
		"etc/cloud/cloud.cfg.d/90_dpkg_maas.cfg":        "datasource:\n  MAAS: {token_secret: loot-maas-token}",
		"etc/newrelic-infra.yml":                        "license_key: loot-newrelic",
		"etc/newrelic-infra/logging.d/app.yml":          "http_passwd: loot-newrelic-logging",
		"etc/fluent-bit/fluent-bit.conf":                "[OUTPUT]\n    Splunk_Token loot-fluent-bit",
		"etc/td-agent-bit/td-agent-bit.conf":            "[OUTPUT]\n    HTTP_Passwd loot-td-agent-bit",
		"etc/td-agent/td-agent.conf":                    "<match **>\n  password loot-td-agent\n</match>",
		"etc/fluent/fluentd.conf":                       "<match **>\n  password loot-fluentd\n</match>",
		"etc/vector/vector.yaml":                        "sinks:\n  dd:\n    default_api_key: loot-vector",
		"etc/otelcol/config.yaml":                       "exporters:\n  otlp:\n    headers: {api-key: loot-otelcol}",
		"etc/otelcol-contrib/config.yaml":               "exporters:\n  otlp:\n    headers: {api-key: loot-otelcol-contrib}",
		"etc/alloy/config.alloy":                        "basic_auth {\n  password = \"loot-alloy\"\n}",
		"etc/grafana-agent.yaml":                        "remote_write:\n  - basic_auth: {password: loot-grafana-agent}",
		"etc/promtail/config.yml":                       "clients:\n  - basic_auth: {password: loot-promtail}",
		"etc/filebeat/filebeat.yml":                     "cloud.auth: elastic:loot-filebeat",
		"etc/metricbeat/metricbeat.yml":                 "cloud.auth: elastic:loot-metricbeat",
		"etc/zabbix/zabbix_agentd.psk":                  "loot-zabbix-psk",
	}
	catPlanted(t, box, dir, dir+"/etc", files)
}

// TestRedTeamDirectoryAccountsHomesHidden: on a machine whose people are
// a directory's accounts (LDAP through nslcd, SSSD, winbind), the
// password file lists none of them, and a static planex read nothing
// else: the homes of those living outside /home (/u/alice,
// /export/home/bob) were read by a contained agent. Now planex asks
// NSS through getent: for every account, where the directory lets it
// list them (bob), and for the uids of the machine's processes the
// password file does not know, where it does not (SSSD's default:
// alice, logged in).
func TestRedTeamDirectoryAccountsHomesHidden(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-nsshomes-")
	files := map[string]string{
		"u/alice/.aws/credentials":    "[default]\naws_secret_access_key = loot-ldap-alice",
		"export/home/bob/.git-tokens": "loot-ldap-bob",
		"opt/tools/readme":            "tools-readable",
	}
	plant(t, dir, files)
	alice, bob := filepath.Join(dir, "u", "alice"), filepath.Join(dir, "export", "home", "bob")
	plant(t, dir, map[string]string{
		"passwd":            "root:x:0:0:root:/root:/bin/bash\nrunner:x:1001:1001::/home/runner:/bin/bash",
		"proc/4242/status":  "Name:\tbash\nUid:\t5001\t5001\t5001\t5001",
		"proc/4243/status":  "Name:\tsshd\nUid:\t0\t0\t0\t0",
		"proc/self/status":  "Uid:\t1001\t1001\t1001\t1001",
		"proc/4244/cmdline": "",
	})
	getent := filepath.Join(dir, "getent")
	script := "#!/bin/sh\n[ \"$1\" = passwd ] || exit 1\nshift\n" +
		"if [ $# -eq 0 ]; then echo 'root:x:0:0:root:/root:/bin/bash'; echo 'bob:*:5002:5002::" + bob + ":/bin/bash'; exit 0; fi\n" +
		"for k; do [ \"$k\" = 5001 ] && echo 'alice:*:5001:5001::" + alice + ":/bin/bash'; done\nexit 0\n"
	if err := os.WriteFile(getent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := Containment{Sandbox: box, passwdFile: filepath.Join(dir, "passwd"), nss: nssSource{getent: getent, proc: filepath.Join(dir, "proc")}}
	checkPlantedReads(t, "", c, []string{"PATH=/usr/bin:/bin"}, dir, files)
}

// TestNSSAccountsOfTheMachine: the machine's getent answers for root by
// uid, a process's real uid is read from its status, and the machine's
// processes' uids are found.
func TestNSSAccountsOfTheMachine(t *testing.T) {
	t.Parallel()
	i := slices.IndexFunc(getentPrograms, systemProgram)
	if i < 0 {
		t.Skip("no getent on this machine")
	}
	if got := string(getentPasswd(context.Background(), getentPrograms[i], []string{"0"})); !strings.HasPrefix(got, "root:") {
		t.Errorf("getent passwd 0 = %q, want root's line", got)
	}
	proc := t.TempDir()
	plant(t, proc, map[string]string{"1/status": "Uid:\t0\t0\t0\t0", "2/status": "Uid:\t1001\t1001\t1001\t1001",
		"3/status": "Uid:\t1001\t0\t0\t0", "4/status": "Uid:\t65534\t65534\t65534\t65534", "self/status": "Uid:\t7\t7\t7\t7"})
	if got := processUIDs(proc); !slices.Equal(got, []string{"1001"}) {
		t.Errorf("processUIDs = %q, want [1001]", got)
	}
	for _, c := range []struct {
		status string
		want   string
		ok     bool
	}{
		{"Name:\tx\nUid:\t1001\t0\t0\t0\n", "1001", true},
		{"Uid:\t\n", "", false},
		{"Uid:\tx\n", "", false},
		{"Name:\tx\n", "", false},
	} {
		if got, ok := statusUID([]byte(c.status)); got != c.want || ok != c.ok {
			t.Errorf("statusUID(%q) = %q, %v, want %q, %v", c.status, got, ok, c.want, c.ok)
		}
	}
}

// TestRedTeamSystemGitConfigContinuedLines: git's system configuration
// is shown without its extra headers and credential sections, judged
// line by line; but git continues a value on the next line after a
// backslash, and reads a setting written after a section header on
// its line. An extra header whose token was on a continued line, or
// one after [http] on its line, was shown to a contained agent. Now
// the lines are judged as git reads them; a backslash in a comment
// continues nothing, so a [credential] section below one is still
// left out.
func TestRedTeamSystemGitConfigContinuedLines(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-gitcontinued-")
	files := map[string]string{
		"etc/gitconfig": "[http]\n\textraHeader = AUTHORIZATION: \\\nbasic loot-git-continued\n" +
			"[http \"https://gitlab.corp/\"]\n\textraHeader = \\\nPRIVATE-TOKEN: loot-git-continued-header\n" +
			"[http]\n\textraHeader = \"AUTHORIZATION: basic \\\nloot-git-continued-quoted\"\n" +
			"[http] extraHeader = AUTHORIZATION: basic loot-git-same-line\n" +
			"[url \"https://ci:loot-git-same-line-url@github.com/\"] insteadOf = https://github.com/\n" +
			"# a comment ending with a backslash \\\n[credential]\n\thelper = \"!f() { echo password=loot-git-after-comment; }; f\"\n" +
			"[core]\n\tautocrlf = input\n",
	}
	out := catPlanted(t, box, dir, dir+"/etc", files)
	for _, kept := range []string{"autocrlf = input", "insteadOf = https://github.com/"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the system git configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamRunnerFilesWithoutTheRunnersVariables: a workflow runs
// planex through sudo (whose env_reset drops GITHUB_WORKSPACE and
// RUNNER_TEMP), or moves RUNNER_TEMP with env:, on a self-hosted
// runner whose installation lies above the checkout. The runner was
// found from the workspace variable alone, and its temporary folder by
// RUNNER_TEMP: a contained agent read the runner's credentials, its
// logs, actions/checkout's token file and an earlier step's script in
// _work/_temp, and another repository's checkout. Now the runner is
// looked for above the step's folders too, and its work folder's _temp
// is hidden wherever RUNNER_TEMP points.
func TestRedTeamRunnerFilesWithoutTheRunnersVariables(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-runnervars-")
	files := map[string]string{
		"actions-runner/.runner":                                    "{\"agentName\": \"loot-runner-registration\", \"workFolder\": \"_work\"}",
		"actions-runner/.credentials":                               "{\"scheme\": \"OAuth\", \"data\": {\"clientId\": \"loot-runner-credentials\"}}",
		"actions-runner/_diag/Worker_1.log":                         "loot-runner-diag",
		"actions-runner/_work/_temp/git-credentials-1.config":       "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic loot-checkout-token",
		"actions-runner/_work/_temp/5b1e.sh":                        "curl -H 'Authorization: Bearer loot-step-script' https://corp",
		"actions-runner/_work/other/other/.env":                     "TOKEN=loot-other-checkout",
		"actions-runner/_work/app/app/README":                       "checkout-readable",
		"actions-runner/_work/_actions/actions/checkout/action.yml": "name: checkout actions-readable",
	}
	plant(t, dir, files)
	ws := filepath.Join(dir, "actions-runner", "_work", "app", "app")
	for _, env := range [][]string{
		{"PATH=/usr/bin:/bin", "HOME=/root", "SUDO_USER=runner"},
		{"PATH=/usr/bin:/bin", "GITHUB_WORKSPACE=" + ws, "RUNNER_TEMP=" + dir + "/elsewhere"},
	} {
		var script strings.Builder
		for name := range files {
			script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
		}
		cmd := exec.Command("sh", "-c", script.String()+"true")
		cmd.Dir = ws
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cleanup, err := Containment{Sandbox: box, RepoDirs: []string{ws}}.PrepareContext(context.Background(), cmd, env, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = cmd.Run()
		cleanup()
		if err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		for _, content := range files {
			if want := !strings.Contains(content, "loot-"); strings.Contains(out.String(), content) != want {
				t.Errorf("%s: %.40s: want readable=%v, the agent read:\n%s", env[1], content, want, out.String())
			}
		}
	}
}

// TestNSSLocalOnly: getent is asked only where NSS reads a directory's
// accounts.
func TestNSSLocalOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		conf string
		want bool
	}{
		{"passwd:         files systemd\ngroup: files\n", true},
		{"passwd: files\n", true},
		{"passwd: files [SUCCESS=merge] systemd # homed\n", true},
		{"passwd:         files sss\n", false},
		{"passwd: compat\n", false},
		{"passwd: files ldap\n", false},
		{"passwd: files winbind\n", false},
		{"group: files\n", false},
		{"", false},
	} {
		p := filepath.Join(dir, "nsswitch.conf")
		if err := os.WriteFile(p, []byte(c.conf), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := nssLocalOnly(p); got != c.want {
			t.Errorf("nssLocalOnly(%q) = %v, want %v", c.conf, got, c.want)
		}
	}
	if nssLocalOnly(filepath.Join(dir, "missing")) {
		t.Error("a missing configuration read as local only")
	}
}

// TestRedTeamAnsibleInventories: a runner host that deploys with
// Ansible keeps its inventory where Ansible looks by default,
// /etc/ansible/hosts (mode 644 as the package makes it), with the
// hosts' connection and become passwords (ansible_password,
// ansible_become_password) beside it in group_vars and host_vars, or
// names one elsewhere with ANSIBLE_INVENTORY (a comma-separated list).
// A contained agent read each. They are covered now; ansible.cfg, shown
// as before, and an inventory of the checkout stay.
func TestRedTeamAnsibleInventories(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-ansible-")
	files := map[string]string{
		"etc/ansible/hosts":                "[web]\nweb1 ansible_host=10.0.0.5 ansible_password=loot-ansible-hosts",
		"etc/ansible/group_vars/all.yml":   "ansible_become_password: loot-ansible-group-vars",
		"etc/ansible/host_vars/web1.yml":   "ansible_ssh_pass: loot-ansible-host-vars",
		"etc/ansible/inventory/prod.ini":   "[db]\ndb1 ansible_password=loot-ansible-inventory-dir",
		"etc/ansible/ansible.cfg":          "[defaults]\nforks = 5 ansible-cfg-readable",
		"opt/deploy/inventory.yml":         "all:\n  vars:\n    ansible_password: loot-ansible-named-inventory",
		"opt/deploy/inventories/stage.ini": "[app]\napp1 ansible_become_pass=loot-ansible-named-folder",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "ANSIBLE_INVENTORY=" + dir + "/opt/deploy/inventory.yml," + dir + "/opt/deploy/inventories,localhost,"}
	checkPlantedReads(t, "", Containment{Sandbox: box, etcDir: dir + "/etc"}, env, dir, files)
}

// TestRedTeamKeysNamedInsideCommandLines: a held variable holds a
// command line or options naming a key among other words: rsync's
// RSYNC_RSH="ssh -i /srv/ci/deploy_key", a deploy script's
// DEPLOY_CMD="scp -i '/srv/ci/key2' …", APP_OPTS="--tls-key=/srv/ci/…".
// Only a value that is a path (or a list of them) was read as one, and
// a contained agent read each key. Now every word of a value, and what
// follows a word's =, is read as a path too where it is one, and
// judged by its content: the known_hosts and the configuration named
// beside the keys stay readable.
func TestRedTeamKeysNamedInsideCommandLines(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-cmdlinekeys-")
	files := map[string]string{
		"ci/deploy_key":  "-----BEGIN OPENSSH PRIVATE KEY-----\nloot-rsync-rsh-key",
		"ci/key2":        "-----BEGIN RSA PRIVATE KEY-----\nloot-quoted-word-key",
		"ci/tls.key":     "-----BEGIN EC PRIVATE KEY-----\nloot-option-key",
		"ci/known_hosts": "github.com ssh-ed25519 AAAA known-hosts-readable",
		"ci/app.conf":    "listen 8443 app-conf-readable",
	}
	plant(t, dir, files)
	ci := dir + "/ci/"
	env := []string{"PATH=/usr/bin:/bin",
		"RSYNC_RSH=ssh -i " + ci + "deploy_key -o UserKnownHostsFile=" + ci + "known_hosts",
		"DEPLOY_CMD=scp -i '" + ci + "key2' build.tgz deploy@corp:/srv/app",
		"APP_OPTS=--tls-key=" + ci + "tls.key --config=" + ci + "app.conf"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestWordPaths: the absolute paths among a value's words.
func TestWordPaths(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		val  string
		want []string
	}{
		{"ssh -i /srv/k -o UserKnownHostsFile=/srv/kh", []string{"/srv/k", "/srv/kh"}},
		{"scp -i '/srv/k' a b:/x", []string{"/srv/k"}},
		{"--key=\"/srv/k\" --n=3", []string{"/srv/k"}},
		{"/srv/k", nil},
		{"a b c", nil},
		{"", nil},
		{strings.Repeat("-i /a ", 40), slices.Repeat([]string{"/a"}, maxValuePaths)},
	} {
		if got := wordPaths(c.val); !slices.Equal(got, c.want) {
			t.Errorf("wordPaths(%q) = %q, want %q", c.val, got, c.want)
		}
	}
}

// TestRedTeamUserGitConfigIncludesElsewhere: the user's ~/.gitconfig is
// hidden with the home, but the files it names outside the home were
// not: a configuration it includes at /opt/ci (an insteadOf URL with a
// token), one an includeIf includes (an extra header), one those
// include in turn, and the store its credential helper keeps. A
// contained agent read each by its path. They are covered now.
func TestRedTeamUserGitConfigIncludesElsewhere(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-usergitinclude-")
	ci := dir + "/opt/ci/"
	files := map[string]string{
		"home/ci/.gitconfig": "[user]\n\tname = ci\n[include]\n\tpath = " + ci + "secrets.gitconfig\n[includeIf \"gitdir:/\"]\n\tpath = " + ci + "if.gitconfig\n" +
			"[credential]\n\thelper = store --file " + ci + "git-credentials\n",
		"opt/ci/secrets.gitconfig": "[url \"https://x:loot-user-include@github.com/\"]\n\tinsteadOf = https://github.com/\n[include]\n\tpath = nested.gitconfig",
		"opt/ci/nested.gitconfig":  "[url \"https://x:loot-user-nested-include@gitlab.corp/\"]\n\tinsteadOf = https://gitlab.corp/",
		"opt/ci/if.gitconfig":      "[http]\n\textraHeader = AUTHORIZATION: basic loot-user-includeif",
		"opt/ci/git-credentials":   "https://ci:loot-user-store@github.com",
		"opt/ci/README":            "ci-readme-readable",
	}
	plant(t, dir, files)
	// The home is hidden (its .gitconfig is not read, loot or not).
	delete(files, "home/ci/.gitconfig")
	checkPlantedReads(t, "", Containment{Sandbox: box}, []string{"PATH=/usr/bin:/bin", "HOME=" + dir + "/home/ci"}, dir, files)
}

// TestToolCacheHolds: the runner's tool cache, where setup actions
// install toolchains, is not read for keys.
func TestToolCacheHolds(t *testing.T) {
	t.Parallel()
	base := []string{"RUNNER_TOOL_CACHE=/opt/hostedtoolcache", "AGENT_TOOLSDIRECTORY=relative"}
	for _, c := range []struct {
		dir  string
		want bool
	}{
		{"/opt/hostedtoolcache/go/1.22.5/x64", true},
		{"/opt/hostedtoolcache", true},
		{"/opt/hostedtoolcache-keys", false},
		{"/srv/tls", false},
		{"relative/x", false},
	} {
		if got := toolCacheHolds(base, c.dir); got != c.want {
			t.Errorf("toolCacheHolds(%q) = %v, want %v", c.dir, got, c.want)
		}
	}
}
