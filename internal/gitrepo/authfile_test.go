package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// TestCredentialsInFile: the extraheader settings leave the list for a
// 0600 file that done removes; the rest stay; a value with a line break
// is refused rather than written as two entries.
func TestCredentialsInFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		settings []setting
		file     string
		err      error
	}{
		{"none", []setting{{"core.pager", "cat"}}, "", nil},
		{"per URL", []setting{{"core.pager", "cat"}, {"http.https://github.com/.extraheader", `AUTHORIZATION: basic a"b\c`}},
			"[http \"https://github.com/\"]\n\textraheader = \"AUTHORIZATION: basic a\\\"b\\\\c\"\n", nil},
		{"every URL", []setting{{"http.extraHeader", "AUTHORIZATION: basic x"}}, "[http]\n\textraHeader = \"AUTHORIZATION: basic x\"\n", nil},
		{"line break", []setting{{"http.extraheader", "a\n[core]\nfsmonitor = x"}}, "", errConfigLine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, file, done, err := credentialsInFile(tc.settings)
			defer done()
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v; want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if out[0] != tc.settings[0] && tc.file == "" {
				t.Errorf("settings changed: %v", out)
			}
			if tc.file == "" {
				return
			}
			last := out[len(out)-1]
			if last.key != "include.path" || len(out) != len(tc.settings) {
				t.Fatalf("settings = %v; want the others and an include", out)
			}
			path := last.value
			if file != nil {
				// The include names git's descriptor 3, which is file.
				path = fmt.Sprintf("/proc/self/fd/%d", file.Fd())
			}
			fi, err := os.Stat(path)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("credential file %v, %v; want mode 0600", fi, err)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.file {
				t.Errorf("file = %q; want %q", b, tc.file)
			}
			done()
			if _, err := os.Stat(path); !os.IsNotExist(err) && file == nil {
				t.Errorf("the file outlived done: %v", err)
			}
			if file != nil {
				if _, err := file.Stat(); err == nil {
					t.Errorf("the descriptor outlived done")
				}
			}
		})
	}
}
