package agent

import (
	"os"
	"testing"
)

// TestRedTeamKeyFolderUnderUsrLocal: a server built from source keeps
// its configuration and keys under /usr/local (nginx's
// /usr/local/nginx/conf/ssl, a program's /usr/local/etc), and a held
// variable naming such a folder had it skipped as one of the system's
// programs: a contained agent read the key in it. Its certificate
// stays readable.
func TestRedTeamKeyFolderUnderUsrLocal(t *testing.T) {
	t.Parallel()
	box, _ := sandboxAndHostFolder(t, "planex-usrlocal-probe-")
	dir, err := os.MkdirTemp("/usr/local", "planex-usrlocal-")
	if err != nil {
		t.Skipf("needs a folder under /usr/local (run as root): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"nginx/conf/ssl/server.key": "-----BEGIN PRIVATE KEY-----\nloot-usr-local-nginx",
		"nginx/conf/ssl/server.crt": "-----BEGIN CERTIFICATE-----\nusr-local-cert-readable",
		"etc/app/tls/app.key":       "-----BEGIN EC PRIVATE KEY-----\nloot-usr-local-etc",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "NGINX_SSL_DIR=" + dir + "/nginx/conf/ssl", "APP_ETC=" + dir + "/etc/app"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}
