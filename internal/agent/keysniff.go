package agent

import (
	"bytes"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
)

// maxValuePaths bounds the paths one variable's value is read as.
const maxValuePaths = 16

// valuePaths are the absolute paths a variable's value names however it
// spells them: as it is, with white space (a trailing newline a
// workflow's heredoc left) or quotes around it, as a file:// URL, as
// curl's @file, or as a :-separated list of them; at most
// maxValuePaths.
func valuePaths(val string) []string {
	var out []string
	for _, p := range strings.Split(val, ":") {
		p = strings.Trim(strings.TrimSpace(p), `"'`)
		p = strings.TrimPrefix(p, "@")
		if p == "file" || p == "" {
			continue // the scheme of a file:// URL, split at its colon
		}
		if rest, ok := strings.CutPrefix(p, "//"); ok {
			p = rest // file://PATH's remainder, PATH absolute
		}
		if filepath.IsAbs(p) && len(out) < maxValuePaths {
			out = append(out, p)
		}
	}
	return out
}

// wordPaths are the absolute paths among the words of a value (a
// command line or options: RSYNC_RSH="ssh -i /srv/ci/key"), each as it
// is, quoted, or after its first = (--tls-key=/srv/ci/tls.key,
// -o IdentityFile=/srv/ci/key); at most maxValuePaths. A value of one
// word is valuePaths' alone.
func wordPaths(val string) []string {
	words := strings.Fields(val)
	if len(words) < 2 {
		return nil
	}
	var out []string
	for _, w := range words {
		w = strings.Trim(w, `"'`)
		if _, after, ok := strings.Cut(w, "="); ok {
			w = strings.Trim(after, `"'`)
		}
		if filepath.IsAbs(w) && len(out) < maxValuePaths {
			out = append(out, filepath.Clean(w))
		}
	}
	return out
}

// keyFilesByContent are the regular files that variables of base the
// step does not get (heldValuePaths) name, whatever the variable is
// called and wherever the file lies (/etc/myapp/tls.key too), where
// the file starts as a key does (startsLikeSecret:
// APP_CONFIG=/srv/ci/deploy.pem, a GCLOUD_JSON service account), and
// such files of a folder one names (keyFolderFiles: TLS_DIR=/srv/tls
// holding server.key); not one of shown, the configurations the step
// is shown filtered (a global npmrc with an inline key= the view
// leaves out). What lies in one of hidden (the homes, other accounts'
// homes: folders the step cannot see at all) is neither read nor
// judged: walking a home of thousands of files for a key the step could
// not open cost each contained step a second.
func keyFilesByContent(base, passed, keep, shown, hidden []string) []string {
	var out []string
	// A file several variables name (a CA bundle eleven name) is read
	// once for each way it is judged.
	judged := map[[2]string]sniffed{}
	judge := func(name, p, how string, sniff func(string) sniffed) {
		if slices.Contains(out, p) || isShown(p, shown) {
			return
		}
		key := [2]string{how, p}
		what, ok := judged[key]
		if !ok {
			what = sniff(p)
			judged[key] = what
		}
		switch what {
		case sniffKey:
			out = append(out, p)
		case sniffStore:
			if !trustStore(name, p) {
				out = append(out, p)
			}
		}
	}
	held := slices.Concat(heldValuePaths(base, passed, keep), heldPathsOf(base, passed, keep, wordPaths))
	for _, hp := range held {
		if hiddenWhole(hp.path, hidden, keep) {
			continue
		}
		if !isDirectory(hp.path) {
			judge(hp.name, hp.path, "file", startsLikeSecret)
			continue
		}
		if toolCacheHolds(base, hp.path) {
			continue
		}
		sniff, byName := keyFolderFiles(hp.path, keep)
		for _, p := range sniff {
			judge(hp.name, p, "folder", sniffFolderFile)
		}
		for _, p := range byName {
			judge(hp.name, p, "name", func(string) sniffed { return sniffKey })
		}
	}
	return out
}

// hiddenWhole reports whether p lies in a folder of hidden and nothing
// of keep (what the step is shown or writes) lies in p or holds it: the
// step sees nothing there, so nothing there needs covering.
func hiddenWhole(p string, hidden, keep []string) bool {
	p = filepath.Clean(p)
	if !slices.ContainsFunc(hidden, func(h string) bool { return within(p, filepath.Clean(h)) }) {
		return false
	}
	return !slices.ContainsFunc(keep, func(k string) bool {
		k = filepath.Clean(k)
		return within(k, p) || within(p, k)
	})
}

// toolCacheHolds reports whether dir lies in the runner's tool cache
// (RUNNER_TOOL_CACHE, AGENT_TOOLSDIRECTORY): the toolchains setup
// actions install there (the GOROOT_1_22_X64 of a hosted runner, of
// thousands of files) hold no admin's key, and are not read for one.
func toolCacheHolds(base []string, dir string) bool {
	for _, v := range []string{"RUNNER_TOOL_CACHE", "AGENT_TOOLSDIRECTORY"} {
		if c := lookup(base, v); filepath.IsAbs(c) && within(filepath.Clean(dir), filepath.Clean(c)) {
			return true
		}
	}
	return false
}

// maxKeyFolderEntries bounds the entries of the folders below one a
// held variable names that keyFolderFiles reads, in all,
// maxKeyFolderFiles the files among them it gives to sniff,
// maxKeyFolderDepth how many folders down it goes, and
// maxKeyFolderFileSize the size of a file there it sniffs: a key file
// is small. Names are cheap to read, files are not: the entries' bound
// is the larger.
const (
	maxKeyFolderEntries  = 4096
	maxKeyFolderFiles    = 128
	maxKeyFolderDepth    = 6
	maxKeyFolderFileSize = 1 << 20
)

// keyFolderFiles are the files in dir, a folder a held variable names,
// and in its folders maxKeyFolderDepth down (private/server.key,
// live/<host>/privkey.pem), a link to a folder taken where it leads:
// those startsLikeSecret is to judge (sniff), and those to cover by
// their names alone (byName). Each is a regular file of at most
// maxKeyFolderFileSize, or a link to one (taken where it leads),
// outside the kernel's folders and those the step keeps, among the
// first maxKeyFolderEntries entries read, folder by folder, nearest
// first. The files whose names say key (keyLikeName) are sniffed
// first, and those past the maxKeyFolderFiles sniffed are covered
// unread: a crowded certificate folder read first does not leave the
// key of another unjudged. A folder of the system's programs and
// libraries (a toolchain's, an SDK's) holds no admin's key and is not
// read; one in /etc is (/etc/myapp/tls), and a folder of settings or
// keys among the programs (keyFolderReadable).
func keyFolderFiles(dir string, keep []string) (sniff, byName []string) {
	if !keyFolderReadable(dir) {
		return nil, nil
	}
	names := keyFolderEntries(dir, keep)
	slices.SortStableFunc(names, func(a, b string) int {
		ka, kb := keyLikeName(filepath.Base(a)), keyLikeName(filepath.Base(b))
		switch {
		case ka && !kb:
			return -1
		case kb && !ka:
			return 1
		}
		return 0
	})
	for _, p := range names {
		f := keyFolderFile(p, keep)
		switch {
		case f == "" || slices.Contains(sniff, f) || slices.Contains(byName, f):
		case len(sniff) < maxKeyFolderFiles:
			sniff = append(sniff, f)
		case keyLikeName(filepath.Base(p)):
			byName = append(byName, f)
		}
	}
	return sniff, byName
}

// keyFolderReadable reports whether keyFolderFiles reads the folder
// dir (as it is, or where its links lead): not the kernel's, nor one of
// the system's programs, but for their configurations (/etc, and a
// folder of settings or keys among them: a server built from source
// keeps its keys in /usr/local/nginx/conf/ssl, or /usr/local/etc).
func keyFolderReadable(dir string) bool {
	dir = filepath.Clean(dir)
	if kernelPath(dir) {
		return false
	}
	if !isProgramPath(dir) || within(dir, "/etc") {
		return true
	}
	return slices.ContainsFunc(strings.Split(dir, "/"), func(part string) bool { return slices.Contains(keyFolderParts, part) })
}

// keyFolderParts are the names of folders among the system's programs
// that hold settings or keys, not programs.
var keyFolderParts = []string{"etc", "conf", "config", "ssl", "tls", "certs", "private", "keys", "secrets", "credentials"}

// keyFolderEntries are the paths of the entries that are not folders
// in dir and in its folders maxKeyFolderDepth down, nearest first, at
// most maxKeyFolderEntries read in all. A link to a folder is read
// where it leads (once, however many links lead there), within the
// same depth: the key a link inside the named folder reaches is the
// agent's to read through it.
func keyFolderEntries(dir string, keep []string) []string {
	type folder struct {
		path  string
		depth int
	}
	var out []string
	seen := map[string]bool{}
	queue, budget := []folder{{dir, 0}}, maxKeyFolderEntries
	for len(queue) > 0 && budget > 0 {
		d := queue[0]
		queue = queue[1:]
		real, err := filepath.EvalSymlinks(d.path)
		if err != nil || seen[real] || !keyFolderReadable(real) || (d.depth > 0 && keptFolderHolds(keep, real)) {
			continue
		}
		seen[real] = true
		f, err := os.Open(real)
		if err != nil {
			continue
		}
		entries, _ := f.ReadDir(budget)
		f.Close()
		budget -= len(entries)
		for _, e := range entries {
			p := filepath.Join(real, e.Name())
			switch {
			case e.IsDir() || e.Type()&os.ModeSymlink != 0 && isDirectory(p):
				if d.depth+1 < maxKeyFolderDepth {
					queue = append(queue, folder{p, d.depth + 1})
				}
			case e.Type().IsRegular() || e.Type()&os.ModeSymlink != 0:
				out = append(out, p)
			}
		}
	}
	return out
}

// keyLikeName reports whether a file's name says it holds a key or a
// credential: its extension a key's or a key store's (.key, .p12,
// .pfx, .jks, .ppk, .p8), or a word of the kind in it (key, secret,
// private, credential, token, password, netrc, id_rsa and its kin).
func keyLikeName(name string) bool {
	n := strings.ToLower(name)
	switch filepath.Ext(n) {
	case ".key", ".p12", ".pfx", ".jks", ".jceks", ".keystore", ".ppk", ".p8", ".pk8", ".der":
		return true
	}
	for _, w := range []string{"key", "secret", "priv", "cred", "token", "passw", "netrc", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "auth"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// keyFolderFile is p, an entry of a folder keyFolderFiles reads, where
// its links lead, when it is a regular file to sniff there; "" where it
// is not.
func keyFolderFile(p string, keep []string) string {
	real, err := filepath.EvalSymlinks(p)
	if err != nil || kernelPath(real) || keptFolderHolds(keep, real) {
		return ""
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxKeyFolderFileSize {
		return ""
	}
	return real
}

// trustStore reports whether a key store a variable names may be a
// store of trusted certificates, which a step's JVM needs and which
// holds no key: one in the system's folders (Debian's
// /etc/ssl/certs/java/cacerts), one named cacerts, or one the
// variable's name calls a trust store or CA certificates.
func trustStore(name, p string) bool {
	up := strings.ToUpper(name)
	return isProgramPath(p) || filepath.Base(p) == "cacerts" || strings.Contains(up, "TRUST") || strings.Contains(up, "CACERT")
}

// sniffed is what a file's first bytes say it is.
type sniffed int

const (
	// sniffNone is no key.
	sniffNone sniffed = iota
	// sniffKey is a private key or a credential by its text.
	sniffKey
	// sniffStore is a Java or PKCS#12 key store, which may hold only
	// trusted certificates.
	sniffStore
)

// isShown reports whether p, or the file its links lead to, is one of
// shown.
func isShown(p string, shown []string) bool {
	if slices.Contains(shown, p) {
		return true
	}
	real, err := filepath.EvalSymlinks(p)
	return err == nil && slices.Contains(shown, real)
}

// keySniffBytes is how much of a file startsLikeSecret reads: a
// combined PEM (HAProxy's and many proxies', a certificate chain of a
// few KiB, then the key) holds its key past the first 4 KiB.
const keySniffBytes = 64 << 10

// secretJSON matches a JSON credential's telling keys: a cloud
// service account's or an OAuth client's private key, refresh token
// or client secret, the types of Google's credential files, and a
// container registry client's logins (Docker's config.json, Podman's
// and Skopeo's auth.json: "auths", an identity token).
var secretJSON = regexp.MustCompile(`"(?:private_key|refresh_token|client_secret|identitytoken)"\s*:|"type"\s*:\s*"(?:service_account|authorized_user|external_account|impersonated_service_account)"|"auths"\s*:\s*\{`)

// secretMarks are what a key file holds near its start: a PEM private
// key of any kind (PKCS#1 and #8, EC, OpenSSH's, an encrypted one,
// OpenPGP's "PRIVATE KEY BLOCK"), PuTTY's key, an age identity and a
// kubeconfig's inline client key.
var secretMarks = [][]byte{[]byte("PRIVATE KEY-----"), []byte("PRIVATE KEY BLOCK-----"), []byte("PuTTY-User-Key-File-"),
	[]byte("AGE-SECRET-KEY-1"), []byte("client-key-data:")}

// startsLikeSecret is what the regular file p starts as
// (looksLikeSecret). It is opened without waiting (a FIFO put in its
// place does not hold planex) and its first keySniffBytes read, its
// first maxKeyFolderFileSize where those hold a PEM block's or a
// kubeconfig's inline data (a kubeconfig of many clusters holds their
// certificates before its users' keys).
func startsLikeSecret(p string) sniffed {
	return sniffStaged(p, keySniffBytes)
}

// sniffStaged is looksLikeSecret of the regular file p's first n
// bytes, and of its first maxKeyFolderFileSize where those hold no key
// but what may come before one (sniffHead).
func sniffStaged(p string, n int64) sniffed {
	k, more := sniffHead(p, n)
	if k == sniffNone && more {
		k = sniffFile(p, maxKeyFolderFileSize)
	}
	return k
}

// folderSniffBytes is how much of a file in a folder a held variable
// names sniffFolderFile reads first: such a folder may be a
// toolchain's of thousands of files.
const folderSniffBytes = 4096

// sniffFolderFile is startsLikeSecret of a file in a folder a held
// variable names: its first folderSniffBytes, and its first
// maxKeyFolderFileSize only where those hold a PEM block's start (a
// combined PEM's certificate chain before its key) or a kubeconfig's
// inline data (its clusters' certificates, base64 without a PEM line,
// before its user's client-key-data).
func sniffFolderFile(p string) sniffed {
	return sniffStaged(p, folderSniffBytes)
}

// sniffFile is looksLikeSecret of the regular file p's first n bytes.
func sniffFile(p string, n int64) sniffed {
	k, _ := sniffHead(p, n)
	return k
}

// sniffHead is looksLikeSecret of the regular file p's first n bytes,
// and whether they hold a PEM block's start or a kubeconfig's inline
// data (-data: ), after which a key may come.
func sniffHead(p string, n int64) (sniffed, bool) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return sniffNone, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return sniffNone, false
	}
	head, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return sniffNone, false
	}
	return looksLikeSecret(head), bytes.Contains(head, []byte("-----BEGIN ")) || bytes.Contains(head, []byte("-data:"))
}

// looksLikeSecret is what a file's first bytes are: a key's
// (secretMarks, a JSON credential: secretJSON, another client's
// credential file: credentialText, base64 of any of them), a key
// store's (a Java key store, JKS's FEEDFEED or JCEKS's CECECECE, or a
// PKCS#12 store: a DER sequence whose first element is the version,
// 3), or neither.
func looksLikeSecret(head []byte) sniffed {
	if k := looksLikeSecretText(head); k != sniffNone {
		return k
	}
	if dec, ok := base64Text(head); ok {
		return looksLikeSecretText(dec)
	}
	return sniffNone
}

// looksLikeSecretText is looksLikeSecret of head as it is.
func looksLikeSecretText(head []byte) sniffed {
	for _, m := range secretMarks {
		if bytes.Contains(head, m) {
			return sniffKey
		}
	}
	if derKeyStart(head) || pgpSecretKeyStart(head) || kerberosFileStart(head) {
		return sniffKey
	}
	if bytes.HasPrefix(head, []byte{0xfe, 0xed, 0xfe, 0xed}) || bytes.HasPrefix(head, []byte{0xce, 0xce, 0xce, 0xce}) || pkcs12Start(head) {
		return sniffStore
	}
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(t) > 0 && t[0] == '{' && secretJSON.Match(head) {
		return sniffKey
	}
	if credentialText(t) {
		return sniffKey
	}
	return sniffNone
}

// Other clients' credential files by their text: a .netrc (its first
// word machine or default, comments aside: netrcStart) giving a
// password (netrcPassword), git's credential store and the like
// (a URL with a password at a line's start: credentialURL), AWS's
// shared credentials (awsSecretLine), a .pgpass line (host, port,
// database, user, password: pgpassLine), a cookie jar's header
// (cookieJarMarks), a file that is one JSON Web Token, as an OIDC
// or a service account token file is (jwtFile), and an environment
// file giving a secret (dotenvSecret, dotenvURL).
var (
	netrcStart     = regexp.MustCompile(`^(?:#[^\n]*\n|\s)*(?:machine|default)\s`)
	netrcPassword  = regexp.MustCompile(`(?:^|\s)(?:password|account)\s+\S`)
	credentialURL  = regexp.MustCompile(`(?m)^\s*[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@`)
	awsSecretLine  = regexp.MustCompile(`(?mi)^\s*(?:aws_secret_access_key|aws_session_token)\s*=`)
	pgpassLine     = regexp.MustCompile(`(?m)^[^:#\s]+:(?:\d+|\*):[^:\s]+:[^:\s]+:\S`)
	jwtFile        = regexp.MustCompile(`^eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\s*$`)
	cookieJarMarks = [][]byte{[]byte("# Netscape HTTP Cookie File"), []byte("# HTTP Cookie File")}
	// An environment file's (a .env, systemd's EnvironmentFile) line
	// giving a password, a token, a secret or an API or access key a
	// value as written (not $(…) or ${…}), or a URL with a password.
	dotenvSecret = regexp.MustCompile(`(?m)^[ \t]*(?:export[ \t]+)?[A-Za-z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY)[A-Za-z0-9_]*=["']?[^\s"'$]`)
	dotenvURL    = regexp.MustCompile(`(?m)^[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_]*=["']?[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@`)
)

// credentialText reports whether t, a file's first bytes with the
// blanks before them dropped, is another client's credential file.
func credentialText(t []byte) bool {
	for _, m := range cookieJarMarks {
		if bytes.HasPrefix(t, m) {
			return true
		}
	}
	// Each expression is tried only where the bytes it needs are there:
	// a folder's files are many, and most hold none.
	return bytes.HasPrefix(t, []byte("eyJ")) && jwtFile.Match(t) ||
		netrcStart.Match(t) && netrcPassword.Match(t) ||
		bytes.Contains(t, []byte("://")) && bytes.IndexByte(t, '@') >= 0 && credentialURL.Match(t) ||
		(bytes.Contains(t, []byte("aws_")) || bytes.Contains(t, []byte("AWS_"))) && awsSecretLine.Match(t) ||
		bytes.Count(t, []byte(":")) >= 4 && pgpassLine.Match(t) ||
		bytes.IndexByte(t, '=') >= 0 && (dotenvSecret.Match(t) || bytes.Contains(t, []byte("://")) && dotenvURL.Match(t))
}

// minBase64Key is the least base64 text base64Text decodes: a key's
// base64 (a workflow's secret written out as it is stored) is longer.
const minBase64Key = 32

// base64Text is head decoded, where head (its blanks aside) is
// standard or URL-safe base64 text of at least minBase64Key letters:
// its whole groups of four, a cut file's last part dropped.
func base64Text(head []byte) ([]byte, bool) {
	var b []byte
	for _, c := range head {
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
			b = append(b, c)
		case c == '-':
			b = append(b, '+')
		case c == '_':
			b = append(b, '/')
		case c == '=':
			// Padding ends the text.
			b = append(b, c)
		default:
			return nil, false
		}
	}
	b = bytes.TrimRight(b, "=")
	if len(b) < minBase64Key {
		return nil, false
	}
	b = b[:len(b)/4*4]
	dec := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
	n, err := base64.StdEncoding.Decode(dec, b)
	if err != nil {
		return nil, false
	}
	return dec[:n], true
}

// derKeyStart reports whether b starts as a private key in DER (a
// Java program's PKCS8EncodedKeySpec file, a key's base64 without its
// PEM lines, decoded): a SEQUENCE whose first element is a version
// INTEGER, then for PKCS#8 (version 0 or 1) the algorithm's SEQUENCE,
// for PKCS#1 (version 0) the modulus' INTEGER, for SEC1 (version 1) the
// key's OCTET STRING; or PKCS#8's encrypted form, a SEQUENCE of the
// encryption's SEQUENCE naming a PKCS#5 or PKCS#12 scheme. A
// certificate's first element is a SEQUENCE, no INTEGER.
func derKeyStart(b []byte) bool {
	n, ok := derSequenceHeader(b)
	if !ok || len(b) < n+4 {
		return false
	}
	rest := b[n:]
	if rest[0] == 0x02 && rest[1] == 0x01 {
		switch rest[2] {
		case 0x00:
			return rest[3] == 0x30 || rest[3] == 0x02
		case 0x01:
			return rest[3] == 0x30 || rest[3] == 0x04
		}
		return false
	}
	if m, ok := derSequenceHeader(rest); ok && len(rest) > m+2 {
		head := rest[m:min(len(rest), m+24)]
		return bytes.Contains(head, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x05}) ||
			bytes.Contains(head, []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x0c, 0x01})
	}
	return false
}

// pgpSecretKeyStart reports whether b starts as a binary OpenPGP
// secret key (gpg --export-secret-keys): a packet of tag 5 in the old
// format (0x94 to 0x96, by its length's size) or the new (0xc5), then
// the key's version (4 to 6), its creation time and a public key
// algorithm's number.
func pgpSecretKeyStart(b []byte) bool {
	var n int
	switch {
	case len(b) < 2:
		return false
	case b[0] >= 0x94 && b[0] <= 0x96:
		n = 1 + 1<<(b[0]-0x94)
	case b[0] == 0xc5 && b[1] < 0xc0:
		n = 2
	case b[0] == 0xc5 && b[1] < 0xe0:
		n = 3
	case b[0] == 0xc5 && b[1] == 0xff:
		n = 6
	default:
		return false
	}
	if len(b) < n+6 || b[n] < 4 || b[n] > 6 {
		return false
	}
	switch b[n+5] {
	case 1, 2, 3, 16, 17, 18, 19, 20, 22, 25, 27:
		return true
	}
	return false
}

// kerberosFileStart reports whether b starts as a Kerberos keytab
// (0x05 0x01 or 0x0502, then an entry's size and its few components and
// realm) or ticket cache (0x05 0x03, or 0x0504 with its header's small
// length), whose keys and tickets stand for the service or the person.
func kerberosFileStart(b []byte) bool {
	if len(b) < 12 || b[0] != 0x05 {
		return false
	}
	be16 := func(i int) int { return int(b[i])<<8 | int(b[i+1]) }
	switch b[1] {
	case 0x01, 0x02:
		// An entry: its size (positive), its components' count and
		// the realm's length, both small.
		return b[2]&0x80 == 0 && be16(2)|be16(4) != 0 && be16(6) >= 1 && be16(6) <= 16 && be16(8) >= 1 && be16(8) <= 255
	case 0x03:
		// The default principal: its name type and components' count.
		return be16(2) == 0 && be16(4) <= 10 && be16(6) == 0 && be16(8) <= 16
	case 0x04:
		return be16(2) <= 64 && be16(2)%4 == 0
	}
	return false
}

// derSequenceHeader is the length of the SEQUENCE's tag and length b
// starts with (a short length, or a long one of at most three bytes).
func derSequenceHeader(b []byte) (int, bool) {
	if len(b) < 2 || b[0] != 0x30 {
		return 0, false
	}
	switch l := b[1]; {
	case l < 0x80:
		return 2, true
	case l > 0x80 && l <= 0x83:
		return 2 + int(l-0x80), true
	}
	return 0, false
}

// pkcs12Start reports whether b starts as a PKCS#12 store: a DER (or
// BER, indefinite length) SEQUENCE holding first an INTEGER 3.
func pkcs12Start(b []byte) bool {
	if len(b) < 2 || b[0] != 0x30 {
		return false
	}
	n := 2 // the tag and a short length
	switch l := b[1]; {
	case l == 0x80:
	case l > 0x80 && l <= 0x84:
		n += int(l - 0x80)
	case l > 0x80:
		return false
	}
	return len(b) >= n+3 && bytes.Equal(b[n:n+3], []byte{0x02, 0x01, 0x03})
}

// overlayPaths are the paths of views.
func overlayPaths(views []FileOverlay) []string {
	out := make([]string, 0, len(views))
	for _, v := range views {
		out = append(out, v.Path)
	}
	return out
}

// systemProgram reports whether p is a compiled program (an ELF file)
// in the system's folders: an askpass variable naming /bin/true or
// /usr/bin/echo (GIT_ASKPASS=/bin/true, a CI trick to fail a prompt)
// names no secret, and covering it broke the step's /bin/true. A
// script there (one printing a token) is covered still.
func systemProgram(p string) bool {
	if !isProgramPath(p) {
		return false
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	magic := make([]byte, 4)
	_, err = io.ReadFull(f, magic)
	return err == nil && string(magic) == "\x7fELF"
}
