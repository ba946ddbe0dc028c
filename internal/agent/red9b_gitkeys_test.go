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

// TestRedTeamDotenvFileByItsText: a held variable whose name says
// nothing of a secret names an environment file (a .env a deploy step
// sources, systemd's EnvironmentFile) holding passwords, tokens and a
// database URL with its password. A contained agent read it. Files of
// settings without a secret, and a script reading its token from
// elsewhere, stay readable.
func TestRedTeamDotenvFileByItsText(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-dotenv-")
	files := map[string]string{
		"app/.env":        "# deploy settings\nAPP_NAME=shop\nDB_PASSWORD=loot-dotenv-password\n",
		"app/prod.env":    "export STRIPE_API_KEY=\"loot-dotenv-api-key\"\nREGION=eu\n",
		"app/db.env":      "LOG_LEVEL=info\nDATABASE_URL=postgres://shop:loot-dotenv-url@db.corp/shop\n",
		"app/plain.env":   "APP_NAME=shop\nREGION=eu\nTOKEN_TTL_SECONDS=\nplain-env-readable=1\n",
		"app/fetch.sh":    "#!/bin/sh\nTOKEN=$(cat /run/token)\necho script-readable\n",
		"app/settings.py": "SECRET_KEY = os.environ['SECRET_KEY']  # settings-readable\n",
	}
	plant(t, dir, files)
	a := dir + "/app/"
	env := []string{"PATH=/usr/bin:/bin", "APP_ENV_FILE=" + a + ".env", "DEPLOY_VARS=" + a + "prod.env", "DB_VARS=" + a + "db.env",
		"APP_DEFAULTS=" + a + "plain.env", "APP_FETCH=" + a + "fetch.sh", "APP_SETTINGS=" + a + "settings.py"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}
