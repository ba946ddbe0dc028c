package agent

import "testing"

// TestRedTeamUserGitConfigNamesKeyFiles: the user's ~/.gitconfig names,
// outside the home, the files git reads a credential from besides its
// includes and helper's store: the deploy key of core.sshCommand (ssh
// -i), the cookie jar of http.cookieFile, the client certificate of
// http.sslCert (a PEM holding its key too) and an SSH signing key
// (user.signingKey with gpg.format ssh). A contained agent read each by
// its path; the known hosts file beside them stays readable.
func TestRedTeamUserGitConfigNamesKeyFiles(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-usergitkeys-")
	ci := dir + "/opt/ci/"
	files := map[string]string{
		"home/ci/.gitconfig": "[core]\n\tsshCommand = ssh -i " + ci + "deploy_key -o UserKnownHostsFile=" + ci + "known_hosts\n" +
			"[http]\n\tcookieFile = " + ci + "git-cookies\n\tsslCert = \"" + ci + "client.pem\"\n" +
			"[gpg]\n\tformat = ssh\n[user]\n\tsigningKey = " + ci + "signing\n",
		"opt/ci/deploy_key":  "loot-user-sshcommand-key",
		"opt/ci/git-cookies": ".corp\tTRUE\t/\tTRUE\t0\to\tloot-user-cookie",
		"opt/ci/client.pem":  "loot-user-sslcert",
		"opt/ci/signing":     "loot-user-signing-key",
		"opt/ci/known_hosts": "github.com ssh-ed25519 AAAA known-hosts-readable",
	}
	plant(t, dir, files)
	delete(files, "home/ci/.gitconfig")
	checkPlantedReads(t, "", Containment{Sandbox: box}, []string{"PATH=/usr/bin:/bin", "HOME=" + dir + "/home/ci"}, dir, files)
}
