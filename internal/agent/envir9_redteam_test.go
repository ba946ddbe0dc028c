package agent

import (
	"os"
	"strings"
	"testing"
)

// TestRedTeamKeysPastTheSniffAndInFolders: a held variable's file was
// judged by its first 4 KiB, and a folder one names not at all. A
// combined PEM, as HAProxy and other proxies take it (the certificate
// chain, several KiB, then the key), and the key files of a folder a
// variable whose name says nothing of a secret names (TLS_DIR=/srv/tls
// holding server.key, a link to a key there) were read by a contained
// agent. Now the first 64 KiB are judged, and the files of a folder so
// named; its certificates and configurations stay readable.
func TestRedTeamKeysPastTheSniffAndInFolders(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-keyfolders-")
	chain := strings.Repeat("-----BEGIN CERTIFICATE-----\n"+strings.Repeat("MIIFazCCA1OgAwIBAgIRAIIQz7DSQONZRGPgu2OCiwAwDQYJKoZIhvcNAQELBQAw\n", 28)+"-----END CERTIFICATE-----\n", 3)
	files := map[string]string{
		"haproxy/site.pem":   chain + "-----BEGIN PRIVATE KEY-----\nloot-combined-pem",
		"tls/server.key":     "-----BEGIN EC PRIVATE KEY-----\nloot-folder-key",
		"tls/client.p12":     "\x30\x82\x0a\x1b\x02\x01\x03\x30loot-folder-p12",
		"tls/server.crt":     "-----BEGIN CERTIFICATE-----\nfolder-cert-readable",
		"tls/app.conf":       "listen 443 folder-conf-readable",
		"keys/deploy":        "-----BEGIN OPENSSH PRIVATE KEY-----\nloot-linked-key",
		"tls2/readme.txt":    "folder-readme-readable",
		"tls2/nested/ca.pem": "-----BEGIN CERTIFICATE-----\nnested-cert-readable",
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
