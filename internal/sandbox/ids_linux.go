//go:build linux

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Who a contained program is on the host.
//
// An ordinary user's program runs as that user: the sandbox's namespaces
// map only the user's own uid and gid, so the program can do no more than
// the user could. Root's program must not be root: a user namespace that
// maps to host root would let it open every root-owned file the mode bits
// give to the owner (/etc/shadow, device nodes). So when planex runs as
// root, the sandbox's first namespace also maps SandboxID, an
// unprivileged host uid and gid that no account has, and the program runs
// as that id with no supplementary groups. The directories the step may
// write are lent to SandboxID for the step (see lender) and given back to
// planex's own uid and gid after it.

// SandboxID is the host uid and gid a contained program runs as when
// planex runs as root: above the ranges distributions give to accounts
// and to containers (/etc/subuid, systemd's container range), below 2³¹.
const SandboxID = 2_000_000_000

// fallbackID (nobody) stands in for SandboxID where planex's own user
// namespace does not map it: root of a rootless container, whose
// namespace maps only 65536 ids.
const fallbackID = 65534

// rootProgramID is the host id root's program runs as: SandboxID when
// planex's user namespace maps it as a uid and a gid, else fallbackID.
func rootProgramID() int {
	uids, _ := os.ReadFile("/proc/self/uid_map")
	gids, _ := os.ReadFile("/proc/self/gid_map")
	if mapsID(string(uids), SandboxID) && mapsID(string(gids), SandboxID) {
		return SandboxID
	}
	return fallbackID
}

// mapsID reports whether a /proc/<pid>/uid_map (or gid_map) maps id, an
// id of the namespace it describes (the first column).
func mapsID(m string, id int) bool {
	for _, line := range strings.Split(m, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		inside, err1 := strconv.ParseInt(f[0], 10, 64)
		count, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 == nil && err2 == nil && inside <= int64(id) && int64(id) < inside+count {
			return true
		}
	}
	return false
}

// outerID is the id that stands for SandboxID in the sandbox's first user
// namespace, where the init runs as 0 (planex's own uid).
const outerID = 65534

// idPlan is how the namespaces map ids for a planex running as uid, gid.
type idPlan struct {
	uids, gids []syscall.SysProcIDMap
	// setgroups lets the init drop the supplementary groups it inherited
	// (root's); only a privileged planex may allow it.
	setgroups bool
	// outer is the init's id (uid and gid) the program is mapped to.
	outer int
	// host is the host id the program runs as and its writable
	// directories are lent to; 0 when planex is not root (nothing is
	// lent).
	host int
}

// planIDs plans the mappings for a planex running as uid, gid; host is
// the id root's program runs as (rootProgramID).
func planIDs(uid, gid, host int) idPlan {
	if uid != 0 {
		return idPlan{
			uids: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
			gids: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		}
	}
	return idPlan{
		uids:      []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: outerID, HostID: host, Size: 1}},
		gids:      []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}, {ContainerID: outerID, HostID: host, Size: 1}},
		setgroups: true,
		outer:     outerID,
		host:      host,
	}
}

// apply sets the init's mappings on attr; with setgroups it also clears
// the supplementary groups (root's group would otherwise follow the
// program, whatever its uid).
func (p idPlan) apply(attr *syscall.SysProcAttr) {
	attr.UidMappings = p.uids
	attr.GidMappings = p.gids
	attr.GidMappingsEnableSetgroups = p.setgroups
	if p.setgroups {
		attr.Credential = &syscall.Credential{Uid: 0, Gid: 0}
	}
}

// programAttr is how the init starts the program: in a nested user
// namespace that maps the program's uid and gid to c.Outer, and, when that
// is not the init's own id, switched to it; in a session of its own, so
// that it has no controlling terminal (/dev/tty opens none, and there is
// no terminal to push input into with TIOCSTI).
func programAttr(c config) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{
		Setsid:      true,
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: c.UID, HostID: c.Outer, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: c.GID, HostID: c.Outer, Size: 1}},
	}
	if c.Outer != 0 {
		attr.Credential = &syscall.Credential{Uid: uint32(c.UID), Gid: uint32(c.GID), NoSetGroups: true}
	}
	return attr
}

// lender lends writable directories to SandboxID while at least one
// contained program may write them (a step's agent and its MCP servers
// share a worktree), and gives them back when the last one ended, so no
// contained program runs while they are given back. Lending may run
// while another program holds the directory: every change is made
// through a descriptor of the inode checked (see treeWalk).
//
// Two planex processes may lend the same directory (a cache both name
// with --sandbox-write, a test's shared folder): each holds a shared
// flock on a lock file of that directory while it lends it, and gives
// the directory back only when it can take the lock exclusively, that is
// when no other process still lends it.
type lender struct {
	mu   sync.Mutex
	held map[string]*hold
	log  *slog.Logger // the Sandbox's Log
}

// hold is this process's lending of one directory: how many contained
// programs use it, and the lock file that tells other processes so.
type hold struct {
	count int
	lock  int    // descriptor of the lock file, shared-locked
	name  string // the lock file
}

// lendLockDir is where the lock files of lent directories live: a folder
// only root can enter, so no other user can hold a lock to stall planex.
// Every planex process on the machine must find the same one whatever its
// $TMPDIR (jobs of two runners, or a matrix's jobs, each with a temporary
// folder of its own, lending one --sandbox-write folder): the first to
// finish gave the folder back under the other's running program.
func lendLockDir() (string, error) {
	d := lendLockPath()
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(d)
	if err != nil {
		return "", err
	}
	if uid, ok := fileOwner(fi); !fi.IsDir() || !ok || uid != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is not a folder of mode 0700 owned by planex's user", d)
	}
	return d, nil
}

// lendLockPath is /run/planex-lend where /run is a folder (lending
// happens only as root, who may write there), /tmp/planex-lend otherwise;
// never below $TMPDIR.
func lendLockPath() string {
	if fi, err := os.Stat("/run"); err == nil && fi.IsDir() {
		return "/run/planex-lend"
	}
	return "/tmp/planex-lend"
}

// lockShared opens dir's lock file and takes a shared lock on it,
// waiting while another process gives dir back. The giver removes the
// file while it holds it exclusively, so a lock taken on a file no
// longer at its name is taken again on the new one.
func lockShared(dir string) (fd int, name string, err error) {
	ld, err := lendLockDir()
	if err != nil {
		return -1, "", fmt.Errorf("sandbox: the lending locks: %w", err)
	}
	sum := sha256.Sum256([]byte(dir))
	name = filepath.Join(ld, hex.EncodeToString(sum[:16]))
	for {
		fd, err = unix.Open(name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return -1, "", fmt.Errorf("sandbox: the lending lock of %s: %w", dir, err)
		}
		if err := unix.Flock(fd, unix.LOCK_SH); err != nil {
			unix.Close(fd)
			return -1, "", fmt.Errorf("sandbox: the lending lock of %s: %w", dir, err)
		}
		var held, named unix.Stat_t
		if unix.Fstat(fd, &held) == nil && unix.Lstat(name, &named) == nil && held.Ino == named.Ino && held.Dev == named.Dev {
			return fd, name, nil
		}
		unix.Close(fd)
	}
}

func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// lend gives dirs to host, the program's id when planex runs as root
// (with 0 it does nothing), and returns what gives them back.
func (s *Sandbox) lend(dirs []string, host int) (giveBack func(), err error) {
	uid, gid := os.Getuid(), os.Getgid()
	if host == 0 || len(dirs) == 0 {
		return func() {}, nil
	}
	to := owner{host, host}
	l := &s.lent
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = s.Log
	if l.held == nil {
		l.held = map[string]*hold{}
	}
	var done []string
	for _, d := range dirs {
		h := l.held[d]
		if h == nil {
			fd, name, err := lockShared(d)
			if err != nil {
				l.unlend(done, to, owner{uid, gid})
				return func() {}, err
			}
			h = &hold{lock: fd, name: name}
			l.held[d] = h
		}
		h.count++
		done = append(done, d)
		// Also when already held: planex (a built-in agent's file tools)
		// may have written files there since, which the program must be
		// able to change too.
		if err := chownTree(d, owner{uid, gid}, to, true); err != nil {
			l.unlend(done, to, owner{uid, gid})
			return func() {}, fmt.Errorf("sandbox: lending %s to the sandbox's uid %d: %w", d, host, err)
		}
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.unlend(done, to, owner{uid, gid})
	}, nil
}

// unlend drops one hold on each of dirs and gives back those no longer
// held. Called with l.mu held.
func (l *lender) unlend(dirs []string, lent, back owner) {
	for _, d := range dirs {
		h := l.held[d]
		h.count--
		if h.count > 0 {
			continue
		}
		delete(l.held, d)
		// Another planex process still lends d: the last one gives it
		// back.
		if err := unix.Flock(h.lock, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			unix.Close(h.lock)
			continue
		}
		// The program is gone: nothing changes the tree meanwhile. A
		// failure leaves files to the program's id, which planex's git
		// still reads (it names the worktree safe); say so.
		if err := chownTree(d, lent, back, false); err != nil {
			// err names files the program made (any bytes but / and NUL):
			// logged, never written to standard error as they are.
			log := l.log
			if log == nil {
				log = slog.Default()
			}
			log.Warn("could not give a folder back after the sandbox", "dir", d, "uid", back.uid, "err", err)
		}
		os.Remove(h.name)
		unix.Close(h.lock)
	}
}

type owner struct{ uid, gid int }

// chownTree gives every directory, regular file and symlink under root
// (root included) whose owner is from.uid to `to`, without following a
// link and without leaving root's file system. It works on descriptors
// (openat with O_NOFOLLOW, fchownat with AT_SYMLINK_NOFOLLOW), so a path
// swapped for a link during the walk leads nowhere else. With lending
// set, files with more than one link are left alone: one may be the same
// file as one outside the tree, which the program must not get.
func chownTree(root string, from, to owner, lending bool) error {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return err
	}
	if int(st.Uid) == from.uid {
		if err := unix.Fchown(fd, to.uid, to.gid); err != nil {
			unix.Close(fd)
			return err
		}
	}
	var deep string
	w := treeWalk{dev: st.Dev, from: from, to: to, lending: lending, deep: &deep}
	if err := w.dir(fd, root, 0); err != nil {
		return err
	}
	// Lending leaves a subtree below maxDepth as it was (the program
	// cannot write there); giving back says what it left to the
	// program's id, after giving back everything else.
	if deep != "" && !lending {
		return fmt.Errorf("%s: %w", deep, errTooDeep)
	}
	return nil
}

type treeWalk struct {
	dev      uint64
	from, to owner
	lending  bool
	// deep is the first directory the walk did not descend into
	// because it lies deeper than maxDepth.
	deep *string
}

// maxDepth bounds the recursion (one descriptor per level); what lies
// deeper is skipped, not a reason to stop: a tree the program or a
// commit nested deeper must not stop the walk from changing the rest,
// nor every later step from starting.
const maxDepth = 256

var errTooDeep = errors.New("directories nested too deeply; what lies below was left to the sandbox's id")

// dir changes the entries of the open directory fd (named name in
// errors), then closes it.
func (w treeWalk) dir(fd int, name string, depth int) error {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if depth > maxDepth {
		if *w.deep == "" {
			*w.deep = name
		}
		return nil
	}
	for {
		names, err := f.Readdirnames(512)
		for _, n := range names {
			if err := w.entry(int(f.Fd()), name, n, depth); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", name, err)
		}
	}
}

func (w treeWalk) entry(dirfd int, dirName, n string, depth int) error {
	path := dirName + "/" + n
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	if st.Dev != w.dev {
		return nil // another file system mounted here: not ours to change
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		sub, err := unix.Openat(dirfd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if gone(err) {
			return nil // replaced meanwhile (by a link, say): left alone
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := unix.Fstat(sub, &st); err == nil && int(st.Uid) == w.from.uid && st.Dev == w.dev {
			if err := unix.Fchown(sub, w.to.uid, w.to.gid); err != nil {
				unix.Close(sub)
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		return w.dir(sub, path, depth+1)
	case unix.S_IFREG, unix.S_IFLNK:
		return w.file(dirfd, n, path)
	}
	// Devices, sockets and fifos keep their owner.
	return nil
}

// file changes a regular file or symlink through a descriptor of its own
// (O_PATH, not following a link), checked and changed as one inode: a
// name swapped meanwhile for another file changes nothing else.
func (w treeWalk) file(dirfd int, n, path string) error {
	fd, err := unix.Openat(dirfd, n, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if gone(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	kind := st.Mode & unix.S_IFMT
	if st.Dev != w.dev || int(st.Uid) != w.from.uid || (kind != unix.S_IFREG && kind != unix.S_IFLNK) ||
		(w.lending && kind == unix.S_IFREG && st.Nlink > 1) {
		return nil
	}
	if err := unix.Fchownat(fd, "", w.to.uid, w.to.gid, unix.AT_EMPTY_PATH); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// gone reports an entry that vanished or changed kind between listing
// and opening.
func gone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR)
}

// lendStdio gives the anonymous pipes the program's standard streams are
// to the program's id, so that it may reopen them as /dev/stdout or
// /proc/self/fd/1 as any program may reopen its own pipes: planex made
// them as root, and a pipe is reopened with its owner's permission.
// Terminals and named pipes, which are the host's, keep their owners.
func lendStdio(c config) error {
	if c.Outer == 0 {
		return nil
	}
	for fd := 0; fd <= 2; fd++ {
		var fs unix.Statfs_t
		if err := unix.Fstatfs(fd, &fs); err != nil || fs.Type != unix.PIPEFS_MAGIC {
			continue
		}
		if err := unix.Fchown(fd, c.Outer, c.Outer); err != nil {
			return fmt.Errorf("giving the program its standard stream %d: %w", fd, err)
		}
	}
	return nil
}
