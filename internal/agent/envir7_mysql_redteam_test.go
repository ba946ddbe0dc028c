package agent

import (
	"strings"
	"testing"
)

// TestRedTeamMySQLOptionFileForms: MySQL's and MariaDB's clients read
// the files a machine-wide option file includes (!include FILE,
// !includedir DIR: its *.cnf files) wherever they lie, and MariaDB takes
// a long option by any prefix no other option shares (pass=, passw=,
// also after loose-); a client's TLS key is named by ssl-key=. A
// contained agent read each password and the key: the files outside
// /etc were shown whole, and the prefixes were no password key.
func TestRedTeamMySQLOptionFileForms(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-mysqlforms-")
	files := map[string]string{
		"etc/mysql/my.cnf": "[client]\nuser=ci\n!includedir " + dir + "/db/conf.d/\n!include " + dir + "/db/client.cnf\n",
		"etc/mysql/mariadb.conf.d/50-client.cnf": "[client]\nhost=db.corp\npass=loot-mariadb-pass\npassw = loot-mariadb-passw\n" +
			"passwo=loot-mariadb-passwo\nloose-passw=loot-mariadb-loose\npas=loot-mariadb-pas",
		"db/client.cnf":       "[client]\nport=3306\npassword=loot-included-file",
		"db/conf.d/extra.cnf": "[client]\nsocket=/run/mysqld.sock\npassword=loot-included-dir\n!include " + dir + "/db/nested.cnf",
		"db/nested.cnf":       "[client]\npassword=loot-nested\nssl-key=" + dir + "/db/client-key.pem",
		"db/client-key.pem":   "loot-client-key",
	}
	out := catPlanted(t, box, dir, dir+"/etc", files)
	for _, kept := range []string{"user=ci", "host=db.corp", "port=3306", "socket=/run/mysqld.sock"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the option files lost %q:\n%s", kept, out)
		}
	}
}
