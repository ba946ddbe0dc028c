package agent

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestRedTeamRealHomeWithHomeOverridden: planex runs with HOME naming
// another folder than its account's home (a GitHub container job's
// HOME=/github/home, a script's HOME=$PWD/.home, sudo's reset to root's),
// so the sandbox hid only that folder; the account's real home, with its
// ssh key and cloud credentials, stayed readable where its mode lets
// others in (a home of mode 755, the default of many distributions).
// The home the password database gives planex's uid is now hidden too
// (here a folder under /srv stands for it).
func TestRedTeamRealHomeWithHomeOverridden(t *testing.T) {
	box, dir := sandboxAndHostFolder(t, "planex-realhome-")
	files := map[string]string{
		"real/.ssh/id_ed25519":     "loot-ssh-key",
		"real/.aws/credentials":    "loot-aws",
		"real/.git-credentials":    "loot-git-credentials",
		"override/.config/x.toml":  "loot-override",
		"unrelated/readable-notes": "plain-readable",
	}
	plant(t, dir, files)
	real := filepath.Join(dir, "real")
	c := Containment{Sandbox: box, account: func([]string) []string { return []string{real} }}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(dir, "override")}
	checkPlantedReads(t, "", c, env, dir, files)
}

// TestHomes: which folders are hidden as homes.
func TestHomes(t *testing.T) {
	t.Parallel()
	own, err := os.UserHomeDir()
	if err != nil {
		t.Skipf("planex's test runs without a home: %v", err)
	}
	for _, c := range []struct {
		name    string
		env     []string
		account []string
		want    []string
	}{
		{"HOME overridden", []string{"HOME=/github/home"}, []string{"/srv/account"}, []string{own, "/github/home", "/srv/account"}},
		{"the same home once", []string{"HOME=" + own + "/"}, []string{own}, []string{own}},
		{"no root, no relative", []string{"HOME=/"}, []string{"home", "/"}, []string{own}},
	} {
		got := homesOf(c.env, func([]string) []string { return c.account })
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: homes = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestAccountHomes: the password database is asked for planex's uid and
// for sudo's invoking user.
func TestAccountHomes(t *testing.T) {
	t.Parallel()
	me, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil {
		t.Skipf("this uid has no account in the password database: %v", err)
	}
	if got := accountHomes(nil); len(got) == 0 || got[0] != me.HomeDir {
		t.Errorf("accountHomes = %q, want the account's %q", got, me.HomeDir)
	}
	other, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no account named nobody here: %v", err)
	}
	got := accountHomes([]string{"SUDO_UID=" + other.Uid})
	if !slices.Contains(got, other.HomeDir) {
		t.Errorf("SUDO_UID=%s: accountHomes = %q, want %q among them", other.Uid, got, other.HomeDir)
	}
	if got := accountHomes([]string{"SUDO_UID=x/../1"}); !slices.Equal(got, accountHomes(nil)) {
		t.Errorf("a SUDO_UID that is no number: accountHomes = %q", got)
	}
}

// TestInvokerHomes: the homes of the user who started planex as another
// one, whatever uid planex runs as: `sudo -u ci planex` from alice's
// shell left planex as ci (not root), and alice's home, readable to ci
// where its mode lets others in, was not hidden; pkexec's and doas'
// invoking users were never looked at.
func TestInvokerHomes(t *testing.T) {
	t.Parallel()
	accounts := map[string]string{"1001": "/home/ci", "1000": "/home/alice", "1002": "/home/bob", "carol": "/home/carol", "0": "/root", "root": "/root"}
	home := func(account string, byID bool) string {
		if _, err := strconv.Atoi(account); (err == nil) != byID {
			t.Errorf("%s looked up with byID=%v", account, byID)
		}
		return accounts[account]
	}
	for _, c := range []struct {
		name  string
		uid   int
		login string
		env   []string
		want  []string
	}{
		{"sudo -u ci from alice", 1001, "", []string{"SUDO_UID=1000"}, []string{"/home/ci", "/home/alice"}},
		{"pkexec from bob", 0, "", []string{"PKEXEC_UID=1002"}, []string{"/root", "/home/bob"}},
		{"doas from carol", 1001, "", []string{"DOAS_USER=carol"}, []string{"/home/ci", "/home/carol"}},
		{"su - ci from alice's login", 1001, "1000", nil, []string{"/home/ci", "/home/alice"}},
		{"a service: no login uid", 1001, "4294967295", nil, []string{"/home/ci"}},
		{"root invoker adds nothing", 1001, "0", []string{"SUDO_UID=0", "DOAS_USER=root"}, []string{"/home/ci"}},
		{"no number, unknown", 1001, "x", []string{"SUDO_UID=../1000", "PKEXEC_UID=4242"}, []string{"/home/ci"}},
	} {
		if got := invokerHomes(c.uid, c.login, c.env, home); !slices.Equal(got, c.want) {
			t.Errorf("%s: invokerHomes = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestPersonHome: which password file lines name a home to hide: people's
// and services' but for homes that are system folders, / or missing; a
// link is taken where it leads.
func TestPersonHome(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	svc := filepath.Join(dir, "var", "lib", "jenkins")
	if err := os.MkdirAll(svc, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "jenkins-home")
	if err := os.Symlink(svc, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		line, want string
	}{
		{"jenkins:x:110:115:Jenkins,,,:" + svc + ":/bin/bash", svc},
		{"jenkins:x:110:115::" + link + ":/bin/bash", svc},
		{"alice:x:1001:1001::" + svc + "/:/bin/bash", svc},
		{"toor:x:0:0:root:" + svc + ":/bin/bash", svc},
		{"nobody:x:65534:65534:nobody:" + svc + ":/usr/sbin/nologin", svc},
		{"root:x:0:0:root:/root:/bin/bash", ""},
		{"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin", ""},
		{"backup:x:34:34:backup:/var/backups:/usr/sbin/nologin", ""},
		{"daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin", ""},
		{"bin:x:2:2:bin:/bin:/usr/sbin/nologin", ""},
		{"systemd-resolve:x:991:991::/run/systemd:/usr/sbin/nologin", ""},
		{"sys:x:3:3:sys:/dev:/usr/sbin/nologin", ""},
		{"odd:x:1004:1004::/:/bin/sh", ""},
		{"svc:x:998:998::" + filepath.Join(dir, "missing") + ":/bin/sh", ""},
		{"svc:x:998:998::relative/home:/bin/sh", ""},
		{"svc:x:nan:998::" + svc + ":/bin/sh", ""},
		{"short:x:998", ""},
	} {
		got, ok := personHome(c.line)
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.line, got, c.want)
		}
	}
	for _, c := range []struct {
		home string
		want bool
	}{
		{"/var/lib/jenkins", true}, {"/srv/app", true}, {"/opt/gitlab", true}, {"/data/ci", true},
		{"/var/www", false}, {"/var/lib", false}, {"/var/mail", false}, {"/srv", false}, {"/data", false},
		{"/var/spool/lpd", true}, {"/usr/sbin", false}, {"/usr/games", false}, {"/run/sshd", false},
		{"/var/run/x", false}, {"/var/empty", false}, {"/var", false}, {"/opt", false},
		{"/etc/unbound", false}, {"/", false},
		{"/var/go", true}, {"/var/named", true}, {"/jenkins", true}, {"/var/cache/man", true},
		{"/var/cache", false}, {"/var/spool", false}, {"/var/log", false}, {"/var/opt", false}, {"/var/backups", false},
		{"/mnt", false}, {"/media", false}, {"/home", false}, {"/tmp", false},
	} {
		if got := serviceHome(c.home); got != c.want {
			t.Errorf("serviceHome(%s) = %v, want %v", c.home, got, c.want)
		}
	}
}
