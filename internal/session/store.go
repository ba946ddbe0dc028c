package session

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/planexhq/planex/internal/safefile"
)

// Where a repository's sessions live, relative to its git common
// directory (`git rev-parse --git-common-dir`): never in the work tree,
// where a commit could place one, and never where a contained agent can
// read or write (the sandbox covers PrivateDir).
const (
	PrivateDir = "planex"
	SessionDir = "planex/sessions"
	KeyFile    = "planex/key"
)

// LegacyDir is where planex kept sessions before: .workflow/.lite-plan
// in the work tree. A session found there is never resumed.
const LegacyDir = ".workflow/.lite-plan"

// keyLen is the size of the machine key that seals session.json.
const keyLen = 32

// ErrUntrusted means a session is refused: it lies in the work tree, is
// reached through a symlink, or its session.json was not sealed with this
// repository's key (it was copied from another clone or edited).
var ErrUntrusted = errors.New("session not trusted")

// UntrustedError names the refused session's path and why.
type UntrustedError struct {
	Path   string
	Reason string
}

func (e *UntrustedError) Error() string {
	return fmt.Sprintf("planex will not resume or approve the session at %s: %s", e.Path, e.Reason)
}

// Is makes errors.Is(err, ErrUntrusted) hold.
func (e *UntrustedError) Is(target error) bool { return target == ErrUntrusted }

// Store is one repository's sessions: <git common dir>/planex/sessions/<id>/,
// and the key that seals their session.json files, created on this
// machine with mode 0600 and never committed or pushed.
type Store struct {
	// Dir is the sessions folder.
	Dir string
	// Legacy is the work tree's old sessions folder, only ever reported.
	Legacy  string
	keyPath string
	private string
}

// StoreFor returns the sessions of the repository whose work tree and git
// common directory are given.
func StoreFor(workTree, gitCommonDir string) Store {
	return Store{
		Dir:     filepath.Join(gitCommonDir, SessionDir),
		Legacy:  filepath.Join(workTree, LegacyDir),
		keyPath: filepath.Join(gitCommonDir, KeyFile),
		private: filepath.Join(gitCommonDir, PrivateDir),
	}
}

// Private is the folder holding the sessions and the key; contained
// agents must neither read nor write it.
func (st Store) Private() string { return st.private }

// Folder returns the path of session id's folder, creating the store's
// folders first; the Action restores a session there from its state ref.
func (st Store) Folder(id string) (string, error) {
	if !validID(id) {
		return "", fmt.Errorf("session id %q is not a folder name", id)
	}
	if err := st.ensure(); err != nil {
		return "", err
	}
	return filepath.Join(st.Dir, id), nil
}

// ensure creates the private folder and the sessions folder (mode 0700)
// and checks that neither is a symlink or another user's.
func (st Store) ensure() error {
	for _, d := range []string{st.private, st.Dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating %s: %w", d, err)
		}
		if err := ownDir(d); err != nil {
			return err
		}
	}
	return nil
}

// ownDir checks that d is a real directory (not a symlink) of this user.
func ownDir(d string) error {
	fi, err := os.Lstat(d)
	if err != nil {
		return fmt.Errorf("checking %s: %w", d, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return &UntrustedError{Path: d, Reason: "it is a symlink; planex keeps sessions only in a real folder of the git directory"}
	}
	if !fi.IsDir() {
		return &UntrustedError{Path: d, Reason: "it is not a folder"}
	}
	if uid, ok := safefile.Owner(fi); ok && uid != os.Geteuid() {
		return &UntrustedError{Path: d, Reason: fmt.Sprintf("it belongs to uid %d, not to this user", uid)}
	}
	return nil
}

// key reads the machine key, creating it (mode 0600) when create is set
// and there is none yet.
func (st Store) key(create bool) ([]byte, error) {
	k, err := readKey(st.keyPath)
	if err == nil || !errors.Is(err, os.ErrNotExist) || !create {
		return k, err
	}
	if err := st.ensure(); err != nil {
		return nil, err
	}
	k = make([]byte, keyLen)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("making the session key: %w", err)
	}
	f, err := os.OpenFile(st.keyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL|safefile.NoFollow, 0o600)
	if errors.Is(err, os.ErrExist) {
		return readKey(st.keyPath) // another planex made it first
	}
	if err != nil {
		return nil, fmt.Errorf("creating the session key %s: %w", st.keyPath, err)
	}
	_, werr := f.Write([]byte(hex.EncodeToString(k) + "\n"))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(st.keyPath)
		return nil, fmt.Errorf("writing the session key %s: %w", st.keyPath, werr)
	}
	return k, nil
}

// readKey reads a key file that must be a regular file of this user that
// no one else may read. It opens without waiting: a FIFO in its place is
// refused, not waited on.
func readKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|safefile.NoFollow|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &UntrustedError{Path: path, Reason: "the session key is a symlink"}
		}
		return nil, fmt.Errorf("reading the session key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading the session key: %w", err)
	}
	// Windows keeps no such mode bits (every file reads 0666 there).
	if !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0) {
		return nil, &UntrustedError{Path: path, Reason: fmt.Sprintf("the session key must be a regular file of mode 0600 (it is %s)", fi.Mode())}
	}
	if uid, ok := safefile.Owner(fi); ok && uid != os.Geteuid() {
		return nil, &UntrustedError{Path: path, Reason: fmt.Sprintf("the session key belongs to uid %d, not to this user", uid)}
	}
	b, err := io.ReadAll(io.LimitReader(f, 4*keyLen))
	if err != nil {
		return nil, fmt.Errorf("reading the session key: %w", err)
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(k) != keyLen {
		return nil, &UntrustedError{Path: path, Reason: "the session key is not 64 hexadecimal digits"}
	}
	return k, nil
}

// seal is the HMAC of m (its Seal left out) under key, bound to the
// folder name the session lives in.
func seal(key []byte, folder string, m Meta) (string, error) {
	m.Seal = ""
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encoding session: %w", err)
	}
	h := hmac.New(sha256.New, key)
	fmt.Fprintf(h, "planex session v1\x00%s\x00", folder)
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// verify checks s's seal.
func (s *Session) verify() error {
	want, err := seal(s.key, filepath.Base(s.Path), s.Meta)
	if err != nil {
		return err
	}
	if s.Meta.Seal == "" || !hmac.Equal([]byte(want), []byte(s.Meta.Seal)) {
		return &UntrustedError{Path: s.File(MetaFile), Reason: "it was not written by planex on this machine (its seal does not match this repository's session key: copied from another clone, or edited)"}
	}
	return nil
}

// legacyError explains a session found only in the old work-tree folder.
func (st Store) legacyError(id string) error {
	p := st.Legacy
	if id != "" {
		p = filepath.Join(p, id)
	}
	return &UntrustedError{Path: p, Reason: "it lies in the work tree, where anyone who can commit to the repository can place a session; " +
		"planex now keeps its sessions in " + st.Dir + " and never resumes one from the work tree. " +
		"Start the run again (planex \"<requirement>\", or --plan with its tasks.csv after you have read it), and delete " + st.Legacy + " once you no longer need it"}
}

// maxLegacyCount is how many entries of the old work-tree sessions
// folder are counted at most.
const maxLegacyCount = 1000

// legacyCount counts the entries of the old work-tree sessions folder, up
// to maxLegacyCount, a batch at a time. A repository commits that folder
// as it likes: its entries were all read at once (a clone's million
// files held as many names). It is opened without waiting, so a link in
// its place to a FIFO is no folder, as for os.ReadDir.
func (st Store) legacyCount() int {
	f, err := os.OpenFile(st.Legacy, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	for n < maxLegacyCount {
		ents, err := f.ReadDir(min(256, maxLegacyCount-n))
		n += len(ents)
		if err != nil || len(ents) == 0 {
			break
		}
	}
	return n
}

// LegacyNote is a sentence about sessions left in the work tree's old
// folder, or "" when there are none.
func (st Store) LegacyNote() string {
	n := st.legacyCount()
	if n == 0 {
		return ""
	}
	count := fmt.Sprint(n)
	if n == maxLegacyCount {
		count = fmt.Sprintf("%d or more", n)
	}
	return fmt.Sprintf("note: the sessions in %s (%s) are never resumed: a repository can commit one there; planex keeps its sessions in %s", st.Legacy, count, st.Dir)
}
