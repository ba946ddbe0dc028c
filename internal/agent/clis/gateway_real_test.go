package clis

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// keyHolders lists the processes other than this test's own whose
// environment or command line holds key.
func keyHolders(key string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == self {
			continue
		}
		for _, f := range []string{"environ", "cmdline"} {
			if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), f)); err == nil && bytes.Contains(b, []byte(key)) {
				cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				found = append(found, e.Name()+" ("+f+"): "+strings.ReplaceAll(string(cmd), "\x00", " "))
			}
		}
	}
	return found
}
