package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrNotRegular and ErrTooLarge tell ReadRegular's refusals apart.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("file too large")
)

// ReadRegular reads the file at path when it is, once opened, a regular
// file of at most max bytes: a link is followed, but what it leads to is
// checked through the open descriptor, so a FIFO (opened without
// blocking, then refused), a device such as /dev/zero or a directory is
// refused with ErrNotRegular, and a file larger than max (or one that
// grows past it while read) with ErrTooLarge, each error naming path.
// At most max+1 bytes are ever read.
func ReadRegular(path string, max int64) ([]byte, error) {
	return readRegular(path, max, syscall.O_NONBLOCK)
}

// ReadRegularNoFollow is ReadRegular for a file planex keeps where an
// agent or a state ref may have put something else (a session folder, a
// step's folder): a symbolic link in path's last part is refused, not
// followed (where the system can tell), so no file elsewhere, however
// well-formed, is read in its place.
func ReadRegularNoFollow(path string, max int64) ([]byte, error) {
	return readRegular(path, max, noFollow)
}

func readRegular(path string, max int64, flags int) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, %w", path, modeName(fi.Mode()), ErrNotRegular)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s holds %d bytes, more than %d: %w", path, fi.Size(), max, ErrTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s holds more than %d bytes: %w", path, max, ErrTooLarge)
	}
	return data, nil
}

// modeName says what kind of file a mode is, for an error.
func modeName(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "of another kind"
}
