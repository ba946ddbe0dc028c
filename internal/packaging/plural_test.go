package packaging

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Counts people read go through internal/plural ("1 file", "2 files"):
// no format string puts a number before a plural noun it does not check.
func TestCountsArePlural(t *testing.T) {
	t.Parallel()
	bad := regexp.MustCompile(`(?:^|[^/])%d (files|phrases|past commits|retries|tries|tasks|angles)\b`)
	if !bad.MatchString(`"changed by %d past commits like"`) {
		t.Fatal("the pattern does not find what it is meant to")
	}
	root := repoRoot(t)
	for _, dir := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for n, line := range strings.Split(string(b), "\n") {
				if m := bad.FindString(line); m != "" {
					rel, _ := filepath.Rel(root, p)
					t.Errorf("%s:%d: %q says \"1 …s\" for one; use plural.Count", rel, n+1, m)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
