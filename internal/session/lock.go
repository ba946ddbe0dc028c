package session

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/planexhq/planex/internal/safefile"
)

// LockFile marks a session folder as held by a running planex.
const LockFile = ".lock"

// Holder is who holds a session's lock, as its lock file says.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
}

// LockedError is a session held by another planex that is still running.
type LockedError struct {
	Session string
	Holder  Holder
}

func (e *LockedError) Error() string {
	h := e.Holder
	who := fmt.Sprintf("pid %d on %s", h.PID, orUnknown(h.Host))
	if !h.Started.IsZero() {
		who += ", since " + h.Started.Local().Format("2006-01-02 15:04:05")
	}
	return fmt.Sprintf("session %s is being run by another planex (%s); wait for it to finish or stop it, then run planex --continue %s again", e.Session, who, e.Session)
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown host"
	}
	return s
}

// Lock takes the session folder's lock for this process, or fails at
// once with a *LockedError naming the holder. The lock is a file lock on
// <folder>/.lock: the kernel drops it when its holder exits, however it
// exits (SIGKILL included), so the lock of a dead planex is taken over
// safely, never two at once; stale names that dead holder. The file says
// who holds the lock; release unlocks and removes it.
func Lock(dir string) (release func(), stale *Holder, err error) {
	p := filepath.Join(dir, LockFile)
	for range 5 {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|safefile.NoFollow, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("locking session %s: %w", filepath.Base(dir), err)
		}
		if ok, err := safefile.TryLock(f); err != nil || !ok {
			f.Close()
			if err == nil {
				return nil, nil, &LockedError{Session: filepath.Base(dir), Holder: readHolder(p)}
			}
			return nil, nil, fmt.Errorf("locking session %s: %w", filepath.Base(dir), err)
		}
		// A holder that was releasing may have removed the file after we
		// opened it: then this lock is on a file nobody else sees.
		if !samePath(f, p) {
			f.Close()
			continue
		}
		// A holder's file that is still there was left by a planex that
		// died without releasing it.
		if h := readHolder(p); h.PID != 0 {
			stale = &h
		}
		if err := writeHolder(f); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("locking session %s: %w", filepath.Base(dir), err)
		}
		return func() {
			os.Remove(p)
			safefile.Unlock(f)
			f.Close()
		}, stale, nil
	}
	return nil, nil, fmt.Errorf("locking session %s: its lock file keeps changing", filepath.Base(dir))
}

// samePath reports whether the open file f is still the file at p.
func samePath(f *os.File, p string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(p)
	return err == nil && os.SameFile(a, b)
}

func writeHolder(f *os.File) error {
	host, _ := os.Hostname()
	h := Holder{PID: os.Getpid(), Host: host, Started: time.Now().UTC()}
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(append(b, '\n'), 0); err != nil {
		return err
	}
	return f.Sync()
}

// maxHolder bounds the lock file readHolder reads: planex writes about
// 100 bytes, and the Action restores the folder from a state ref whoever
// can push may have written, lock file included.
const maxHolder = 4 << 10

// readHolder reads who holds the lock (zero values for what it cannot
// read: the holder may be writing it right now, or it is no lock file
// planex wrote).
func readHolder(p string) Holder {
	var h Holder
	f, err := safefile.OpenNoFollow(p)
	if err != nil {
		return h
	}
	defer f.Close()
	if b, err := io.ReadAll(io.LimitReader(f, maxHolder+1)); err == nil && len(b) <= maxHolder {
		_ = json.Unmarshal(b, &h)
	}
	return h
}
