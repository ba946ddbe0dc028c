package agent

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Homes are the home folders the sandbox hides from every contained
// process: planex's own as HOME names it (and as the environment env,
// which the step is built from, names it), and the ones the password
// database gives planex's uid and the user who started planex through
// sudo, pkexec or doas (invokerHomes). HOME is only a variable: a CI
// system (a GitHub container job's HOME=/github/home), a script or sudo
// (which resets it to root's) may point it elsewhere, while the
// account's real home keeps its credentials (~/.ssh, ~/.aws,
// ~/.git-credentials), readable to a contained program wherever its mode
// lets others in. / is never a home to hide.
func Homes(env []string) []string {
	return homesOf(env, accountHomes)
}

// homesOf is Homes with the password database's answer given by
// account.
func homesOf(env []string, account func(env []string) []string) []string {
	var out []string
	add := func(h string) {
		if !filepath.IsAbs(h) {
			return
		}
		// As the kernel walks it: a ".." after a link leads below the
		// link's target (walkedAbs), not where the name reads.
		h, err := walkedAbs(h)
		if err != nil {
			return
		}
		if h != "/" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		add(h)
	}
	add(lookup(env, "HOME"))
	for _, h := range account(env) {
		add(h)
	}
	return out
}

// accountHomes are the homes the password database (with NSS, where
// planex is built with cgo) gives planex's uid and the user who started
// planex as another one (invokerHomes).
func accountHomes(env []string) []string {
	login, _ := os.ReadFile("/proc/self/loginuid")
	return invokerHomes(os.Getuid(), strings.TrimSpace(string(login)), env, lookupHome)
}

// invokerVars name the user who started planex through a tool that
// runs a program as another user: sudo's SUDO_UID, pkexec's PKEXEC_UID
// (uids) and OpenBSD's doas, on Linux too, DOAS_USER (a name).
var invokerVars = []struct {
	name string
	byID bool
}{{"SUDO_UID", true}, {"PKEXEC_UID", true}, {"DOAS_USER", false}}

// invokerHomes are the homes home gives the account uid, the session's
// login uid (/proc/self/loginuid) and the accounts invokerVars name in
// env (a uid or a name, told apart by byID),
// whatever uid planex runs as: `sudo -u ci planex` from alice's shell
// leaves planex as ci, and alice's home, of mode 755 on many
// distributions, as readable to ci's programs as it is to root's. An
// account home does not know gives nothing; a uid that is no number,
// or uid 0 (root's home is hidden when planex is root), is ignored.
func invokerHomes(uid int, loginUID string, env []string, home func(account string, byID bool) string) []string {
	var out []string
	add := func(h string) {
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	add(home(strconv.Itoa(uid), true))
	// The uid the session was logged in as (audit's login uid, which
	// su, sudo and the rest keep): su - ci from alice's login sets no
	// variable. Unset is 4294967295.
	if n, err := strconv.ParseUint(loginUID, 10, 32); err == nil && n != 0 && n != 1<<32-1 {
		add(home(loginUID, true))
	}
	for _, v := range invokerVars {
		s := lookup(env, v.name)
		if s == "" || s == "0" || s == "root" {
			continue
		}
		if _, err := strconv.ParseUint(s, 10, 32); v.byID && err != nil {
			continue
		}
		add(home(s, v.byID))
	}
	return out
}

// lookupHome is the home the password database gives an account, by
// uid or by name; "" for an account it does not know.
func lookupHome(account string, byID bool) string {
	lookup := user.Lookup
	if byID {
		lookup = user.LookupId
	}
	if u, err := lookup(account); err == nil {
		return u.HomeDir
	}
	return ""
}

// maxOtherHomes bounds the other accounts' homes hidden one by one;
// those past it are hidden with the folder that holds them.
const maxOtherHomes = 512

// peopleHomes is the folder holding people's homes.
const peopleHomes = "/home"

// otherAccountHomes are the homes of the other accounts the password
// file passwd lists (/etc/passwd), whatever their owner: people's (a uid
// of 1000 or more but nobody's 65534, or a home under /home) and
// services' (a uid from 1 to 999) whose home is no system folder
// (serviceHome: /var/lib/jenkins, /var/lib/gitlab-runner, /srv/<app>).
// On a machine shared with developers, or a runner's host with an
// admin's account or a CI server of its own, each keeps credentials
// there (a .npmrc, .pypirc, .gitconfig with a token, a project's .env,
// Jenkins' credentials.xml and job configurations) that a home of mode
// 755, many distributions' default, lets every uid read, a contained
// program's included. A home that is / or a system folder is left
// alone, and so is one that does not exist; a home that is a link is
// hidden where it leads. One that holds folders of PATH (a Homebrew
// under /home/linuxbrew on PATH) is hidden too, and what PATH needs of
// it is shown (pathShown). The accounts only NSS knows (LDAP's, SSSD's)
// are judged alike from nss, the lines nssAccounts gives, and the
// folders of /home are hidden whoever they belong to.
func otherAccountHomes(passwd, homeRoot string, nss []byte, base []string) (homes, shown []string) {
	b, _ := readSmallRegular(passwd)
	b = append(append(b, '\n'), nss...)
	path := filepath.SplitList(lookup(base, "PATH"))
	for _, line := range strings.Split(string(b), "\n") {
		home, ok := personHome(line)
		if !ok || slices.Contains(homes, home) {
			continue
		}
		if len(homes) >= maxOtherHomes {
			// Past the bound, the folder holding the home is hidden
			// (once): no home is shown for being one too many.
			home = filepath.Dir(home)
			if !coverableDir(home) || slices.Contains(homes, home) {
				continue
			}
		}
		homes = append(homes, home)
		shown = append(shown, pathShown(home, path)...)
	}
	// The folders of /home are people's homes whether the password file
	// lists them or not: those of LDAP's, SSSD's or a directory's
	// accounts, a removed account's home kept.
	for _, home := range unlistedHomes(homeRoot, homes) {
		homes = append(homes, home)
		shown = append(shown, pathShown(home, path)...)
	}
	return homes, shown
}

// unlistedHomes are the folders of root (/home) not among listed, a
// link to a folder taken where it leads (an automounter's or a data
// disk's homes), each a person's home to hide; past maxOtherHomes in
// all, root itself once.
func unlistedHomes(root string, listed []string) []string {
	// A /home that is a link (Fedora Silverblue's to /var/home) is
	// listed where it leads, as the password file's homes are.
	root, err := filepath.EvalSymlinks(root)
	if err != nil || !coverableDir(root) {
		return nil
	}
	f, err := os.Open(root)
	if err != nil {
		return nil
	}
	entries, _ := f.ReadDir(maxOtherHomes + 1)
	f.Close()
	var out []string
	for _, e := range entries {
		if slices.Contains(listed, root) {
			break
		}
		home := filepath.Join(root, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(home)
			if err != nil || !coverableDir(real) || !isDirectory(real) {
				continue
			}
			home = real
		} else if !e.IsDir() {
			continue
		}
		if slices.Contains(listed, home) || slices.Contains(out, home) {
			continue
		}
		if len(listed)+len(out) >= maxOtherHomes {
			return append(out, root)
		}
		out = append(out, home)
	}
	return out
}

// personHome is the home of a password file's line when it is a
// person's account (a uid of 1000 or more but nobody's 65534, or a home
// under /home) or a service's whose home is no system folder
// (serviceHome), and the home, where a link leads, exists and may be
// hidden.
func personHome(line string) (string, bool) {
	f := strings.Split(line, ":")
	if len(f) < 7 {
		return "", false
	}
	uid, err := strconv.ParseUint(f[2], 10, 32)
	if err != nil || !filepath.IsAbs(f[5]) {
		return "", false
	}
	home := filepath.Clean(f[5])
	if uid == 0 && home == "/root" {
		return "", false // hidden as planex's own when planex is root
	}
	// uid 0 (a second root's, such as BSD's toor) and nobody's 65534
	// are judged as services: their homes are system folders, / or
	// missing, unless an admin gave them a folder.
	person := uid >= 1000 && uid != 65534 || strings.HasPrefix(home, peopleHomes+"/")
	real, err := filepath.EvalSymlinks(home)
	if err != nil || !person && !serviceHome(real) {
		return "", false
	}
	return real, coverableDir(real) && isDirectory(real)
}

// serviceHome reports whether a service account's home (its links
// followed) is a folder of its own to hide: not one of the system's
// folders of programs, libraries, configuration, devices or run-time
// state (a daemon's /usr/sbin, systemd-resolve's /run/systemd, which
// holds the resolver's configuration), and not a folder of the system's
// layout that holds others' folders too (layoutDirs: /var/lib, /var/www,
// /var/mail, /srv, /data). A service's own folder may lie at the
// layout's depth: GoCD's /var/go, BIND's /var/named, an image's
// /jenkins.
func serviceHome(home string) bool {
	for _, sys := range []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/nix", "/proc", "/run", "/sbin", "/snap", "/sys", "/usr", "/var/run", "/var/lock", "/var/empty"} {
		if home == sys || strings.HasPrefix(home, sys+"/") {
			return false
		}
	}
	return !slices.Contains(layoutDirs, home) && coverableDir(home)
}

// layoutDirs are the folders of the file system's layout (the FHS's,
// and the usual places of data disks and mounts) that hold others'
// folders beside a service's: at the top and in /var.
var layoutDirs = []string{"/home", "/srv", "/data", "/mnt", "/media", "/tmp", "/opt", "/var",
	"/var/lib", "/var/cache", "/var/spool", "/var/www", "/var/mail", "/var/log", "/var/tmp", "/var/opt",
	"/var/local", "/var/backups", "/var/games", "/var/crash", "/var/db", "/var/yp", "/var/nis", "/var/adm",
	"/var/account", "/var/preserve", "/var/snap", "/var/home", "/var/mnt", "/var/srv", "/var/roothome",
	"/var/usrlocal", "/var/ftp", "/var/kerberos", "/var/spool/mail"}

// pathShown are the folders of a hidden home that its folders on PATH
// need shown: a Homebrew's prefix (.linuxbrew, whose bin and sbin hold
// links into its Cellar and opt) but for its var, where its services
// keep their data (brewPrefixShown), any other PATH folder alone.
func pathShown(home string, path []string) []string {
	var out []string
	add := func(d string) {
		if !slices.Contains(out, d) && isDirectory(d) {
			out = append(out, d)
		}
	}
	for _, d := range path {
		d = filepath.Clean(d)
		if !filepath.IsAbs(d) || !strings.HasPrefix(d, home+"/") {
			continue
		}
		if prefix := filepath.Dir(d); filepath.Base(prefix) == ".linuxbrew" {
			for _, sub := range brewPrefixShown(prefix) {
				add(sub)
			}
			continue
		}
		add(d)
	}
	return out
}

// maxBrewEntries bounds the entries of a Homebrew prefix shown.
const maxBrewEntries = 256

// brewPrefixShown are the entries of a Homebrew prefix a step is shown:
// all but var (databases, logs and sockets of the services it runs).
func brewPrefixShown(prefix string) []string {
	f, err := os.Open(prefix)
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(maxBrewEntries)
	f.Close()
	var out []string
	for _, n := range names {
		if n != "var" {
			out = append(out, filepath.Join(prefix, n))
		}
	}
	return out
}

// OtherAccountHomes are the other accounts' homes the sandbox hides
// (otherAccountHomes of the machine's /etc/passwd and what NSS adds),
// for env's PATH. shown are the folders of them it shows all the same
// (pathShown).
func OtherAccountHomes(ctx context.Context, env []string) (homes, shown []string) {
	return otherAccountHomes(machinePasswd, peopleHomes, nssAccounts(ctx, machinePasswd, machineNSS()), env)
}

// machinePasswd is the machine's password file.
const machinePasswd = "/etc/passwd"
