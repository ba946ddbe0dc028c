//go:build unix

package repomap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// TestRedTeamOpenBeneathRaceAndOddParts: an agent that keeps swapping a
// folder of its worktree for a link to a folder outside (rename over it,
// as fast as it can) while the map reads the file below it never gets the
// outside file read, by openat2 or by the part-by-part walk used where
// openat2 is refused; a FIFO where a folder should be neither blocks nor
// opens; absolute, /proc/self/root and `..` paths reach nothing outside.
// The same holds through the map's dirReader, which keeps a folder open
// across the files read in it.
func TestRedTeamOpenBeneathRaceAndOddParts(t *testing.T) {
	t.Parallel()
	const secret = "outside-secret-5c1e"
	dir, outside := t.TempDir(), t.TempDir()
	repomaptest.WriteFiles(t, dir, map[string]string{"pkg/secret.py": "inside\n"})
	repomaptest.WriteFiles(t, outside, map[string]string{"secret.py": secret + "\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := openRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(root)
	walk := func(rel string) (string, error) {
		fd, err := openPartByPart(root, rel, syscall.O_RDONLY|syscall.O_NONBLOCK)
		if err != nil {
			return "", err
		}
		defer syscall.Close(fd)
		buf := make([]byte, 256)
		n, err := syscall.Read(fd, buf)
		if n < 0 {
			n = 0
		}
		return string(buf[:n]), err
	}
	viaReadRegular := func(rel string) (string, error) {
		data, _, _, err := ReadRegular(nil, dir, rel, 1<<10)
		return string(data), err
	}
	viaDirReader := func(rd *dirReader) func(string) (string, error) {
		return func(rel string) (string, error) {
			data, _, _, err := rd.read(nil, rel, 1<<10)
			return string(data), err
		}
	}
	fresh := func(rel string) (string, error) {
		rd := newDirReader(dir)
		defer rd.close()
		return viaDirReader(rd)(rel)
	}

	// Odd parts first, through each way of opening.
	for _, rel := range []string{"fifo/x", filepath.Join(outside, "secret.py"), "/proc/self/root" + outside + "/secret.py",
		"pkg/../../" + filepath.Base(outside) + "/secret.py", "../" + filepath.Base(outside) + "/secret.py"} {
		for name, read := range map[string]func(string) (string, error){"openPartByPart": walk, "ReadRegular": viaReadRegular, "dirReader": fresh} {
			got, err := read(rel)
			if got != "" {
				t.Errorf("%s(%q) read %q (err %v); want nothing", name, rel, got, err)
			}
		}
	}

	// The race: pkg flips between the folder and a link to outside.
	link, real, aside := filepath.Join(dir, "pkg.link"), filepath.Join(dir, "pkg"), filepath.Join(dir, "pkg.real")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			os.Symlink(outside, link)
			os.Rename(real, aside)
			os.Rename(link, real) // pkg -> outside
			os.Rename(real, link)
			os.Rename(aside, real) // pkg is the folder again
		}
	}()
	// Through the map's dirReader: one made afresh for each read opens
	// the folder under the race each time; one kept for the whole race
	// keeps whichever folder it first opened, so a swap after that is
	// met by the kept descriptor (the original folder, never the link's).
	kept := newDirReader(dir)
	defer kept.close()
	readers := map[string]func(string) (string, error){"openPartByPart": walk, "ReadRegular": viaReadRegular,
		"a fresh dirReader": fresh, "a kept dirReader": viaDirReader(kept)}
	reads, inside := 0, 0
	for ctx.Err() == nil {
		for name, read := range readers {
			got, _ := read("pkg/secret.py")
			reads++
			switch got {
			case secret + "\n":
				t.Fatalf("%s read the outside file through a swapped folder", name)
			case "inside\n":
				inside++
			}
		}
	}
	<-done
	if inside == 0 {
		t.Errorf("none of %d reads saw the folder's own file: the race never let a read through", reads)
	}
	if _, err := walk("pkg/secret.py"); err != nil && !errors.Is(err, syscall.ELOOP) && !errors.Is(err, syscall.ENOENT) {
		t.Errorf("after the race: %v", err)
	}
}
