package locate

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/repomap"
	"github.com/planexhq/planex/internal/repomap/repomaptest"
)

// historyRepo is the project with past commits: a fix to the projection
// whose message shares the words of a later issue, an unrelated change to
// the units, and a sweeping reformat of more files than a commit may touch
// and still say something about each.
func historyRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	repomaptest.InitRepo(t, dir, project)
	commit := func(msg string, files map[string]string) { commitFiles(t, dir, msg, files) }
	commit("Fix polar singularity near the poles\n\nLatitudes of exactly 90 degrees overflowed.", map[string]string{
		"geo/projection.py": project["geo/projection.py"] + "\n# clamp near the poles\n",
	})
	commit("Round yards in conversions", map[string]string{"geo/units.py": project["geo/units.py"] + "\n# yards\n"})
	sweep := sweeping("geo/units.py")
	sweep["geo/units.py"] = project["geo/units.py"] + "\n# poles singularity\n"
	commit("Reformat everything: polar singularity poles", sweep)
	return dir
}

// commitFiles writes files into the repository at dir and commits them.
func commitFiles(t *testing.T, dir, msg string, files map[string]string) {
	t.Helper()
	repomaptest.WriteFiles(t, dir, files)
	repomaptest.Git(t, dir, "add", "-A")
	repomaptest.Git(t, dir, "commit", "-q", "-m", msg, "--no-gpg-sign")
}

// sweeping is a change to one project file and more generated files than
// a commit may touch and still say something about each.
func sweeping(file string) map[string]string {
	sweep := map[string]string{file: project[file] + "\n# sweep\n"}
	for i := 0; i < historyMaxFiles; i++ {
		sweep[fmt.Sprintf("gen/mod%02d.py", i)] = "x = 1\n"
	}
	return sweep
}

// TestHistorySignal checks that a file changed by a past commit like the
// issue gets the history signal and its --explain line, that a sweeping
// commit lends nothing, and that the history survives the index file.
func TestHistorySignal(t *testing.T) {
	dir := historyRepo(t)
	ix, err := Open(context.Background(), dir, repomap.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.hist.commits(); got != 3 { // the sweep is left out
		t.Fatalf("commits kept = %d, want 3 (initial, fix, units)", got)
	}
	w := DefaultWeights()
	w[fHistory] = 2 // whatever the fitted weight, the signal must show
	rs, err := ix.Rank("Crash at the poles: singularity when latitude is 90", 5, Options{Weights: w})
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]Ranked{}
	for _, r := range rs {
		byPath[r.Path] = r
	}
	proj, ok := byPath["geo/projection.py"]
	if !ok || rs[0].Path != "geo/projection.py" {
		t.Fatalf("ranking %v, want geo/projection.py first", pathsOf(rs))
	}
	why := strings.Join(proj.Reasons, "\n")
	if !strings.Contains(why, "Fix polar singularity near the poles") || !strings.Contains(why, "changed by 1 past commit like") {
		t.Errorf("reasons %q do not name the past commit", proj.Reasons)
	}
	if units, ok := byPath["geo/units.py"]; ok && strings.Contains(strings.Join(units.Reasons, "\n"), "past commit") {
		t.Errorf("the sweeping commit lent units.py history: %q", units.Reasons)
	}

	// Open served the query from the file it saved; the index built in
	// memory must come back from its encoding the same.
	mem := builtIndex(t, dir)
	back, err := decodeIndex(mem.encode())
	if err != nil {
		t.Fatal(err)
	}
	sameTable(t, "history terms", &mem.hist.terms, &back.hist.terms)
	h, bh := mem.hist, back.hist
	h.terms, bh.terms = table{}, table{}
	if !reflect.DeepEqual(bh, h) {
		t.Error("history does not survive encoding")
	}
}

// TestHistoryAbsent checks that a tree outside git, or one whose history
// names no file it holds, ranks without the signal and without an error.
func TestHistoryAbsent(t *testing.T) {
	dir := t.TempDir()
	repomaptest.WriteFiles(t, dir, project)
	ix, err := Open(context.Background(), dir, repomap.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if ix.hist.commits() != 0 {
		t.Errorf("a directory outside git has %d commits", ix.hist.commits())
	}
	rs, err := ix.Rank("mercator projection of latitude is wrong", 3, Options{})
	if err != nil || len(rs) == 0 || rs[0].Path != "geo/projection.py" {
		t.Errorf("without history: %v %v", pathsOf(rs), err)
	}
	if _, err := decodeIndex(builtIndex(t, dir).encode()); err != nil {
		t.Errorf("an index without history does not decode: %v", err)
	}
}

// TestHistoryCacheFollowsHead checks that commits which leave the tree as it
// was (a change and its revert) still reach the cached index's history.
func TestHistoryCacheFollowsHead(t *testing.T) {
	dir := historyRepo(t)
	opts := repomap.Options{CacheDir: t.TempDir()}
	first, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	before := first.hist.commits()
	if again, err := Open(context.Background(), dir, opts); err != nil || !again.fromCache {
		t.Fatalf("an unchanged repository did not reuse its index: %v", err)
	}
	units := project["geo/units.py"] + "\n# poles singularity\n"
	repomaptest.WriteFiles(t, dir, map[string]string{"geo/units.py": units + "# tried\n"})
	repomaptest.Git(t, dir, "commit", "-q", "-am", "Try a units fix", "--no-gpg-sign")
	repomaptest.WriteFiles(t, dir, map[string]string{"geo/units.py": units})
	repomaptest.Git(t, dir, "commit", "-q", "-am", "Revert the units fix", "--no-gpg-sign")
	after, err := Open(context.Background(), dir, opts)
	if err == nil {
		err = waitKey(after) // the index of the last query makes way for HEAD's
	}
	if err != nil {
		t.Fatal(err)
	}
	if after.fromCache || after.hist.commits() != before+2 {
		t.Errorf("after two commits back to the same tree: from cache %v, %d commits (was %d)", after.fromCache, after.hist.commits(), before)
	}
}

// TestReadLogsSplitsOneLog: readLogs' one git log, split by parent count,
// gives the same bytes as the two logs it replaced (`--no-merges` and
// `--diff-merges=first-parent`) on a history with a root commit, a merge
// of a branch that changed files, an octopus merge and commits on both
// sides of them.
func TestReadLogsSplitsOneLog(t *testing.T) {
	t.Parallel()
	dir := historyRepo(t)
	git := func(args ...string) string { return repomaptest.Git(t, dir, args...) }
	main := strings.TrimSpace(git("rev-parse", "--abbrev-ref", "HEAD"))
	for _, b := range []string{"left", "right"} {
		git("checkout", "-q", "-b", b, main)
		commitFiles(t, dir, "Work on "+b+" (#12)", map[string]string{b + ".py": "x = 1\n"})
		git("checkout", "-q", main)
	}
	commitFiles(t, dir, "Meanwhile on main", map[string]string{"geo/units.py": project["geo/units.py"] + "\n# meanwhile\n"})
	git("merge", "-q", "--no-ff", "--no-gpg-sign", "-m", "Merge pull request #12 from left", "left")
	git("checkout", "-q", "-b", "third", main)
	commitFiles(t, dir, "Third", map[string]string{"third.py": "y = 2\n"})
	git("checkout", "-q", main)
	git("merge", "-q", "--no-ff", "--no-gpg-sign", "-m", "Octopus #13", "right", "third")
	commitFiles(t, dir, "After the merges", map[string]string{"after.py": "z = 3\n"})

	oldLog := func(merges string) string {
		out := git("-c", "core.quotepath=off", "log", "-n", "5000", merges, "--no-show-signature", "--no-renames",
			"--relative", "--format=%x00%h%x01%B%x02", "--name-only", "HEAD", "--")
		return out[strings.IndexByte(out, 0):]
	}
	hist, cited, err := readLogs(context.Background(), historySource{dir: dir, rev: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if want := oldLog("--no-merges"); string(hist) != want {
		t.Errorf("history log:\n%q\nwant (--no-merges):\n%q", hist, want)
	}
	if want := oldLog("--diff-merges=first-parent"); string(cited) != want {
		t.Errorf("cited log:\n%q\nwant (--diff-merges=first-parent):\n%q", cited, want)
	}
	if n := strings.Count(string(cited), "\x00") - strings.Count(string(hist), "\x00"); n != 2 {
		t.Errorf("the cited log has %d records more than the history, want the 2 merges", n)
	}
}
