package gitrepo

import (
	"context"
	"github.com/planexhq/planex/internal/gitrepo/gittest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// configFixture writes the config files of one case into dir; name ->
// content, "" content meaning the file is not written.
func configFixture(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if content == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(content, "DIR", dir)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadConfigFilesMatchesOneByOne: reading several config files with
// one git gives each file the view and the referenced files reading it
// on its own gives, for plain files, includes (nested, relative, of a
// file that is read itself too), a missing file, a name git has to
// quote, and the cases where the combined read fails and each file is
// read on its own (a syntax error, a loop of includes).
func TestReadConfigFilesMatchesOneByOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	for _, tc := range []struct {
		name    string
		files   map[string]string
		order   []string
		wantErr string // the file whose read fails, in the fallback
		apart   bool   // the combined read fails: each file is read alone
	}{
		{name: "plain", files: map[string]string{
			"a": "[user]\n\tname = A\n[remote \"o\"]\n\turl = https://tok:s3cret@example.com/r.git\n",
			"b": "[credential]\n\thelper = store --file=DIR/store\n[core]\n\tbare\n",
		}, order: []string{"a", "b"}},
		{name: "includes", files: map[string]string{
			"a":      "[user]\n\tname = A\n[include]\n\tpath = DIR/inc\n[core]\n\tautocrlf = false\n",
			"inc":    "[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n[include]\n\tpath = nested\n",
			"nested": "[http]\n\tsslKey = DIR/key.pem\n",
			"b":      "[include]\n\tpath = DIR/a\n[user]\n\temail = b@example.com\n",
		}, order: []string{"a", "b", "inc"}},
		{name: "missing and quoted", files: map[string]string{
			"a":             "[user]\n\tname = A\n",
			"with \"q\" \\": "[includeIf \"gitdir:/nowhere/\"]\n\tpath = DIR/creds\n[user]\n\temail = q@example.com\n",
			"creds":         "[http]\n\textraheader = X\n",
		}, order: []string{"a", "missing", "with \"q\" \\"}},
		{name: "syntax error", files: map[string]string{
			"a": "[user]\n\tname = A\n",
			"b": "[user\n\tname = B\n",
		}, order: []string{"a", "b"}, wantErr: "b", apart: true},
		{name: "include loop", files: map[string]string{
			"a": "[include]\n\tpath = DIR/b\n[user]\n\tname = A\n",
			"b": "[include]\n\tpath = DIR/a\n",
		}, order: []string{"a", "b"}, apart: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			configFixture(t, dir, tc.files)
			var paths []string
			for _, n := range tc.order {
				paths = append(paths, filepath.Join(dir, n))
			}
			cfgs, errs := ReadConfigFiles(ctx, r, paths)
			for i, p := range paths {
				one, oneErr := ReadConfigFile(ctx, r, p)
				if (errs[i] != nil) != (oneErr != nil) || (errs[i] != nil) != (tc.order[i] == tc.wantErr) {
					t.Errorf("%s: error %v, read alone %v", tc.order[i], errs[i], oneErr)
					continue
				}
				if oneErr != nil {
					continue
				}
				if cfgs[i].withIncludes == tc.apart {
					t.Errorf("%s: read with the others %v, want %v", tc.order[i], cfgs[i].withIncludes, !tc.apart)
				}
				if cfgs[i].Path != p || string(cfgs[i].AgentView()) != string(one.AgentView()) || cfgs[i].list != one.list {
					t.Errorf("%s: view\n%s\nread alone\n%s", tc.order[i], cfgs[i].AgentView(), one.AgentView())
				}
				refs, err := ReferencedFilesIn(ctx, r, cfgs[i], "")
				oneRefs, oneRefsErr := ReferencedFilesIn(ctx, r, one, "")
				slices.Sort(refs)
				slices.Sort(oneRefs)
				if err != nil || oneRefsErr != nil || !slices.Equal(refs, oneRefs) {
					t.Errorf("%s: referenced %v (%v), read alone %v (%v)", tc.order[i], refs, err, oneRefs, oneRefsErr)
				}
			}
		})
	}
}

// TestReadConfigFilesOneGit: three config files, one of them with an
// include, are read with one git (four before: one per file and one for
// what the file includes), and what the include names is still found.
func TestReadConfigFilesOneGit(t *testing.T) {
	// Not parallel: the counting git is put on this process's PATH.
	ctx := context.Background()
	r := newRepo(t)
	dir := t.TempDir()
	configFixture(t, dir, map[string]string{
		"inc":    "[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n",
		"global": "[credential]\n\thelper = store --file=DIR/store\n",
		"system": "[core]\n\tautocrlf = false\n",
	})
	mustGit(t, r.Root, "config", "include.path", filepath.Join(dir, "inc"))
	settle()
	// What the repository's config includes is listed once, before the
	// first call, then remembered (checkConfigFiles).
	if _, err := r.Head(ctx); err != nil {
		t.Fatal(err)
	}
	calls := gittest.CountGit(t)
	files := []string{filepath.Join(r.CommonDir, "config"), filepath.Join(dir, "global"), filepath.Join(dir, "system")}
	cfgs, errs := ReadConfigFiles(ctx, r, files)
	var refs []string
	for i, c := range cfgs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		more, err := ReferencedFilesIn(ctx, r, c, "")
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, more...)
	}
	if got := calls(); len(got) != 1 {
		t.Errorf("reading three config files started %d git processes, want 1:\n%s", len(got), strings.Join(got, "\n"))
	}
	want := []string{filepath.Join(dir, "inc"), filepath.Join(dir, "store")}
	if !slices.Equal(refs, want) {
		t.Errorf("referenced files = %v, want %v", refs, want)
	}
	if v := string(cfgs[0].AgentView()); strings.Contains(v, "extraheader") || !strings.Contains(v, "[core]") {
		t.Errorf("the repository's config as the agent sees it:\n%s", v)
	}
}
