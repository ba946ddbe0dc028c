package agent

import (
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
		"EXTRA_CA=" + ci + "ca.pem", "APP_SETTINGS=" + ci + "app.conf", "UI_SETTINGS=" + ci + "settings.json"}
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
		if got := looksLikeSecret([]byte(c.head)); got != c.want {
			t.Errorf("looksLikeSecret(%q) = %v, want %v", c.head, got, c.want)
		}
	}
}
