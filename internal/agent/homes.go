package agent

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
)

// Homes are the home folders the sandbox hides from every contained
// process: planex's own as HOME names it (and as the environment env,
// which the step is built from, names it), and the ones the password
// database gives planex's uid and, when planex runs as root through
// sudo, the invoking user's (SUDO_UID). HOME is only a variable: a CI
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
		h = filepath.Clean(h)
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
// planex is built with cgo) gives planex's uid and, when planex runs as
// root, the uid sudo names in SUDO_UID. An account it does not know
// gives nothing.
func accountHomes(env []string) []string {
	uids := []string{strconv.Itoa(os.Getuid())}
	if os.Getuid() == 0 {
		if s := lookup(env, "SUDO_UID"); s != "" && s != "0" {
			if _, err := strconv.ParseUint(s, 10, 32); err == nil {
				uids = append(uids, s)
			}
		}
	}
	var out []string
	for _, uid := range uids {
		if u, err := user.LookupId(uid); err == nil && u.HomeDir != "" {
			out = append(out, u.HomeDir)
		}
	}
	return out
}
