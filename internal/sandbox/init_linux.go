//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/planexhq/planex/internal/proc"
	"golang.org/x/sys/unix"
)

// Any binary that links this package can be the sandbox's init: planex
// itself, and the test binaries of packages that contain processes.
func init() {
	if len(os.Args) == 2 && os.Args[0] == initArg0 {
		os.Exit(initMain(os.Args[1]))
	}
}

// exitSetup is the status of a sandbox that could not be built (the
// program never ran), chosen to be unlike a shell's own statuses.
const exitSetup = 125

// initMain runs as PID 1 of the new namespaces, with full capabilities
// over them only. It builds the read-only view of the file system, then
// starts the real program in a nested user namespace, so the program has
// no capability over the mounts that contain it, and waits for it. When
// init returns, the kernel kills every process left in the namespace.
func initMain(cfgFile string) int {
	c, err := readConfig(cfgFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "planex sandbox: reading configuration: %v\n", err)
		return exitSetup
	}
	if c.OOMFloor || c.CPUGroup != "" {
		if err := awaitOOMFloor(c.Root); err != nil {
			fmt.Fprintf(os.Stderr, "planex sandbox: %v\n", err)
			return exitSetup
		}
	}
	if err := proc.CloseInherited(); err != nil {
		fmt.Fprintf(os.Stderr, "planex sandbox: closing inherited descriptors: %v\n", err)
		return exitSetup
	}
	initGroup, err := openInitCPUGroup(c.CPUGroup)
	if err != nil {
		fmt.Fprintf(os.Stderr, "planex sandbox: %v\n", err)
		return exitSetup
	}
	if err := leaveSessionKeyring(); err != nil {
		fmt.Fprintf(os.Stderr, "planex sandbox: %v\n", err)
		return exitSetup
	}
	if err := lendStdio(c); err != nil {
		fmt.Fprintf(os.Stderr, "planex sandbox: %v\n", err)
		return exitSetup
	}
	if err := buildRoot(c); err != nil {
		fmt.Fprintf(os.Stderr, "planex sandbox: %v\n", err)
		return exitSetup
	}
	capKernelCounts("/proc/sys/user", c.Counts)
	if err := capRlimits(c.Counts); err != nil {
		fmt.Fprintf(os.Stderr, "planex sandbox: %v\n", err)
		return exitSetup
	}
	if !isDir(c.Dir) {
		fmt.Fprintf(os.Stderr, "planex sandbox: the working directory %s is not visible inside the sandbox (is it under /tmp or a hidden home? make it readable)\n", c.Dir)
		return exitSetup
	}
	// Not dumpable: the program, although it maps to the same user
	// outside, can neither ptrace init nor read its /proc files.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "planex sandbox: %v\n", err)
		return exitSetup
	}
	if err := startNetwork(c.Net); err != nil {
		fmt.Fprintf(os.Stderr, "planex sandbox: %v\n", err)
		return exitSetup
	}
	cmd := &exec.Cmd{Path: c.Path, Args: c.Args, Dir: c.Dir, Env: os.Environ(),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	cmd.SysProcAttr = programAttr(c)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if err := withLimits(cmd, c.Limits); err != nil {
		fmt.Fprintf(os.Stderr, "planex sandbox: %v\n", err)
		return exitSetup
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "planex sandbox: starting %s: %v\n", c.Path, err)
		return 127
	}
	leaveProgramCPUGroup(initGroup)
	watching := watch(watchPlan{limits: c.Limits, writable: c.Writable, shmCap: machineMemory() / 8, memFloor: c.MemFloor, ptyFloor: c.PtyFloor, fileFloor: c.FileFloor, netMem: c.NetMem, epoll: c.Counts[epollWatchesName], epollRoom: c.Outer == 0, end: endStep})
	pid := cmd.Process.Pid
	go func() {
		for s := range sigs {
			syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	// Reap everything (orphans are re-parented to init) until the
	// program itself ends.
	code, err := proc.WaitReaping(pid)
	if err != nil {
		fmt.Fprintf(os.Stderr, "planex sandbox: waiting: %v\n", err)
		return exitSetup
	}
	reportLimits(os.Stderr, c.Limits, watching.finish(code))
	return code
}

// readConfig reads the configuration planex wrote for the init and
// removes the file.
func readConfig(path string) (config, error) {
	var c config
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxConfig))
	f.Close()
	os.Remove(path)
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(b, &c)
}

// buildRoot makes the mount namespace the program will see and moves
// into it: the host's file system bound read-only, fresh /tmp, /var/tmp
// and /dev/shm, hidden and masked paths (in a contained network also
// every host service's socket under /run), the writable directories, and
// a /proc that shows only this namespace's processes.
func buildRoot(c config) error {
	r := c.Root
	// Read before the host is bound under r, which adds its mounts again.
	procs := hostProcMounts()
	if err := bindHostReadOnly(r); err != nil {
		return err
	}
	if err := minimalDev(r); err != nil {
		return err
	}
	masks := c.Mask
	hide := append(append([]string(nil), c.Hide...), procs...)
	var runs []string
	if c.Net.Contained {
		masks = append(masks, runSockets(r, append(append([]string(nil), c.Mask...), c.Hide...))...)
		masks = append(masks, boundIn(r, c.Net.Bound, append(forwardedSockets(c.Net), masks...))...)
		ownSys(r)
		runs = runFolders(r)
		hide = append(hide, runs...)
	}
	binds := append(append([]string(nil), c.ReadOnly...), c.Writable...)
	early, late := splitHidden(hide, binds)
	sealLater, err := coverPlaces(r, early)
	if err != nil {
		return err
	}
	if err := bindReadOnly(r, c.ReadOnly); err != nil {
		return err
	}
	if err := bindWritable(r, c.Writable); err != nil {
		return err
	}
	if len(late) > 0 {
		// A hidden folder below a bound one (a $TMPDIR inside the
		// checkout) is covered after that bind, which would uncover it,
		// and what is granted below it is bound again.
		covered, err := coverHidden(r, late)
		if err != nil {
			return err
		}
		sealLater = append(sealLater, covered...)
		if err := bindReadOnly(r, below(c.ReadOnly, late)); err != nil {
			return err
		}
		if err := bindWritable(r, below(c.Writable, late)); err != nil {
			return err
		}
	}
	keepLinks(r, runs)
	if err := overlayFiles(r, c.Overlay); err != nil {
		return err
	}
	// Masks come last, so a read-only bind (the repository's git
	// directory) cannot uncover one (its planex folder).
	masked, err := maskPlaces(r, masks)
	if err != nil {
		return err
	}
	sealLater = append(sealLater, masked...)
	seal := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	for _, d := range sealLater {
		if err := unix.MountSetattr(-1, d, 0, &seal); err != nil {
			if removedOnHost(err) {
				continue
			}
			return fmt.Errorf("sealing %s: %w", d, err)
		}
	}
	return enterRoot(r)
}

// runFolders are the host's /run, and /var/run where it is a folder of
// its own rather than a link to /run, as they lie under r: with the
// network contained the step sees each as an empty folder (with the
// links at its top, keepLinks). Host services bind their sockets there,
// many open to every user (systemd-resolved's varlink socket resolves any
// name for the asker, so a query for <data>.attacker.example carries data
// out; nscd and avahi do the same, snapd and databases connect for
// whoever asks), and a service that binds one after the step started (a
// socket-activated one, a database restarted) was reachable: a covering
// mount found by a walk when the sandbox is built covers only what is
// there then, and connect() works on a read-only mount.
func runFolders(r string) []string {
	var out []string
	for _, d := range []string{"/run", "/var/run"} {
		if isDir(filepath.Join(r, d)) {
			out = append(out, d)
		}
	}
	return out
}

// maxRunLinks bounds the links keepLinks copies into each folder.
const maxRunLinks = 256

// keepLinks makes again, in each folder of dirs under r (a fresh cover),
// the links the host keeps at its top: a link names a place elsewhere in
// the file system, which the step sees or not as it is, and some systems
// keep their programs behind them (NixOS's /run/current-system, on
// every PATH there). Best effort: a link that cannot be made is left out.
func keepLinks(r string, dirs []string) {
	for _, d := range dirs {
		f, err := os.Open(d)
		if err != nil {
			continue
		}
		entries, _ := f.ReadDir(maxRunLinks * 4)
		f.Close()
		made := 0
		for _, e := range entries {
			if e.Type()&os.ModeSymlink == 0 || made >= maxRunLinks {
				continue
			}
			if target, err := os.Readlink(filepath.Join(d, e.Name())); err == nil {
				if os.Symlink(target, filepath.Join(r, d, e.Name())) == nil {
					made++
				}
			}
		}
	}
}

// forwardedSockets are the sockets the init relays the step's ports to.
func forwardedSockets(n netConfig) []string {
	var out []string
	for _, f := range n.Forward {
		out = append(out, f.Socket)
	}
	return out
}

// readOnlyAttr is what every read-only bind gets: no writes, no set-id,
// and no devices. The host keeps device nodes outside /dev (a build
// chroot's own /dev, made with mknod), which opened as they are on the
// host: a kernel log node of mode 0666 took the program's lines into the
// machine's log. The step's devices are those of its minimal /dev, bound
// from the host's own /dev, which these attributes do not reach.
func readOnlyAttr() *unix.MountAttr {
	return &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
}

// writableAttr is what every writable bind gets: no set-id and no
// devices (readOnlyAttr).
func writableAttr() *unix.MountAttr {
	return &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
}

// bindHostReadOnly binds the host's file system at r, read-only.
func bindHostReadOnly(r string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := unix.Mount("/", r, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding the file system: %w", err)
	}
	// One call makes the whole tree read-only, locked mounts included;
	// a flag only added can never be removed from inside.
	if err := unix.MountSetattr(-1, r, unix.AT_RECURSIVE, readOnlyAttr()); err != nil {
		return fmt.Errorf("making the file system read-only (needs Linux 5.12 or later): %w", err)
	}
	return nil
}

// ownSys shows the step's own network in /sys: the host's sysfs lists
// the host's interfaces under /sys/class/net (their names, hardware
// addresses and traffic counters, which tell what the machine's other
// jobs send) whoever reads it, and one mounted in the step's network
// namespace lists only lo. The host's cgroup tree is bound again,
// read-only, below it for runtimes that size themselves by it; the
// host's other mounts there (debugfs, tracing, bpf) are left out. Where
// the kernel refuses a new sysfs (a container whose /sys is partly
// covered) the host's stays, read-only as the rest.
func ownSys(r string) {
	sys := filepath.Join(r, "sys")
	if !isDir(sys) {
		return
	}
	if err := unix.Mount("sysfs", sys, "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return
	}
	cg := filepath.Join(sys, "fs", "cgroup")
	if !isDir("/sys/fs/cgroup") || !isDir(cg) {
		return
	}
	if err := unix.Mount("/sys/fs/cgroup", cg, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		_ = unix.Unmount(sys, unix.MNT_DETACH)
		return
	}
	if err := unix.MountSetattr(-1, cg, unix.AT_RECURSIVE, readOnlyAttr()); err != nil {
		_ = unix.Unmount(cg, unix.MNT_DETACH)
		_ = unix.Unmount(sys, unix.MNT_DETACH)
	}
}

// scratchPlaces are the step's fresh /tmp, /var/tmp and /dev/shm with the
// share of the machine's memory each may hold (percent). A tmpfs holds
// its files in memory no process owns, so the OOM killer cannot free it
// by ending the program that filled it; by default each may take half the
// machine's memory, the three together one and a half times it. /tmp gets
// a fifth, the two others a twentieth (a browser's /dev/shm needs far
// less): 30% in all, with the inodes and System V memory below about
// half, leaving the runner and planex the other half.
func scratchPlaces() []scratchPlace {
	return []scratchPlace{{"/tmp", 20}, {"/var/tmp", 5}, {"/dev/shm", 5}}
}

type scratchPlace struct {
	dir     string
	percent uint64
}

// scratchInodes is the nr_inodes option of a scratch folder holding
// percent of the machine's memory: inodes worth an eighth of that. Its
// size limit does not count them: each file (and each user xattr, which
// tmpfs counts against the same inode space) is kernel memory no process
// owns, about 1 KiB an inode by the kernel's own reckoning, and by
// default a tmpfs allows half the machine's pages as inodes, an eighth of
// its memory each. ram is the machine's memory in bytes.
func scratchInodes(ram, percent uint64) string {
	return fmt.Sprintf("nr_inodes=%d", max(ram/1024*percent/100/8, 4096))
}

// capSysVShm caps the System V shared memory of the step's own IPC
// namespace (shmall, in pages) at an eighth of the machine's memory, its
// message queues at msgQueues and its semaphores at semCount: a fresh
// namespace allows any amount of the first, 32,000 queues of 16 KiB of
// the second and about 100 GiB of the third, and all outlive
// the program that made them while the init holds the namespace, memory
// no process owns, as a tmpfs's is (scratchPlaces). procDir is the step's
// /proc; ram 0 leaves shmall as it is. Best effort: a kernel that lets
// only the host's root set them keeps its defaults.
func capSysVShm(procDir string, ram uint64) {
	kernel := filepath.Join(procDir, "sys", "kernel")
	_ = os.WriteFile(filepath.Join(kernel, "msgmni"), []byte(fmt.Sprint(msgQueues)), 0)
	// SEMMSL, SEMMNS, SEMOPM, SEMMNI: sets of up to 32000 as before, at
	// most semCount semaphores and semSets sets in all.
	_ = os.WriteFile(filepath.Join(kernel, "sem"), []byte(fmt.Sprintf("32000 %d 500 %d", semCount, semSets)), 0)
	if ram == 0 {
		return
	}
	pages := ram / 8 / uint64(os.Getpagesize())
	_ = os.WriteFile(filepath.Join(kernel, "shmall"), []byte(fmt.Sprint(pages)), 0)
}

// msgQueues is how many System V message queues a step may make (at
// most 16 KiB each, the namespace's default msgmnb): 4 MiB in all.
const msgQueues = 256

// machineMemory is the machine's memory in bytes, or 0 when it cannot be
// told (the kernel's default inode count is kept then).
func machineMemory() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// coverPlaces mounts fresh /tmp, /var/tmp and /dev/shm under r and covers
// the hidden paths. It returns the covers to seal read-only
// once the binds below them exist: until then they stay writable.
func coverPlaces(r string, hide []string) (sealLater []string, err error) {
	ram := machineMemory()
	for _, p := range scratchPlaces() {
		if !isDir(filepath.Join(r, p.dir)) {
			continue
		}
		opts := fmt.Sprintf("1777,size=%d%%", p.percent)
		if ram > 0 {
			opts += "," + scratchInodes(ram, p.percent)
		}
		if err := tmpfs(filepath.Join(r, p.dir), opts, 0); err != nil {
			return nil, err
		}
	}
	return coverHidden(r, hide)
}

// coverHidden puts an empty tmpfs over each folder of hide under r,
// returning the covers to seal read-only.
func coverHidden(r string, hide []string) (sealLater []string, err error) {
	for _, d := range hide {
		if isDir(filepath.Join(r, d)) {
			if err := tmpfs(filepath.Join(r, d), "0755", 0); err != nil {
				if removedOnHost(err) {
					continue
				}
				return nil, err
			}
			sealLater = append(sealLater, filepath.Join(r, d))
		}
	}
	return sealLater, nil
}

// splitHidden parts hide into the folders covered before the binds and
// those lying strictly below a bound folder, covered after them.
func splitHidden(hide, binds []string) (early, late []string) {
	for _, h := range hide {
		if strictlyBelowAny(h, binds) {
			late = append(late, h)
		} else {
			early = append(early, h)
		}
	}
	return early, late
}

// strictlyBelowAny reports whether p lies below one of dirs (not at it).
func strictlyBelowAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// below returns the paths of dirs at or below one of tops.
func below(dirs, tops []string) []string {
	var out []string
	for _, d := range dirs {
		for _, t := range tops {
			if d == t || strings.HasPrefix(d, strings.TrimSuffix(t, "/")+"/") {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// maskPlaces covers the masked paths under r, returning the covers to
// seal read-only.
func maskPlaces(r string, masked []string) (sealLater []string, err error) {
	for _, m := range masked {
		sealed, err := mask(filepath.Join(r, m))
		if err != nil {
			return nil, err
		}
		if sealed {
			sealLater = append(sealLater, filepath.Join(r, m))
		}
	}
	return sealLater, nil
}

// bindReadOnly binds each directory at its place under r, read-only
// (it may lie below a hidden place).
func bindReadOnly(r string, dirs []string) error {
	for _, ro := range dirs {
		target := filepath.Join(r, ro)
		if err := os.MkdirAll(target, 0o755); err != nil {
			return fmt.Errorf("preparing read-only %s: %w", ro, err)
		}
		if err := unix.Mount(ro, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("binding read-only %s: %w", ro, err)
		}
		if err := unix.MountSetattr(-1, target, unix.AT_RECURSIVE, readOnlyAttr()); err != nil {
			return fmt.Errorf("making %s read-only: %w", ro, err)
		}
	}
	return nil
}

// overlayFiles binds each overlay's source, read-only, over its path
// under r (after the read-only and writable binds, which would otherwise
// cover it), where that path is a regular file.
func overlayFiles(r string, overlays []Overlay) error {
	for _, o := range overlays {
		target := filepath.Join(r, o.Path)
		if fi, err := os.Lstat(target); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := unix.Mount(o.Source, target, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("showing %s in place of %s: %w", o.Source, o.Path, err)
		}
		if err := unix.MountSetattr(-1, target, 0, readOnlyAttr()); err != nil {
			return fmt.Errorf("making %s read-only: %w", o.Path, err)
		}
	}
	return nil
}

// bindWritable binds each directory at its place under r, writable.
func bindWritable(r string, dirs []string) error {
	for _, w := range dirs {
		target := filepath.Join(r, w)
		if err := os.MkdirAll(target, 0o755); err != nil {
			return fmt.Errorf("preparing writable %s: %w", w, err)
		}
		if err := unix.Mount(w, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("binding writable %s: %w", w, err)
		}
		if err := unix.MountSetattr(-1, target, unix.AT_RECURSIVE, writableAttr()); err != nil {
			return fmt.Errorf("making %s hold no devices: %w", w, err)
		}
	}
	return nil
}

// enterRoot mounts a /proc of this namespace's processes under r and
// makes r the root, with no path back to the host's file system. The
// /proc shows a reader only the processes it may trace (hidepid=2): not
// the init, whose entries belong to the program's own uid when planex is
// not root (its descriptors and command line were listed).
func enterRoot(r string) error {
	if err := unix.Mount("proc", filepath.Join(r, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "hidepid=2"); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	capSysVShm(filepath.Join(r, "proc"), machineMemory())
	if err := os.Chdir(r); err != nil {
		return fmt.Errorf("entering the new root: %w", err)
	}
	// pivot_root(".", ".") stacks the old root on the new one; detaching
	// it leaves no path back to the host's file system.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the old root: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return fmt.Errorf("entering /: %w", err)
	}
	return nil
}

// tmpfs mounts an empty file system on target; hidden places are mounted
// read-only so nothing can be left in them either.
func tmpfs(target, mode string, flags uintptr) error {
	if err := unix.Mount("tmpfs", target, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|flags, "mode="+mode); err != nil {
		return fmt.Errorf("mounting an empty %s: %w", target, err)
	}
	return nil
}

// mask covers a file (a socket) with /dev/null, or a directory with an
// empty tmpfs, which the caller seals read-only (sealed is true).
func mask(target string) (sealed bool, err error) {
	fi, err := os.Lstat(target)
	if err != nil {
		return false, nil // nothing there to hide
	}
	if fi.IsDir() {
		if err := tmpfs(target, "0755", 0); err != nil {
			if removedOnHost(err) {
				return false, nil
			}
			return false, err
		}
		return true, nil
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return false, nil // canonical() resolved the link; this is a dangling one
	}
	if err := unix.Mount("/dev/null", target, "", unix.MS_BIND, ""); err != nil {
		if removedOnHost(err) {
			return false, nil
		}
		return false, fmt.Errorf("masking %s: %w", target, err)
	}
	return false, nil
}

// removedOnHost reports whether err says a place the init was covering
// or sealing is gone: removed on the host after it was listed (a removal
// also detaches the mounts on it in every namespace). Nothing is left
// there to hide, so the step goes on; a contained program cannot cause
// it, as none runs yet.
func removedOnHost(err error) bool {
	return errors.Is(err, unix.ENOENT)
}

func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}
