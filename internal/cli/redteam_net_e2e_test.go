package cli

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
)

// machineAddress is one of this machine's IPv4 addresses besides
// loopback; the test skips on a machine with none.
func machineAddress(t *testing.T) string {
	t.Helper()
	if a := sandboxtest.MachineAddress(t); a != "" {
		return a
	}
	t.Skip("this machine has no address besides loopback, so no destination outside the sandbox to allow")
	return ""
}

// pathRecorder is an HTTP server that records the paths it was asked for.
type pathRecorder struct {
	mu    sync.Mutex
	paths []string
	port  int
}

func newPathRecorder(t *testing.T) *pathRecorder {
	t.Helper()
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pathRecorder{port: ln.Addr().(*net.TCPAddr).Port}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.paths = append(p.paths, r.URL.Path)
		p.mu.Unlock()
		fmt.Fprint(w, "welcome")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return p
}

// netAttack adjusts a red-team run's command: the script's placeholders
// filled in (in the fixture's copy, FAKE_DIR/T1.sh), flags before the
// requirement, more folders the agent may read.
func netAttack(t *testing.T, repl []string, args []string, read ...string) func(*exec.Cmd) {
	return func(cmd *exec.Cmd) {
		env := map[string]int{}
		for i, kv := range cmd.Env {
			k, _, _ := strings.Cut(kv, "=")
			env[k] = i
		}
		fake := strings.TrimPrefix(cmd.Env[env["FAKE_DIR"]], "FAKE_DIR=")
		script := filepath.Join(fake, "T1.sh")
		b, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(script, []byte(strings.NewReplacer(repl...).Replace(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
		i := env["PLANEX_SANDBOX_READ"]
		cmd.Env[i] += string(os.PathListSeparator) + strings.Join(read, string(os.PathListSeparator))
		last := len(cmd.Args) - 1
		cmd.Args = append(append(cmd.Args[:last:last], args...), cmd.Args[last])
	}
}

func (p *pathRecorder) got() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.paths, " ")
}

// TestRedTeamNetwork: a contained agent tries every way out of its
// network; only the host the user allowed, on its port, is reached, and
// each refusal is reported. With --network open the direct connection
// works: the rows prove the containment, not a broken probe.
func TestRedTeamNetwork(t *testing.T) {
	t.Parallel()
	other := machineAddress(t)
	probe := sandboxtest.NetProbe(t)
	loop := sandboxtest.Listen(t, "tcp", "127.0.0.1:0")
	all := sandboxtest.Listen(t, "tcp", "0.0.0.0:0")
	abstract := sandboxtest.Listen(t, "unix", "@planex-redteam-"+strconv.Itoa(os.Getpid()))
	allowed, notAllowed := newPathRecorder(t), newPathRecorder(t)
	repl := []string{"@NETPROBE@", probe, "@LOOP@", loop.Addr().String(), "@OTHER@", other,
		"@ALLPORT@", strconv.Itoa(all.Addr().(*net.TCPAddr).Port), "@ABSTRACT@", "@planex-redteam-" + strconv.Itoa(os.Getpid()),
		"@OKPORT@", strconv.Itoa(allowed.port), "@NOPORT@", strconv.Itoa(notAllowed.port)}
	readable := []string{filepath.Dir(probe)}

	t.Run("contained", func(t *testing.T) {
		r := runRedTeam(t, "network.sh", "on", netAttack(t, repl, []string{"--allow-host", net.JoinHostPort(other, strconv.Itoa(allowed.port))}, readable...))
		r.noSecretAnywhere(t)
		r.mustHaveRun(t, "a/t1.txt")
		got := map[string]string{}
		for _, line := range strings.Split(r.show(t, "a/net.txt"), "\n") {
			if k, v, ok := strings.Cut(line, ": "); ok {
				got[k] = v
			}
		}
		for _, k := range []string{"loopback", "other", "abstract"} {
			if !strings.HasPrefix(got[k], "fail:") {
				t.Errorf("direct connection to the %s destination: %q, want a failure", k, got[k])
			}
		}
		if !strings.HasPrefix(got["vsock"], "fail: socket:") {
			t.Errorf("an AF_VSOCK socket: %q, want the family refused", got["vsock"])
		}
		if !strings.HasPrefix(got["uring"], "fail: io_uring_setup:") {
			t.Errorf("an io_uring: %q, want it refused", got["uring"])
		}
		if got["requestkey"] != "fail: request_key: function not implemented" {
			t.Errorf("a dns_resolver key: %q, want request_key refused", got["requestkey"])
		}
		for _, l := range []*sandboxtest.Listener{loop, all, abstract} {
			if len(l.Got()) > 0 {
				t.Errorf("a listener outside the sandbox received %q", l.Got())
			}
		}
		if !strings.HasPrefix(got["refused"], "ok: 403") || !strings.Contains(got["refused"], "exfil.example.net:80") || !strings.Contains(got["refused"], "--allow-host") {
			t.Errorf("a host nobody allowed: %q, want a 403 naming it and --allow-host", got["refused"])
		}
		if !strings.HasPrefix(got["other-port"], "ok: 403") || notAllowed.got() != "" {
			t.Errorf("another port of the allowed host: %q (it received %q), want a 403", got["other-port"], notAllowed.got())
		}
		if got["allowed"] != "ok: 200 welcome" || got["tunnelled"] != "ok: 200 welcome" || allowed.got() != "/loot-allowed /loot-tunnelled" {
			t.Errorf("the allowed host: %q, in a tunnel %q (it received %q), want it reached once each way", got["allowed"], got["tunnelled"], allowed.got())
		}
		if !strings.HasPrefix(got["fronted"], "ok: 403") || !strings.Contains(got["fronted"], "exfil.example.net") {
			t.Errorf("another site named in the Host of a tunnelled request: %q, want a 403 naming it", got["fronted"])
		}
		report, _ := os.ReadFile(filepath.Join(r.f.sessionDir(), "context.md"))
		report = []byte(strings.ReplaceAll(string(report), `\`, "")) // Markdown escapes
		for _, refused := range []string{"exfil.example.net:80", other + ":" + strconv.Itoa(notAllowed.port), "exfil.example.net:" + strconv.Itoa(allowed.port)} {
			if !strings.Contains(r.out, refused) || !strings.Contains(string(report), refused) {
				t.Errorf("the refusal of %s is not in planex's output and context.md:\n%s\n---\n%s", refused, r.out, report)
			}
		}
	})
	t.Run("open", func(t *testing.T) {
		r := runRedTeam(t, "network-open.sh", "on", netAttack(t, repl, []string{"--network", "open"}, readable...))
		r.mustHaveRun(t, "a/t1.txt")
		if got := r.show(t, "a/net.txt"); !strings.Contains(got, "ok: pong") || !strings.Contains(strings.Join(loop.Got(), " "), "loot-open") {
			t.Errorf("with --network open the direct connection failed: %q (listener got %q)", got, loop.Got())
		}
		if n := strings.Count(r.out, "--network open"); n != 1 {
			t.Errorf("want one warning naming --network open, got %d:\n%s", n, r.out)
		}
	})
}
