package agent

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bounds of the password database read through NSS: how long getent
// may take (a directory server that does not answer), how much of its
// answer is read, how many processes' uids are looked up and how many
// processes are read to find them.
const (
	nssTimeout     = 3 * time.Second
	maxNSSBytes    = 4 << 20
	maxNSSUIDs     = 256
	maxNSSProcs    = 8192
	nssUnknownUser = 65534
)

// getentPrograms are where getent is looked for: the system's own, not
// a program of PATH's.
var getentPrograms = []string{"/usr/bin/getent", "/bin/getent"}

// nssSource is where nssAccounts asks: the getent program and the
// folder of the machine's processes (/proc).
type nssSource struct{ getent, proc string }

// machineNSS is the machine's getent (the system's own, not a program
// of PATH's; "" where there is none, or where NSS reads no account
// database but the machine's own: nssLocalOnly) and /proc.
func machineNSS() nssSource {
	i := slices.IndexFunc(getentPrograms, systemProgram)
	if i < 0 || nssLocalOnly(nsswitchConf) {
		return nssSource{proc: "/proc"}
	}
	return nssSource{getent: getentPrograms[i], proc: "/proc"}
}

// nsswitchConf is the machine's NSS configuration.
const nsswitchConf = "/etc/nsswitch.conf"

// localPasswdSources are the sources of NSS's passwd database that
// hold no directory's accounts: the password file, systemd's dynamic
// and homed users (whose homes are /home's folders), and the ones that
// answer for hosts and machines only.
var localPasswdSources = []string{"files", "systemd", "mymachines", "myhostname", "resolve"}

// nssLocalOnly reports whether the NSS configuration conf names for
// the passwd database only localPasswdSources (Debian's and Ubuntu's
// files systemd, a container image's files), so that getent would add
// nothing to the password file; a missing configuration, or one that
// names sss, ldap, winbind, nis or compat, does not.
func nssLocalOnly(conf string) bool {
	b, err := readSmallRegular(conf)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "passwd:")
		if !ok {
			continue
		}
		if i := strings.IndexByte(rest, '#'); i >= 0 {
			rest = rest[:i]
		}
		for _, w := range strings.Fields(rest) {
			// [NOTFOUND=return] and the like are actions, no sources.
			if !strings.HasPrefix(w, "[") && !slices.Contains(localPasswdSources, w) {
				return false
			}
		}
		return true
	}
	return false
}

// nssAccounts are the password database's lines that NSS gives beyond
// the password file passwd (/etc/passwd): LDAP's, SSSD's, a
// directory's accounts, whose homes may lie anywhere (/u/alice,
// /export/home/alice), where the password file is all planex reads
// itself (a static build's os/user reads nothing else). They are what
// `getent passwd` lists (every account, where the directory lets NSS
// enumerate them) and, since SSSD and winbind list none by default,
// what it answers for the uids of the machine's processes the password
// file does not know (the people logged in, their sessions and jobs).
// Each call is bounded (nssTimeout, maxNSSBytes); nil where getent is
// missing or answers nothing.
func nssAccounts(ctx context.Context, passwd string, src nssSource) []byte {
	if src.getent == "" {
		return nil
	}
	listed, _ := readSmallRegular(passwd)
	all := getentPasswd(ctx, src.getent, nil)
	var unknown []string
	for _, uid := range processUIDs(src.proc) {
		if !passwdHasUID(listed, uid) && !passwdHasUID(all, uid) && len(unknown) < maxNSSUIDs {
			unknown = append(unknown, uid)
		}
	}
	if len(unknown) == 0 {
		return all
	}
	return append(all, getentPasswd(ctx, src.getent, unknown)...)
}

// getentPasswd is what `getent passwd KEYS…` prints, at most
// maxNSSBytes of it; getent's status (2 where a key is not found) is
// no matter, the lines it printed are.
func getentPasswd(ctx context.Context, getent string, keys []string) []byte {
	ctx, cancel := context.WithTimeout(ctx, nssTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, getent, append([]string{"passwd"}, keys...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil
	}
	if err := cmd.Start(); err != nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(out, maxNSSBytes))
	// Past the bound getent is ended, not waited for.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if n := bytes.LastIndexByte(b, '\n'); n >= 0 {
		return b[:n+1] // a line cut at the bound is dropped
	}
	return nil
}

// processUIDs are the real uids of the processes proc (/proc) lists,
// each once, but root's and nobody's; at most maxNSSProcs processes
// are read.
func processUIDs(proc string) []string {
	f, err := os.Open(proc)
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(maxNSSProcs)
	f.Close()
	var out []string
	for _, n := range names {
		if _, err := strconv.ParseUint(n, 10, 32); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(proc, n, "status"))
		if err != nil {
			continue
		}
		uid, ok := statusUID(b)
		if ok && uid != "0" && uid != strconv.Itoa(nssUnknownUser) && !slices.Contains(out, uid) {
			out = append(out, uid)
		}
	}
	return out
}

// statusUID is the real uid of a /proc/<pid>/status.
func statusUID(status []byte) (string, bool) {
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return "", false
			}
			if _, err := strconv.ParseUint(f[0], 10, 32); err != nil {
				return "", false
			}
			return f[0], true
		}
	}
	return "", false
}

// passwdHasUID reports whether a password file's text lists uid.
func passwdHasUID(passwd []byte, uid string) bool {
	for _, line := range strings.Split(string(passwd), "\n") {
		if f := strings.Split(line, ":"); len(f) >= 7 && f[2] == uid {
			return true
		}
	}
	return false
}
