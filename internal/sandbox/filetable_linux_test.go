//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRedTeamMappedFilesFillTheTable: the open-file guard counts the
// descriptors of the step's processes, but a file mapped into memory
// (mmap) stays open after its descriptor is closed, in the machine's
// file table (fs.file-max, every process's: once full only root opens a
// file) and in no descriptor table. One process maps up to
// vm.max_map_count (65530) files so, and a step may start thousands. The
// program maps 30,000 files and closes their descriptors, against an
// open-file limit of 1024 and a floor of the machine's table the test
// sets 10,000 below what is left (not to fill this machine's): the init
// must end the step.
func TestRedTeamMappedFilesFillTheTable(t *testing.T) {
	t.Parallel()
	fileMax := readFirstInt("/proc/sys/fs/file-max")
	left := fileMax - readFirstInt("/proc/sys/fs/file-nr")
	if fileMax <= 0 || left < 100_000 {
		t.Skipf("the machine's file table has %d of %d left; the test maps 30,000", left, fileMax)
	}
	s := newSandbox(t)
	s.fileFloor = left - 10_000
	work := t.TempDir()
	p := Policy{Writable: []string{work}, ReadOnly: []string{filepath.Dir(os.Args[0])}, Limits: Limits{OpenFiles: 1024}}
	out, err := run(t, s, p, work, []string{"PLANEX_COUNTS_PROBE=mapfiles:30000"}, os.Args[0]+" -test.run=^TestMachineCountsProbeHelper$")
	if !strings.Contains(out, "mapped: ") && !strings.Contains(out, "file table nearly full") {
		t.Fatalf("the probe did not run (%v):\n%s", err, out)
	}
	if strings.Contains(out, "held to the end") {
		t.Errorf("the program held files mapped past the table's floor to its end (%v):\n%s", err, out)
	}
	if !strings.Contains(out, "file table nearly full") {
		t.Errorf("the step was not ended for the files it mapped, or said nothing (%v):\n%s", err, out)
	}
}

// mapFiles is the program of TestRedTeamMappedFilesFillTheTable
// (TestMachineCountsProbeHelper's "mapfiles:N"): it opens a file of its
// working folder n times, maps a page of each opening and closes the
// descriptor, then holds the mappings up to ten seconds and says "held
// to the end".
func mapFiles(n int) {
	name := "mapped"
	if err := os.WriteFile(name, make([]byte, 4096), 0o644); err != nil {
		fmt.Printf("mapped: 0, then %v\n", err)
		return
	}
	var maps [][]byte
	var err error
	for len(maps) < n {
		var fd int
		if fd, err = unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			break
		}
		var m []byte
		m, err = unix.Mmap(fd, 0, 4096, unix.PROT_READ, unix.MAP_SHARED)
		unix.Close(fd)
		if err != nil {
			break
		}
		maps = append(maps, m)
	}
	fmt.Printf("mapped: %d, then %v\n", len(maps), err)
	os.Stdout.Sync()
	time.Sleep(10 * time.Second)
	fmt.Println("held to the end")
}
