package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestRedTeamIniPasswordForms: the machine-wide files whose password
// lines planex leaves out are read by parsers that take more than
// `key = value` on one line: Python's configparser (yum, pip) and
// Subversion take `key: value` and continue a value on the indented
// lines after it, ODBC's drivers take the password as PWD, and MySQL 8
// clients take password1 to password3 (multi-factor), as mount.cifs
// takes password2. A contained agent read each of these passwords; the
// other settings of the files stay.
func TestRedTeamIniPasswordForms(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-iniforms-")
	etc := filepath.Join(dir, "etc")
	files := map[string]string{
		"etc/yum.conf":             "[main]\nproxy=http://proxy.corp:3128\nproxy_password =\n    loot-yum-continued\n\n    loot-yum-after-blank\ngpgcheck=1",
		"etc/dnf/dnf.conf":         "[main]\nproxy_password: loot-dnf-colon\nproxy_username: ci",
		"etc/subversion/servers":   "[global]\nhttp-proxy-password : loot-svn-colon\nssl-client-cert-password =\n  loot-svn-continued\nhttp-proxy-host = proxy.corp",
		"etc/odbc.ini":             "[corp]\nDriver=MySQL\nPWD=loot-odbc-pwd\nUID=ci",
		"etc/mysql/conf.d/mfa.cnf": "[client]\nuser=ci\npassword1=loot-mysql-first\npassword2 = loot-mysql-second",
		"etc/msmtprc":              "account default\n  host smtp.corp\n  password loot-msmtp-indented\n  user ci",
		"etc/fstab":                "//nas/b /mnt/b cifs username=ci,password2=loot-cifs-second,uid=1000 0 0",
	}
	out := catPlanted(t, box, dir, etc, files)
	for _, kept := range []string{
		"proxy=http://proxy.corp:3128", "gpgcheck=1", "proxy_username: ci", "http-proxy-host = proxy.corp",
		"Driver=MySQL", "UID=ci", "user=ci", "  host smtp.corp", "  user ci", "cifs username=ci,uid=1000",
	} {
		if !strings.Contains(out, kept) {
			t.Errorf("the machine's configuration lost %q:\n%s", kept, out)
		}
	}
}

// utf16Text is s stored as UTF-16, little-endian with a byte order
// mark or big-endian without one, as Windows tools save XML.
func utf16Text(s string, bigEndian bool) string {
	var b []byte
	if !bigEndian {
		b = []byte{0xff, 0xfe}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return string(b)
}

// TestRedTeamXMLConfigsInUTF16: NuGet's and Maven's readers take an
// XML configuration saved as UTF-16 (with a byte order mark, or without
// one when it starts with "<?xml") as well as a UTF-8 one, and NuGet
// reads the proxy's password under the key http_proxy.password. The
// filters matched the raw bytes: a contained agent read a feed's
// password, the proxy's and a Maven server's. Each is left out now, the
// file shown in its own encoding with the rest kept.
func TestRedTeamXMLConfigsInUTF16(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-xml16-")
	etc := filepath.Join(dir, "etc")
	feed := "<?xml version=\"1.0\" encoding=\"utf-16\"?>\n<configuration>\n  <packageSourceCredentials>\n    <corp>\n      <add key=\"Username\" value=\"ci\" />\n" +
		"      <add key=\"ClearTextPassword\" value=\"loot-nuget-%s\" />\n    </corp>\n  </packageSourceCredentials>\n</configuration>"
	files := map[string]string{
		"etc/opt/NuGet/Config/le.config":    utf16Text(fmt.Sprintf(feed, "le"), false),
		"etc/opt/NuGet/Config/be.config":    utf16Text(fmt.Sprintf(feed, "be"), true),
		"etc/opt/NuGet/Config/proxy.config": "<configuration>\n  <config>\n    <add key=\"http_proxy\" value=\"http://proxy.corp:3128\" />\n    <add key=\"http_proxy.password\" value=\"loot-nuget-proxy\" />\n  </config>\n</configuration>",
		"maven/bin/mvn":                     "#!/bin/sh",
		"maven/conf/settings.xml":           utf16Text("<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<settings><servers><server><id>a</id><username>ci</username><password>loot-maven-utf16</password></server></servers></settings>", false),
	}
	plant(t, dir, files)
	env := []string{"PATH=" + filepath.Join(dir, "maven", "bin") + ":/usr/bin:/bin"}
	var script strings.Builder
	for name := range files {
		script.WriteString("cat " + filepath.Join(dir, name) + " 2>/dev/null; ")
	}
	script.WriteString("true")
	raw := runContained(t, Containment{Sandbox: box, etcDir: etc}, env, "sh", "-c", script.String())
	// What the agent read, whichever encoding each file is in.
	out := raw + "\n" + strings.ReplaceAll(raw, "\x00", "")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read a password:\n%q", out)
	}
	for _, kept := range []string{`<add key="Username" value="ci" />`, `value="http://proxy.corp:3128"`, "<username>ci</username>"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the configurations lost %q:\n%q", kept, out)
		}
	}
	if !strings.Contains(raw, utf16Text(`<add key="Username" value="ci" />`, true)[1:]) {
		t.Errorf("the big-endian configuration is no longer UTF-16:\n%q", raw)
	}
}

// TestXMLText: an XML file's text is read in the encoding its first
// bytes tell and given back in it; a NuGet configuration still holding
// NULs once read is shown empty.
func TestXMLText(t *testing.T) {
	t.Parallel()
	const doc = "<?xml version=\"1.0\"?><a>é\U0001F600</a>"
	utf32le := []byte{0xff, 0xfe, 0x00, 0x00}
	for _, r := range doc {
		utf32le = append(utf32le, byte(r), byte(r>>8), byte(r>>16), 0)
	}
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"utf-8", []byte(doc)},
		{"utf-16le with a mark", []byte(utf16Text(doc, false))},
		{"utf-16be without", []byte(utf16Text(doc, true))},
		{"utf-32le with a mark", utf32le},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			text, back := xmlText(c.in)
			if string(text) != doc {
				t.Errorf("read %q, want %q", text, doc)
			}
			if got := back(text); string(got) != string(c.in) {
				t.Errorf("given back %q, want %q", got, c.in)
			}
		})
	}
	if view, _ := filterSysConfig([]byte("<add key=\"Pass\x00word\" value=\"x\"/>\n"), filterNuGetPasswords, nil, nil); len(view) != 0 {
		t.Errorf("a configuration holding NULs is shown as %q", view)
	}
}

// TestRedTeamServiceCredentialVariables: credentials a service manager
// or a pod gives planex's process by a variable naming where they lie:
// systemd's CREDENTIALS_DIRECTORY (LoadCredential= of the unit running
// a CI agent, /run/credentials/<unit>, shown once the network is open),
// and EKS Pod Identity's AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (the
// pod's token, which the credential endpoint takes for the role's
// keys). A contained agent read each; both are covered now.
func TestRedTeamServiceCredentialVariables(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-svccreds-")
	files := map[string]string{
		"credentials/ci-agent.service/token": "loot-systemd-credential",
		"eks/eks-pod-identity-token":         "loot-eks-pod-identity",
		"ci/readme":                          "ci-folder-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin",
		"CREDENTIALS_DIRECTORY=" + filepath.Join(dir, "credentials", "ci-agent.service"),
		"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=" + filepath.Join(dir, "eks", "eks-pod-identity-token")}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamCargoTokenSpellings: Cargo's TOML reader takes a token in
// spellings the line filter of its configuration did not: a quoted key
// with escapes ("tok\u0065n"), and in an inline table a multi-line or
// literal string (token = """…""", over lines too, token = ”'…”').
// A contained agent read each from CARGO_HOME's config.toml.
func TestRedTeamCargoTokenSpellings(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-cargospell-")
	cfg := "[registries.corp]\nindex = \"sparse+https://cargo.corp/index/\"\n\"tok\\u0065n\" = \"loot-escaped-key\"\n" +
		"[registries]\nold = { index = \"https://old.corp/\", \"tok\\u0065n\" = \"loot-inline-escaped\" }\n" +
		"multi = { token = \"\"\"loot-inline-multi\"\"\" }\n" +
		"lines = { index = \"https://lines.corp/\", token = \"\"\"\nloot-inline-over-lines\n\"\"\" }\n" +
		"literal = { token = '''loot-inline-literal''' }\n" +
		"[http]\nproxy = \"http://proxy.corp:3128\"\n"
	plant(t, dir, map[string]string{"cargo/config.toml": cfg})
	env := []string{"PATH=/usr/bin:/bin", "CARGO_HOME=" + filepath.Join(dir, "cargo")}
	out := runContained(t, Containment{Sandbox: box}, env, "cat", filepath.Join(dir, "cargo", "config.toml"))
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read a registry's token:\n%s", out)
	}
	for _, kept := range []string{`index = "sparse+https://cargo.corp/index/"`, `index = "https://old.corp/"`, `index = "https://lines.corp/"`, `proxy = "http://proxy.corp:3128"`} {
		if !strings.Contains(out, kept) {
			t.Errorf("the configuration lost %q:\n%s", kept, out)
		}
	}
}

// TestRedTeamPipClientCertContinued: pip reads its configuration with
// Python's configparser, which takes a value from the indented lines
// after its key: a site pip.conf giving client-cert on the line after
// the key named a client key planex did not cover, and a contained
// agent read it.
func TestRedTeamPipClientCertContinued(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-pipcont-")
	key := filepath.Join(dir, "keys", "client.pem")
	plant(t, dir, map[string]string{
		"venv/bin/python3": "#!/bin/sh",
		"venv/pip.conf":    "[global]\nclient-cert =\n\n    " + key + "\nindex-url = https://pypi.corp/simple",
		"keys/client.pem":  "loot-pip-client-key",
	})
	env := []string{"PATH=" + filepath.Join(dir, "venv", "bin") + ":/usr/bin:/bin"}
	out := runContained(t, Containment{Sandbox: box}, env, "sh", "-c", "cat "+key+" "+filepath.Join(dir, "venv", "pip.conf")+" 2>&1; true")
	if strings.Contains(out, "loot-") {
		t.Errorf("the agent read the client key:\n%s", out)
	}
	if !strings.Contains(out, "index-url = https://pypi.corp/simple") {
		t.Errorf("the configuration lost its index:\n%s", out)
	}
}

// TestRedTeamMavenPrivateKeySpellings: a Maven server's private key file
// named in a spelling Maven's XML reader takes but the search for it did
// not: a tag with blanks before its > (<privateKey >), the path in a
// CDATA section, or written with character references (&#47;). The
// key file stayed readable to a contained agent.
func TestRedTeamMavenPrivateKeySpellings(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-mvnkey-")
	k1, k2, k3 := filepath.Join(dir, "keys", "k1"), filepath.Join(dir, "keys", "k2"), filepath.Join(dir, "keys", "k3")
	plant(t, dir, map[string]string{"maven/conf/settings.xml": "<settings><servers>\n<server><id>a</id><privateKey >" + k1 + "</privateKey ></server>\n" +
		"<server><id>b</id><privateKey><![CDATA[" + k2 + "]]></privateKey></server>\n" +
		"<server><id>c</id><privateKey>" + strings.ReplaceAll(k3, "/", "&#47;") + "</privateKey></server>\n</servers></settings>"})
	keys := map[string]string{"keys/k1": "loot-maven-key-spaced", "keys/k2": "loot-maven-key-cdata", "keys/k3": "loot-maven-key-references", "keys/kept": "keys-folder-readable"}
	plant(t, dir, keys)
	env := []string{"PATH=/usr/bin:/bin", "MAVEN_HOME=" + filepath.Join(dir, "maven")}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, keys)
}

// TestRedTeamHomesNotInThePasswordFile: on a machine whose people log
// in through LDAP, SSSD or Active Directory (a shared build host's), or
// whose account was removed with its home kept, their homes under
// /home are no lines of /etc/passwd: planex hid the password file's
// people's homes only, and a contained agent read a project's .env in
// such a home (mode 755 by default on many distributions). Every folder
// of /home is hidden as a person's home now; a folder of PATH in one
// stays shown.
func TestRedTeamHomesNotInThePasswordFile(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-ldaphomes-")
	homes := filepath.Join(dir, "home")
	files := map[string]string{
		"home/bob.smith/work/app/.env": "STRIPE_KEY=loot-ldap-home-env",
		"home/old-admin/.pypirc":       "[pypi]\npassword = loot-removed-account",
		"home/tools/bin/tool":          "shared tool on PATH",
		"home/alice/.npmrc":            "//registry.npmjs.org/:_authToken=loot-alice-npm",
		"nfs/eve/.git-credentials":     "https://eve:loot-automounted-home@github.com",
	}
	plant(t, dir, files)
	// An automounter's or a data disk's home: /home/eve a link to it,
	// which the walk of /home skipped as no folder.
	if err := os.Symlink(filepath.Join(dir, "nfs", "eve"), filepath.Join(homes, "eve")); err != nil {
		t.Fatal(err)
	}
	plant(t, dir, map[string]string{"passwd": "root:x:0:0:root:/root:/bin/bash\nalice:x:1001:1001::" + filepath.Join(homes, "alice") + ":/bin/bash"})
	env := []string{"PATH=" + filepath.Join(homes, "tools", "bin") + ":/usr/bin:/bin"}
	checkPlantedReads(t, "", Containment{Sandbox: box, passwdFile: filepath.Join(dir, "passwd"), homeRoot: homes}, env, dir, files)
}

// TestRedTeamDataToolCredentials: the database and cloud tools' files a
// CI image moves out of the home by a variable: unixODBC's user DSN file
// (ODBCINI, a DSN's password), Pulumi's passphrase file
// (PULUMI_CONFIG_PASSPHRASE_FILE), an Oracle wallet in TNS_ADMIN (its
// auto-login cwallet.sso, ewallet.p12 and ojdbc.properties with the
// wallet's password), Snowflake's connections (SNOWFLAKE_HOME) and the
// IBM Cloud CLI's tokens (IBMCLOUD_HOME/.bluemix). A contained agent
// read each; the folders' other files (tnsnames.ora) stay.
func TestRedTeamDataToolCredentials(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-datatools-")
	files := map[string]string{
		"ci/odbc.ini":                "[corp]\nPassword = loot-odbcini",
		"ci/pulumi-passphrase":       "loot-pulumi-passphrase",
		"wallet/cwallet.sso":         "loot-oracle-auto-login",
		"wallet/ewallet.p12":         "loot-oracle-pkcs12",
		"wallet/ojdbc.properties":    "javax.net.ssl.keyStorePassword=loot-oracle-ojdbc",
		"wallet/tnsnames.ora":        "corp = (DESCRIPTION=(ADDRESS=(HOST=db.corp)))",
		"snowflake/connections.toml": "[default]\npassword = \"loot-snowflake\"",
		"ibm/.bluemix/config.json":   "{\"IAMToken\": \"loot-ibmcloud\"}",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin",
		"ODBCINI=" + filepath.Join(dir, "ci", "odbc.ini"),
		"PULUMI_CONFIG_PASSPHRASE_FILE=" + filepath.Join(dir, "ci", "pulumi-passphrase"),
		"TNS_ADMIN=" + filepath.Join(dir, "wallet"),
		"SNOWFLAKE_HOME=" + filepath.Join(dir, "snowflake"),
		"IBMCLOUD_HOME=" + filepath.Join(dir, "ibm")}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}
