package packaging

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeGH stands in for the gh CLI: "release download" copies the files of
// $FAKE_RELEASES/<tag>/ (a missing folder is a missing release), "api --paginate
// repos/R/tags --jq F" prints the tag names listed in $FAKE_RELEASES/tags whose
// commit appears in the filter. Every call is logged with the token it saw.
const fakeGH = `#!/bin/sh
echo "gh $* host=$GH_HOST token=$GH_TOKEN" >> "$FAKE_LOG"
case "$1 $2" in
"release download")
  tag="$3"; shift 3; dir=.
  while [ $# -gt 0 ]; do
    case "$1" in --dir) dir="$2"; shift 2 ;; *) shift ;; esac
  done
  [ -d "$FAKE_RELEASES/$tag" ] || { echo "release not found" >&2; exit 1; }
  cp "$FAKE_RELEASES/$tag"/* "$dir"/
  ;;
"api --paginate")
  [ -f "$FAKE_RELEASES/tags" ] || exit 0
  while read -r sha name; do
    case "$5" in *"$sha"*) echo "$name" ;; esac
  done < "$FAKE_RELEASES/tags"
  ;;
*) echo "unexpected gh call" >&2; exit 2 ;;
esac
`

// fakeCurl fails like a missing release asset does.
const fakeCurl = `#!/bin/sh
echo "curl $*" >> "$FAKE_LOG"
exit 22
`

type installEnv struct {
	t        *testing.T
	script   string
	dir      string
	releases string
	toolDir  string
	log      string
	bin      string
}

func newInstallEnv(t *testing.T) *installEnv {
	t.Helper()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the action runs on Linux and macOS runners")
	}
	for _, tool := range []string{"bash", "tar", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	a := readAction(t)
	e := &installEnv{t: t, script: a.step(t, "install").Run, dir: t.TempDir()}
	e.releases = filepath.Join(e.dir, "releases")
	e.toolDir = filepath.Join(e.dir, "toolcache")
	e.log = filepath.Join(e.dir, "calls.log")
	e.bin = filepath.Join(e.dir, "bin")
	for _, d := range []string{e.releases, e.toolDir, e.bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeExec(t, filepath.Join(e.bin, "gh"), fakeGH)
	writeExec(t, filepath.Join(e.bin, "curl"), fakeCurl)
	return e
}

func writeExec(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// publish creates release tag with a planex_linux_amd64.tar.gz whose planex
// prints marker, and a checksums.txt (tampered when corrupt is true).
func (e *installEnv) publish(tag, marker string, corrupt bool) {
	t := e.t
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	body := []byte("#!/bin/sh\necho " + marker + "\n")
	if err := tw.WriteHeader(&tar.Header{Name: "planex", Mode: 0o755, Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(body)
	tw.Close()
	gz.Close()
	sum := sha256.Sum256(buf.Bytes())
	if corrupt {
		sum[0] ^= 0xff
	}
	dir := filepath.Join(e.releases, tag)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	checksums := hex.EncodeToString(sum[:]) + "  planex_linux_amd64.tar.gz\n" +
		strings.Repeat("0", 64) + "  planex_darwin_arm64.tar.gz\n"
	if err := os.WriteFile(filepath.Join(dir, "planex_linux_amd64.tar.gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(checksums), 0o644); err != nil {
		t.Fatal(err)
	}
}

type installResult struct {
	err     error
	stdout  string
	outputs map[string]string
	path    string // what was appended to GITHUB_PATH
	calls   string
}

// run executes the install step's script the way the runner does, with
// ref/repo/path as github.action_ref, github.action_repository, github.action_path.
func (e *installEnv) run(ref, repo, actionPath string, extra ...string) installResult {
	t := e.t
	work := t.TempDir()
	// The script may run go with this home: telemetry off, so no go process
	// is still writing under it when the test removes it.
	telemetry := filepath.Join(work, ".config", "go", "telemetry")
	if err := os.MkdirAll(telemetry, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(telemetry, "mode"), []byte("off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(work, "output")
	pathFile := filepath.Join(work, "path")
	os.Remove(e.log)
	cmd := exec.Command("bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", e.script)
	cmd.Env = append([]string{
		"PATH=" + e.bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + work,
		"RUNNER_OS=Linux",
		"RUNNER_ARCH=X64",
		"RUNNER_TEMP=" + work,
		"RUNNER_TOOL_CACHE=" + e.toolDir,
		"GITHUB_OUTPUT=" + outFile,
		"GITHUB_PATH=" + pathFile,
		"GITHUB_SERVER_URL=https://github.com",
		"PLANEX_ACTION_REF=" + ref,
		"PLANEX_ACTION_REPO=" + repo,
		"PLANEX_ACTION_PATH=" + actionPath,
		"PLANEX_DOWNLOAD_TOKEN=tok123",
		"FAKE_RELEASES=" + e.releases,
		"FAKE_LOG=" + e.log,
	}, extra...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	res := installResult{err: cmd.Run(), stdout: out.String(), outputs: map[string]string{}}
	if b, err := os.ReadFile(outFile); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				res.outputs[k] = v
			}
		}
	}
	if b, err := os.ReadFile(pathFile); err == nil {
		res.path = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(e.log); err == nil {
		res.calls = string(b)
	}
	return res
}

// ranPlanex runs the installed binary and returns what it printed.
func ranPlanex(t *testing.T, r installResult) string {
	t.Helper()
	if r.err != nil {
		t.Fatalf("install failed: %v\n%s", r.err, r.stdout)
	}
	if r.outputs["need-build"] != "false" {
		t.Fatalf("need-build = %q, want false\n%s", r.outputs["need-build"], r.stdout)
	}
	if filepath.Dir(r.outputs["path"]) != r.path {
		t.Errorf("GITHUB_PATH got %q, binary is %q", r.path, r.outputs["path"])
	}
	out, err := exec.Command(r.outputs["path"]).Output()
	if err != nil {
		t.Fatalf("installed planex: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestInstallDownloadsVerifiesAndCaches(t *testing.T) {
	e := newInstallEnv(t)
	e.publish("v1.2.3", "release-1.2.3", false)

	r := e.run("v1.2.3", "planexhq/planex", "/runner/_actions/planexhq/planex/v1.2.3")
	if got := ranPlanex(t, r); got != "release-1.2.3" {
		t.Errorf("installed binary printed %q", got)
	}
	cached := filepath.Join(e.toolDir, "planex", "v1.2.3", "linux-amd64", "planex_linux_amd64.tar.gz")
	if _, err := os.Stat(cached); r.outputs["source"] != "release" || err != nil {
		t.Errorf("source %q, cached archive: %v; want a download kept in the tool cache", r.outputs["source"], err)
	}
	if strings.HasPrefix(r.outputs["path"], e.toolDir) {
		t.Errorf("planex runs from the tool cache (%s), which another job may write", r.outputs["path"])
	}
	if !strings.Contains(r.calls, "gh release download v1.2.3 --repo planexhq/planex") ||
		!strings.Contains(r.calls, "host=github.com token=tok123") {
		t.Errorf("gh calls:\n%s", r.calls)
	}
	if r.outputs["started-at"] == "" {
		t.Error("no started-at output")
	}

	// Second run: from the tool cache, asking GitHub only for checksums.txt.
	r2 := e.run("v1.2.3", "planexhq/planex", "/runner/_actions/planexhq/planex/v1.2.3")
	if got := ranPlanex(t, r2); got != "release-1.2.3" {
		t.Errorf("cached binary printed %q", got)
	}
	if r2.outputs["source"] != "cache" || strings.Contains(r2.calls, "planex_linux_amd64") || !strings.Contains(r2.calls, "--pattern checksums.txt") {
		t.Errorf("second run: source %q, calls %q; want the cache, checked against checksums.txt", r2.outputs["source"], r2.calls)
	}
}

// TestRedTeamInstallToolCachePoisoned: on a self-hosted runner the tool
// cache outlives the job, and another workflow's job there (a fork's pull
// request's) can write it. The install step ran a cached planex whenever
// the folder held an executable and a .complete marker: a planted binary
// ran with the workflow's token and secrets. Now a cached archive runs
// only when it matches the release's checksums.txt, fetched each time;
// anything else is dropped and the release downloaded again.
func TestRedTeamInstallToolCachePoisoned(t *testing.T) {
	e := newInstallEnv(t)
	e.publish("v1.2.3", "release-1.2.3", false)
	const action = "/runner/_actions/planexhq/planex/v1.2.3"
	if got := ranPlanex(t, e.run("v1.2.3", "planexhq/planex", action)); got != "release-1.2.3" {
		t.Fatalf("first install ran %q", got)
	}
	dest := filepath.Join(e.toolDir, "planex", "v1.2.3", "linux-amd64")
	// The poisoner's archive, made as a release's is, and a bare binary.
	evil := newInstallEnv(t)
	evil.publish("v1.2.3", "poisoned", false)
	archive, err := os.ReadFile(filepath.Join(evil.releases, "v1.2.3", "planex_linux_amd64.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for name, poison := range map[string]func(){
		"a replaced archive": func() {
			if err := os.WriteFile(filepath.Join(dest, "planex_linux_amd64.tar.gz"), archive, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"a planted binary and no archive": func() {
			os.RemoveAll(dest)
			os.MkdirAll(dest, 0o755)
			writeExec(t, filepath.Join(dest, "planex"), "#!/bin/sh\necho poisoned\n")
			os.WriteFile(dest+".complete", nil, 0o644)
		},
	} {
		poison()
		r := e.run("v1.2.3", "planexhq/planex", action)
		if got := ranPlanex(t, r); got != "release-1.2.3" {
			t.Errorf("%s: the install ran %q, want the release's planex", name, got)
		}
		if r.outputs["source"] != "release" {
			t.Errorf("%s: source %q, want the release downloaded again\n%s", name, r.outputs["source"], r.stdout)
		}
		if b, err := os.ReadFile(filepath.Join(dest, "planex_linux_amd64.tar.gz")); err != nil || bytes.Equal(b, archive) {
			t.Errorf("%s: the tool cache still holds the poisoner's archive (%v)", name, err)
		}
	}
}

func TestInstallMovingTagIsNotCached(t *testing.T) {
	e := newInstallEnv(t)
	e.publish("v1", "first", false)
	r := e.run("v1", "planexhq/planex", "/runner/_actions/planexhq/planex/v1")
	if got := ranPlanex(t, r); got != "first" {
		t.Fatalf("got %q", got)
	}
	if strings.HasPrefix(r.outputs["path"], e.toolDir) {
		t.Errorf("moving tag v1 was cached at %s", r.outputs["path"])
	}
	os.RemoveAll(filepath.Join(e.releases, "v1"))
	e.publish("v1", "second", false)
	if got := ranPlanex(t, e.run("v1", "planexhq/planex", "/runner/_actions/planexhq/planex/v1")); got != "second" {
		t.Errorf("after moving v1 got %q, want the new release", got)
	}
}

func TestInstallRefusesChecksumMismatch(t *testing.T) {
	e := newInstallEnv(t)
	e.publish("v1.2.3", "tampered", true)
	r := e.run("v1.2.3", "planexhq/planex", "/runner/_actions/planexhq/planex/v1.2.3")
	if r.err == nil {
		t.Fatalf("install accepted a binary whose checksum does not match:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "refusing to run it") || r.outputs["path"] != "" || r.outputs["need-build"] != "" {
		t.Errorf("outputs %v, log:\n%s", r.outputs, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(e.toolDir, "planex", "v1.2.3")); err == nil {
		t.Error("the rejected binary reached the tool cache")
	}
}

func TestInstallFallsBackToBuild(t *testing.T) {
	cases := []struct {
		name, ref, repo, path string
		wantGH                bool
	}{
		{"uses ./", "", "", "/home/runner/work/app/app", false},
		{"no release for the branch", "main", "planexhq/planex", "/runner/_actions/planexhq/planex/main", true},
		{"commit without a tag", strings.Repeat("ab", 20), "planexhq/planex", "/runner/_actions/planexhq/planex/" + strings.Repeat("ab", 20), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newInstallEnv(t)
			e.publish("v1.2.3", "unused", false)
			r := e.run(c.ref, c.repo, c.path)
			if r.err != nil {
				t.Fatalf("%v\n%s", r.err, r.stdout)
			}
			if r.outputs["need-build"] != "true" || r.outputs["path"] != "" {
				t.Errorf("outputs %v, want need-build=true and no path", r.outputs)
			}
			if r.outputs["need-go"] != "true" && r.outputs["need-go"] != "false" {
				t.Errorf("need-go = %q", r.outputs["need-go"])
			}
			if (r.calls != "") != c.wantGH {
				t.Errorf("calls %q", r.calls)
			}
			if c.ref == "main" && strings.Count(r.calls, "curl ") != 2 {
				t.Errorf("want the public download address tried once per server (deduplicated or not):\n%s", r.calls)
			}
		})
	}
}

func TestInstallFindsReleaseFromPathOrCommit(t *testing.T) {
	e := newInstallEnv(t)
	e.publish("v2.0.0", "v2", false)
	// github.action_ref empty inside the composite action: the ref and repository
	// come from where the runner unpacked the action.
	r := e.run("", "", "/home/runner/work/_actions/planexhq/planex/v2.0.0")
	if got := ranPlanex(t, r); got != "v2" {
		t.Errorf("got %q", got)
	}
	// Wrapped in another composite action, the github context names the outer
	// action; the unpack path still names planex.
	r = e.run("v9", "someorg/wrapper", "/home/runner/work/_actions/planexhq/planex/v2.0.0")
	if got := ranPlanex(t, r); got != "v2" || strings.Contains(r.calls, "wrapper") {
		t.Errorf("got %q, calls:\n%s", got, r.calls)
	}
	// Pinned to the commit the tag points at.
	sha := strings.Repeat("c0", 20)
	if err := os.WriteFile(filepath.Join(e.releases, "tags"), []byte(sha+" v2.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(e.toolDir, "planex"))
	r = e.run(sha, "planexhq/planex", "/runner/_actions/planexhq/planex/"+sha)
	if got := ranPlanex(t, r); got != "v2" {
		t.Errorf("got %q", got)
	}
	if !strings.Contains(r.calls, "gh api --paginate repos/planexhq/planex/tags") {
		t.Errorf("calls:\n%s", r.calls)
	}
}

func TestInstallAsksForGoOnlyWhenMissing(t *testing.T) {
	e := newInstallEnv(t)
	// A directory with a "go" that reports an old version, and nothing else of Go.
	oldGo := filepath.Join(e.dir, "oldgo")
	if err := os.MkdirAll(oldGo, 0o755); err != nil {
		t.Fatal(err)
	}
	writeExec(t, filepath.Join(oldGo, "go"), "#!/bin/sh\necho go1.20.14\n")
	systemPath := "/usr/bin:/bin"
	for _, c := range []struct {
		name, path, want string
	}{
		{"no go", e.bin + ":" + systemPath, "true"},
		{"go 1.20", e.bin + ":" + oldGo + ":" + systemPath, "true"},
	} {
		r := e.run("", "", "/home/runner/work/app/app", "PATH="+c.path)
		if r.err != nil || r.outputs["need-go"] != c.want {
			t.Errorf("%s: need-go = %q, want %q (%v)\n%s", c.name, r.outputs["need-go"], c.want, r.err, r.stdout)
		}
	}
	if goBin, err := exec.LookPath("go"); err == nil {
		r := e.run("", "", "/home/runner/work/app/app", "PATH="+e.bin+":"+filepath.Dir(goBin)+":"+systemPath)
		if r.outputs["need-go"] != "false" {
			t.Errorf("with %s: need-go = %q, want false", goBin, r.outputs["need-go"])
		}
	}
}

func TestInstallRefusesOtherRunners(t *testing.T) {
	e := newInstallEnv(t)
	r := e.run("v1.2.3", "planexhq/planex", "/x", "RUNNER_OS=Windows")
	if r.err == nil || !strings.Contains(r.stdout, "Linux and macOS") {
		t.Errorf("err %v, log:\n%s", r.err, r.stdout)
	}
}

// The action's scripts pass shellcheck where it is installed (GitHub's Ubuntu
// runners have it; actionlint checks the workflows' scripts but not action.yml's).
func TestActionScriptsShellcheck(t *testing.T) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck not installed")
	}
	for _, s := range readAction(t).Runs.Steps {
		if s.Run == "" {
			continue
		}
		cmd := exec.Command(sc, "--shell=bash", "-")
		cmd.Stdin = strings.NewReader(s.Run)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("step %q: shellcheck: %v\n%s", s.ID, err, out)
		}
	}
}
