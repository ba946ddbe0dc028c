package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRedTeamMoreToolConfigFolders: more tools keep a password or a
// token in a file a variable moves out of the home: dbt's profiles.yml
// (DBT_PROFILES_DIR, a warehouse's password), the MinIO client's
// config.json (MC_CONFIG_DIR, an S3 secret key), s3cmd's configuration
// (S3CMD_CONFIG), the MySQL option file MYSQL_HOME holds, OpenStack's
// clouds.yaml (OS_CLIENT_CONFIG_FILE), the 1Password and Bitwarden CLIs'
// folders (OP_CONFIG_DIR, BITWARDENCLI_APPDATA_DIR) and Vault's CLI
// configuration (VAULT_CONFIG_PATH, naming its token helper). A
// contained agent read each; the rest of the folders dbt and MySQL's
// home hold stays.
func TestRedTeamMoreToolConfigFolders(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-toolcfg7-")
	files := map[string]string{
		"dbt/profiles.yml":       "corp:\n  outputs:\n    prod:\n      password: loot-dbt",
		"dbt/dbt_project.yml":    "name: corp-readable",
		"mc/config.json":         "{\"aliases\": {\"corp\": {\"secretKey\": \"loot-mc\"}}}",
		"ci/s3cfg":               "[default]\nsecret_key = loot-s3cmd",
		"mysqlhome/my.cnf":       "[client]\npassword=loot-mysql-home",
		"mysqlhome/share/readme": "mysql-home-readable",
		"ci/clouds.yaml":         "clouds:\n  corp:\n    auth:\n      password: loot-openstack",
		"op/config":              "{\"accounts\": [{\"secretKey\": \"loot-op\"}]}",
		"bw/data.json":           "{\"accessToken\": \"loot-bw\"}",
		"ci/vault.hcl":           "token_helper = \"/srv/ci/loot-vault-helper\"",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "DBT_PROFILES_DIR=" + dir + "/dbt", "MC_CONFIG_DIR=" + dir + "/mc",
		"S3CMD_CONFIG=" + dir + "/ci/s3cfg", "MYSQL_HOME=" + dir + "/mysqlhome", "OS_CLIENT_CONFIG_FILE=" + dir + "/ci/clouds.yaml",
		"OP_CONFIG_DIR=" + dir + "/op", "BITWARDENCLI_APPDATA_DIR=" + dir + "/bw", "VAULT_CONFIG_PATH=" + dir + "/ci/vault.hcl"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestProjectToolCredentials: dbt's profiles.yml is covered where
// DBT_PROFILES_DIR names a folder outside the step's, and stays where
// the step keeps it (a project's own, committed).
func TestProjectToolCredentials(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, dir string
		keep      []string
		want      bool
	}{
		{"elsewhere", "/srv/dbt", []string{"/", "/work/repo"}, true},
		{"in the repository", "/work/repo/analytics", []string{"/work/repo"}, false},
		{"the repository itself", "/work/repo", []string{"/work/repo"}, false},
		{"passed on", "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := []string{"DBT_PROFILES_DIR=" + tc.dir}
			var passed []string
			if tc.dir == "" {
				base, passed = []string{"DBT_PROFILES_DIR=/srv/dbt"}, []string{"DBT_PROFILES_DIR=/srv/dbt"}
			}
			got := slices.ContainsFunc(credentialFiles(base, passed, tc.keep), func(p string) bool { return strings.HasSuffix(p, "/profiles.yml") })
			if got != tc.want {
				t.Errorf("profiles.yml of %q covered = %v, want %v", tc.dir, got, tc.want)
			}
		})
	}
}

// TestRedTeamLinkedHomesHidden: a home in /home may be a link to where
// the home lives (an automounter's or a data disk's, /home/frank ->
// /nfs/frank), for an account the password file lists or one only a
// directory knows. The agent read what such a home keeps, through the
// link or by the folder it leads to.
func TestRedTeamLinkedHomesHidden(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-linkedhomes-")
	files := map[string]string{
		"nfs/frank/.npmrc":   "//registry.npmjs.org/:_authToken=loot-frank-npm",
		"data/gina/.pypirc":  "[pypi]\npassword = loot-gina-pypi",
		"data/shared/README": "shared data",
	}
	plant(t, dir, files)
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"frank": "../nfs/frank", "gina": filepath.Join(dir, "data", "gina"), "shared": "/"} {
		if err := os.Symlink(target, filepath.Join(home, name)); err != nil {
			t.Fatal(err)
		}
	}
	plant(t, dir, map[string]string{"passwd": "gina:x:1006:1006::" + filepath.Join(home, "gina") + ":/bin/bash"})
	c := Containment{Sandbox: box, passwdFile: filepath.Join(dir, "passwd"), homeRoot: home}
	checkPlantedReads(t, "", c, []string{"PATH=/usr/bin:/bin"}, dir, files)
	for _, p := range []string{"home/frank/.npmrc", "home/gina/.pypirc"} {
		if out := runContained(t, c, []string{"PATH=/usr/bin:/bin"}, "sh", "-c", "cat "+filepath.Join(dir, p)+" 2>/dev/null; true"); strings.Contains(out, "loot-") {
			t.Errorf("the agent read %s through the link: %s", p, out)
		}
	}
}

// TestInnerMountAliases: the other names of the mounts inside a folder.
func TestInnerMountAliases(t *testing.T) {
	t.Parallel()
	mounts := parseMountinfo("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n" +
		"30 22 8:2 / /data rw - ext4 /dev/sdb1 rw\n" +
		"31 22 8:2 /aws /home/ci/.aws rw - ext4 /dev/sdb1 rw\n" +
		"32 22 8:2 /aws/sso /srv/sso rw - ext4 /dev/sdb1 rw\n" +
		"33 22 8:3 / /home/ci/disk rw - ext4 /dev/sdc1 rw\n" +
		"34 22 8:3 / /mnt/disk rw - ext4 /dev/sdc1 rw\n" +
		"35 22 8:1 /srv/x /home/ci/x rw - ext4 /dev/sda1 rw\n")
	for path, want := range map[string][]string{
		"/home/ci":       {"/data/aws", "/srv/sso", "/mnt/disk", "/srv/x"},
		"/home/ci/.aws":  nil,
		"/srv/elsewhere": nil,
	} {
		if got := innerMountAliases(mounts, path); !slices.Equal(got, want) {
			t.Errorf("innerMountAliases(%s) = %q, want %q", path, got, want)
		}
	}
}

// TestRedTeamSecretFilesNamedByAnyVariable: a workflow or an image names
// its own key files in variables of its own (DEPLOY_KEY_PATH,
// SIGNING_KEY_FILE, ANDROID_KEYSTORE_FILE, XAUTHORITY, a folder of
// secrets), which stay with planex but whose files no list covered: a
// contained agent read each. A file a held variable with a secret's
// name gives by its path is covered now; a CA bundle or a
// configuration a variable names otherwise stays readable.
func TestRedTeamSecretFilesNamedByAnyVariable(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-anyvar-")
	files := map[string]string{
		"ci/deploy_key":      "loot-deploy-key",
		"ci/signing.asc":     "loot-signing-key",
		"ci/release.jks":     "loot-keystore",
		"ci/Xauthority":      "loot-x-cookie",
		"ci/secrets/db.txt":  "loot-secrets-dir",
		"ci/sa.json":         "loot-service-account",
		"ci/ca.pem":          "ca-bundle-readable",
		"ci/app.conf":        "app-config-readable",
		"repo/keys/test.key": "repo-key-readable",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "DEPLOY_KEY_PATH=" + dir + "/ci/deploy_key", "SIGNING_KEY_FILE=" + dir + "/ci/signing.asc",
		"ANDROID_KEYSTORE_FILE=" + dir + "/ci/release.jks", "XAUTHORITY=" + dir + "/ci/Xauthority", "CI_SECRETS_DIR=" + dir + "/ci/secrets",
		"FIREBASE_SERVICE_ACCOUNT=" + dir + "/ci/sa.json", "NODE_EXTRA_CA_CERTS=" + dir + "/ci/ca.pem", "APP_CONFIG=" + dir + "/ci/app.conf", "PWD=" + dir + "/work",
		"TEST_KEY_FILE=" + dir + "/repo/keys/test.key"}
	checkPlantedReads(t, "", Containment{Sandbox: box, Read: []string{dir + "/repo"}}, env, dir, files)
}

// TestRedTeamAnsibleConfigKeyFiles: Ansible's configuration names its
// vault password file and the ssh key it connects with
// (vault_password_file, private_key_file, become_password_file,
// connection_password_file, the vault_identity_list's files, as
// ANSIBLE_VAULT_IDENTITY_LIST names them too), in the file
// ANSIBLE_CONFIG names or the
// user's ~/.ansible.cfg (hidden with the home, while the files it names
// lie elsewhere, /opt/ci): a contained agent read each. They are covered
// now; the configuration's other settings, and a file it names that
// holds no secret, stay.
func TestRedTeamAnsibleConfigKeyFiles(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-ansiblecfg-")
	files := map[string]string{
		"ci/ansible.cfg": "[defaults]\ninventory = " + dir + "/ci/hosts\nvault_password_file = " + dir + "/ci/vault_pass\n" +
			"private_key_file: " + dir + "/ci/deploy_key\nvault_identity_list = dev@" + dir + "/ci/dev_pass, prod@prompt\n[privilege_escalation]\nbecome_password_file=" + dir + "/ci/become_pass",
		"ci/hosts":          "web1 ansible_host=10.0.0.1",
		"ci/vault_pass":     "loot-ansible-vault",
		"ci/deploy_key":     "loot-ansible-key",
		"ci/become_pass":    "loot-ansible-become",
		"ci/dev_pass":       "loot-ansible-dev-identity",
		"ci/prod_pass":      "loot-ansible-prod-identity",
		"home/.ansible.cfg": "[defaults]\nconnection_password_file = " + dir + "/ci/conn_pass",
		"ci/conn_pass":      "loot-ansible-connection",
	}
	plant(t, dir, files)
	env := []string{"PATH=/usr/bin:/bin", "ANSIBLE_CONFIG=" + dir + "/ci/ansible.cfg", "HOME=" + dir + "/home",
		"ANSIBLE_VAULT_IDENTITY_LIST=prod@" + dir + "/ci/prod_pass"}
	delete(files, "home/.ansible.cfg") // hidden with the home
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}

// TestRedTeamUserSSHConfigKeysElsewhere: the user's ssh configuration
// (~/.ssh/config, hidden with the home) names a deploy key and its
// certificate kept outside the home (IdentityFile /opt/keys/deploy, an
// Include of a file elsewhere naming another): a contained agent read
// the keys by their paths. They are covered now, as the machine-wide
// configuration's are.
func TestRedTeamUserSSHConfigKeysElsewhere(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-userssh-")
	files := map[string]string{
		"keys/deploy":          "loot-user-ssh-deploy-key",
		"keys/deploy-cert.pub": "loot-user-ssh-cert",
		"keys/other":           "loot-user-ssh-included-key",
		"keys/known_hosts":     "github.com ssh-ed25519 AAAA-readable",
		"conf/extra.conf":      "Host other\n  IdentityFile " + dir + "/keys/other",
	}
	plant(t, dir, files)
	plant(t, dir, map[string]string{"home/.ssh/config": "Host github.com\n  IdentityFile " + dir + "/keys/deploy\n  CertificateFile " + dir + "/keys/deploy-cert.pub\n" +
		"  UserKnownHostsFile " + dir + "/keys/known_hosts\nInclude " + dir + "/conf/extra.conf"})
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + dir + "/home"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}
