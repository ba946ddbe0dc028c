package sandbox

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits bound what one contained step may use. A zero field takes its
// default; Unlimited turns a limit off. They are set as hard resource
// limits (rlimits) on the step's processes, which can lower but never
// raise them.
type Limits struct {
	// FileSize is the largest file a process may write, in bytes
	// (RLIMIT_FSIZE): a write beyond it stops the writer with SIGXFSZ.
	FileSize int64 `json:"file_size,omitempty"`
	// Processes is how many processes and threads the step may have at
	// once (RLIMIT_NPROC, counted per user namespace): a fork beyond it
	// fails.
	Processes int64 `json:"processes,omitempty"`
	// Memory is the address space of each process, in bytes (RLIMIT_AS):
	// an allocation beyond it fails.
	Memory int64 `json:"memory,omitempty"`
	// OpenFiles is how many descriptors the step's processes may hold
	// together. The machine's file table (fs.file-max) is shared by
	// every process, and once it is full only a process with
	// CAP_SYS_ADMIN opens a file: the runner, planex's git and every
	// other user's programs get ENFILE. A per-process limit cannot bound
	// it (4096 processes of 20,000 descriptors each), so the sandbox's
	// init counts them whenever the machine's count has grown by half
	// the limit since the step started, and ends the step past it. It
	// is at most a quarter of the machine's table.
	OpenFiles int64 `json:"open_files,omitempty"`
}

// Unlimited in a field of Limits turns that limit off.
const Unlimited int64 = -1

// The defaults: generous for builds and test suites, small enough that a
// runaway step cannot fill the disk or the process table. Memory is off
// by default: an address-space limit counts reservations, not use, and
// Node.js reserves about 10 GiB for each WebAssembly instance (Gemini CLI
// and Codex start several), so no default would both let them run and
// bound anything on a runner with less memory than that.
const (
	DefaultFileSize  int64 = 2 << 30
	DefaultProcesses int64 = 4096
	DefaultMemory          = Unlimited
	DefaultOpenFiles int64 = 1 << 18
)

// The smallest limits accepted: below them the sandbox's own init, or
// any Go program (which reserves about 700 MiB of address space when it
// starts), could not run.
const (
	minFileSize  int64 = 1 << 20
	minProcesses int64 = 32
	minMemory    int64 = 1 << 30
	minOpenFiles int64 = 1024
)

// limitKind names one field of Limits; the set is closed.
type limitKind string

const (
	limitFileSize  limitKind = "file-size"
	limitProcesses limitKind = "processes"
	limitMemory    limitKind = "memory"
	limitOpenFiles limitKind = "open-files"
)

// sized reports whether k's values are sizes in bytes (K, M, G, T
// allowed) rather than counts.
func (k limitKind) sized() bool { return k == limitFileSize || k == limitMemory }

// field returns the field of l that k names, its default and its minimum.
func (l *Limits) field(k limitKind) (p *int64, def, lowest int64) {
	switch k {
	case limitFileSize:
		return &l.FileSize, DefaultFileSize, minFileSize
	case limitProcesses:
		return &l.Processes, DefaultProcesses, minProcesses
	case limitMemory:
		return &l.Memory, DefaultMemory, minMemory
	case limitOpenFiles:
		return &l.OpenFiles, DefaultOpenFiles, minOpenFiles
	}
	return nil, 0, 0
}

var limitKinds = []limitKind{limitFileSize, limitProcesses, limitMemory, limitOpenFiles}

// WithDefaults fills the zero fields of l with the defaults.
func (l Limits) WithDefaults() Limits {
	for _, k := range limitKinds {
		if p, def, _ := l.field(k); *p == 0 {
			*p = def
		}
	}
	return l
}

// ParseLimits reads a --sandbox-limits value: comma-separated name=value
// pairs, where a name is file-size, processes, memory or open-files and a value a
// count, a size with a K, M, G or T suffix (powers of 1024), or "off". An
// empty string sets nothing (the defaults).
func ParseLimits(s string) (Limits, error) {
	var l Limits
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		k := limitKind(strings.ToLower(strings.TrimSpace(name)))
		p, _, lowest := l.field(k)
		if !ok || p == nil {
			return Limits{}, fmt.Errorf("sandbox limits: %q is not name=value with a name of file-size, processes, memory, open-files", item)
		}
		n, err := parseSize(strings.TrimSpace(value), k.sized())
		if err != nil {
			return Limits{}, fmt.Errorf("sandbox limits: %s: %w", k, err)
		}
		if n != Unlimited && n < lowest {
			return Limits{}, fmt.Errorf("sandbox limits: %s=%s is below the smallest allowed, %s", k, value, formatLimit(k, lowest))
		}
		*p = n
	}
	return l, nil
}

// parseSize reads a count, or with sized a count of bytes that may end in
// K, M, G or T; "off" and "unlimited" are Unlimited.
func parseSize(v string, sized bool) (int64, error) {
	switch strings.ToLower(v) {
	case "off", "unlimited", "none":
		return Unlimited, nil
	}
	shift := 0
	if sized && v != "" {
		if i := strings.IndexByte("KMGT", upper(v[len(v)-1])); i >= 0 {
			shift = 10 * (i + 1)
			v = v[:len(v)-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive number%s or off", v, map[bool]string{true: " (K, M, G, T allowed)"}[sized])
	}
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("%q is too large", v)
	}
	return n << shift, nil
}

func upper(b byte) byte {
	if 'a' <= b && b <= 'z' {
		return b - 'a' + 'A'
	}
	return b
}

// String writes l as ParseLimits reads it.
func (l Limits) String() string {
	var parts []string
	for _, k := range limitKinds {
		if p, _, _ := l.field(k); *p != 0 {
			parts = append(parts, string(k)+"="+formatLimit(k, *p))
		}
	}
	return strings.Join(parts, ",")
}

// formatLimit writes a limit for people: sizes in the largest unit that
// divides them.
func formatLimit(k limitKind, n int64) string {
	if n == Unlimited {
		return "off"
	}
	if !k.sized() {
		return strconv.FormatInt(n, 10)
	}
	for i := 4; i >= 1; i-- {
		if unit := int64(1) << (10 * i); n%unit == 0 {
			return strconv.FormatInt(n/unit, 10) + string("KMGT"[i-1])
		}
	}
	return strconv.FormatInt(n, 10)
}

// usage is what the sandbox's init saw of a step while it ran.
type usage struct {
	// status is the program's exit status as a shell reports it.
	status int
	// tasks is the most processes and threads seen at once.
	tasks int64
	// peakMemory is the largest address space a process reached.
	peakMemory int64
	// openFiles is how many descriptors the step held when the init
	// ended it for holding more than openFilesLimit; 0 when it did not.
	openFiles, openFilesLimit int64
	// fileTableLow is true when the init ended the step because the
	// machine's file table had only fileTableLeft left after the step
	// grew it by more than openFilesLimit.
	fileTableLow  bool
	fileTableLeft int64
	// diskFull is a writable folder whose file system the step filled
	// (diskLeft left: "3 MiB", "900 inodes") when the init ended it; ""
	// when it did not.
	diskFull, diskLeft string
	// sysvPast says what System V memory the step held past its caps
	// when the init ended it; "" when it did not.
	sysvPast string
	// ptys is how many terminal descriptors the step held when the init
	// ended it for holding more than ptyLimit; 0 when it did not.
	ptys, ptyLimit int64
	// ptyPoolLow is true when the init ended the step because the
	// machine's pool of terminals had only ptyPoolLeft left after the
	// step saw it grow past what it may hold.
	ptyPoolLow  bool
	ptyPoolLeft int64
	// epollWatches is how many epoll watches the step held when the init
	// ended it for holding more than epollLimit; 0 when it did not.
	epollWatches, epollLimit int64
	// epollSpent is true when the init ended the step because its user
	// could add no more epoll watches, whoever held them.
	epollSpent bool
	// netMemProto is the protocol ("TCP", "UDP") whose memory, the
	// machine's, was netMemBytes when the init ended the step for it; ""
	// when it did not.
	netMemProto string
	netMemBytes int64
	// memLeft is the machine's memory and swap left (bytes) when the
	// init ended the step for it; 0 when it did not.
	memLeft int64
}

// epollRoom is how many epoll watches a step's user must still be able
// to add at every look of the init (epoll_linux.go): planex's and the
// runner's new sockets take one each.
const epollRoom = 64

// sigXFSZ is SIGXFSZ's number on Linux (also on the BSDs and macOS).
const sigXFSZ = 25

// limitsHit names, in sentences for people, the limits a step reached.
// A file-size stop shows as death by SIGXFSZ of the program, or of a
// command whose shell passed on its status (128+25); the others show as
// a process count at the limit (within a sixteenth: a count taken while
// processes start and end is not exact), or an address space within a
// tenth of it, while the step ran.
func limitsHit(l Limits, u usage) []string {
	var hit []string
	if l.FileSize > 0 && u.status == 128+sigXFSZ {
		hit = append(hit, fmt.Sprintf("file size limit %s hit: a process of the step was stopped writing a larger file (SIGXFSZ)", formatLimit(limitFileSize, l.FileSize)))
	}
	if l.Processes > 0 && u.tasks >= l.Processes-1-l.Processes/16 {
		hit = append(hit, fmt.Sprintf("process limit %d hit: the step could start no more processes or threads", l.Processes))
	}
	if u.openFiles > 0 {
		hit = append(hit, fmt.Sprintf("open file limit %d hit: the step's processes held %d descriptors at once (the machine's file table is every process's), and the step was ended", u.openFilesLimit, u.openFiles))
	}
	if u.fileTableLow {
		hit = append(hit, fmt.Sprintf("file table nearly full: the machine's file table (fs.file-max, every process's) had %d left after the step grew it by more than its limit of %d, files its processes' descriptors do not show (mapped into memory, or parked in flight in a Unix socket), and the step was ended", u.fileTableLeft, u.openFilesLimit))
	}
	if u.diskFull != "" {
		hit = append(hit, fmt.Sprintf("disk nearly full: the file system holding %s had %s left, and the step was ended (the runner and planex write there too)", u.diskFull, u.diskLeft))
	}
	if u.sysvPast != "" {
		hit = append(hit, "the step held "+u.sysvPast+", and was ended")
	}
	if u.memLeft > 0 {
		hit = append(hit, fmt.Sprintf("memory nearly exhausted: the machine had %d MiB of memory and swap left, and the step was ended (out of memory, the kernel ends a process of its choosing: planex or the runner, where a program lowered its OOM score)", u.memLeft>>20))
	}
	if u.ptys > 0 {
		hit = append(hit, fmt.Sprintf("pseudo-terminal limit %d hit: the step's processes held %d terminal descriptors at once (the machine's terminals, kernel.pty.max, are every container's and step's), and the step was ended", u.ptyLimit, u.ptys))
	}
	if u.ptyPoolLow {
		hit = append(hit, fmt.Sprintf("terminals nearly spent: the machine's pool (kernel.pty.max, every container's and step's) had %d left after it grew by more than the step's %d since it started, terminals its processes' descriptors do not show (parked in flight in a Unix socket), and the step was ended", u.ptyPoolLeft, u.ptyLimit))
	}
	if u.epollWatches > 0 {
		hit = append(hit, fmt.Sprintf("epoll watch limit %d hit: the step's epoll instances held %d watches (the kernel counts them per user for the whole machine, fs.epoll.max_user_watches: planex's and the runner's too), and the step was ended", u.epollLimit, u.epollWatches))
	}
	if u.epollSpent {
		hit = append(hit, fmt.Sprintf("epoll watches spent: the step's user (planex's and the runner's) had fewer than %d of its epoll watches left (fs.epoll.max_user_watches, counted per user for the whole machine), whoever held them (an instance parked in flight in a Unix socket is in no process's descriptors), and the step was ended", epollRoom))
	}
	if u.netMemProto != "" {
		hit = append(hit, fmt.Sprintf("network buffers nearly spent: the machine's %s memory (what every network namespace's sockets hold) reached %d MiB, past half of its low mark after it grew since the step started, and the step was ended (past its limit every %s socket of the machine waits: the runner's, planex's)", u.netMemProto, u.netMemBytes>>20, u.netMemProto))
	}
	if l.Memory > 0 && u.peakMemory >= l.Memory-l.Memory/10 {
		hit = append(hit, fmt.Sprintf("memory limit %s hit: a process of the step reached %s of address space, where allocations fail", formatLimit(limitMemory, l.Memory), formatLimit(limitMemory, u.peakMemory&^(1<<20-1))))
	}
	return hit
}
