package clis

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/agenttest"
	"github.com/planexhq/planex/internal/agent/builtin"
	"github.com/planexhq/planex/internal/agent/clis/clistest"
	"github.com/planexhq/planex/internal/agent/mcp"
	"github.com/planexhq/planex/internal/agent/mcp/mcptest"
	"github.com/planexhq/planex/internal/sandbox"
)

// These tests run the real CLIs, at the versions Tested names, against the
// scripted model servers of agenttest, contained by planex's sandbox
// wherever this machine can make one.

const testKey = "sk-planex-test-key"

// realCLI is one CLI installed and pointed at a scripted server.
type realCLI struct {
	name  string
	agent *Agent
	srv   *agenttest.Server
}

func startReal(t *testing.T, name string, script agenttest.Script, model string) *realCLI {
	t.Helper()
	return startRealWith(t, name, script, model, nil)
}

// testSandbox is the sandbox the package's tests contain their CLIs
// in, made (and probed, a contained process start) once per test binary
// instead of once per test, as planex makes one for all of a run's steps.
var testSandbox = sync.OnceValues(func() (*sandbox.Sandbox, error) {
	return sandbox.New(context.Background(), sandbox.ModeAuto)
})

// startRealWith is startReal with a last change to the agent's Config.
func startRealWith(t *testing.T, name string, script agenttest.Script, model string, change func(*Config)) *realCLI {
	t.Helper()
	pkg, _ := Tested(name)
	bin := clistest.Install(t, name, pkg.Spec())
	srv := clistest.Server(t, name, agenttest.Usage{In: 1000, Out: 100, CacheRead: 600, CacheWrite: 100}, script)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	box, err := testSandbox()
	if err != nil {
		t.Logf("running %s uncontained: %v", name, err)
	}
	env := append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		clistest.KeyEnv(name)+"="+testKey,
		"GITHUB_TOKEN=ghp_must_not_leak", "OTHER_API_KEY=other_must_not_leak")
	cfg := Config{Name: name, Model: model, BaseURL: clistest.BaseURL(name, hs.URL), Env: env,
		Contain: agent.Containment{Sandbox: box},
		// The key is found on the test's PATH, not planex's.
		LookPath: func(string) (string, error) { return filepath.Join(bin, name), nil }}
	if name != "claude" {
		// Codex and Gemini CLI report tokens only; price them.
		cfg.Price = &builtin.Price{InPerMTok: 1, OutPerMTok: 2, CacheReadPerMTok: 0.1}
	}
	if change != nil {
		change(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &realCLI{name: name, agent: a, srv: srv}
}

func gitDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# demo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (r *realCLI) run(t *testing.T, step agent.Step) (agent.Result, error) {
	t.Helper()
	if step.Timeout == 0 {
		step.Timeout = 3 * time.Minute
	}
	return r.agent.Run(context.Background(), step)
}

// shellTool is each CLI's own shell tool and its arguments, where the
// scripted model can call one directly.
func shellTool(name, command string) (agenttest.Action, bool) {
	switch name {
	case "claude":
		return agenttest.Action{Tool: "Bash", Input: map[string]any{"command": command, "description": "list the environment"}}, true
	case "gemini":
		return agenttest.Action{Tool: "run_shell_command", Input: map[string]any{"command": command, "description": "list the environment"}}, true
	}
	return agenttest.Action{}, false
}

// TestRealCLIExecuteStep: one execute step per CLI, contained, in a
// folder that ships each CLI's project configuration (repoConfigs). The
// CLI writes a file with its own edit tool, its answer becomes the
// validated result (terminal codes removed), its tokens and cost are
// recorded, the default model and the base URL are used, and the shell
// its execute steps may use sees neither planex's secrets nor the user's
// home. It reaches its model through planex's gateway with a placeholder
// key: at each model request (when the CLI and whatever it started are
// alive) no process but planex holds the real key in its environment or
// command line, the shell's dump of the environment and of every
// /proc/*/environ it can read finds only the placeholder, and the model
// server still receives the real key. And none of the hooks, MCP servers,
// key helper or notifier the folder's configuration names ran: the Claude
// and Gemini configurations do run where the CLI honours them (claude -p
// without --setting-sources user; gemini in a folder its trusted list
// names, which --skip-trust does not make it), so a CLI version that
// starts loading them fails here. (One CLI start checks what were three
// tests: this one, TestRealCLIKeyStaysWithPlanex and
// TestRealCLIRepositoryConfigRunsNothing.)
func TestRealCLIExecuteStep(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// A key of this run's own: other test runs on the machine use
			// testKey in their CLIs' environments.
			key := fmt.Sprintf("%s-%d-%d", testKey, os.Getpid(), time.Now().UnixNano())
			var mu sync.Mutex
			var holders []string
			var envDump string
			script := func(turn agenttest.Turn) agenttest.Action {
				mu.Lock()
				holders = append(holders, keyHolders(key)...)
				mu.Unlock()
				switch len(turn.Results) {
				case 0:
					return clistest.Write(name, turn, "a/hello.txt", "hello\n")
				case 1:
					if act, ok := shellTool(name, "env; echo HOME-IS=$HOME; cat /proc/*/environ | tr '\\0' '\\n'"); ok {
						return act
					}
				case 2:
					mu.Lock()
					envDump = turn.Results[1]
					mu.Unlock()
				}
				return clistest.Answer(map[string]any{"id": "T1", "status": "completed", "findings": clistest.Colour("wrote a/hello.txt") + "\a",
					"files_modified": []string{"a/hello.txt"}, "tests_passed": true})
			}
			r := startRealWith(t, name, script, "", func(c *Config) {
				c.Env = append(c.Env, clistest.KeyEnv(name)+"="+key)
			})
			dir := gitDir(t)
			for p, content := range repoConfigs {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			res, err := r.run(t, agent.Step{Phase: agent.PhaseExecute, ID: "T1", Prompt: "## Step: carry out task T1: greet\nwrite a/hello.txt",
				Dir: dir, Scope: "a/**"})
			if err != nil {
				t.Fatalf("run: %v\nrequests: %v", err, r.srv.Requests())
			}
			if b, err := os.ReadFile(filepath.Join(dir, "a", "hello.txt")); err != nil || string(b) != "hello\n" {
				t.Errorf("a/hello.txt = %q, %v", b, err)
			}
			checkRepoConfigRanNothing(t, dir)
			var er agent.ExecuteResult
			if err := agent.Decode(agent.PhaseExecute, res.Raw, &er); err != nil {
				t.Fatal(err)
			}
			if er.Findings != "wrote a/hello.txt" {
				t.Errorf("findings %q: terminal codes not removed", er.Findings)
			}
			turns := r.srv.Turns()
			wantTurns := 3
			if _, ok := shellTool(name, ""); !ok {
				wantTurns = 2
			}
			if len(turns) != wantTurns {
				t.Fatalf("%d model requests, want %d", len(turns), wantTurns)
			}
			if !strings.Contains(turns[1].Results[0], "hello.txt") {
				t.Errorf("the write tool's result does not name the file: %q", turns[1].Results[0])
			}
			for i, turn := range turns {
				if turn.Model != agent.DefaultModel(name) {
					t.Errorf("request %d used model %q, want the default %q", i, turn.Model, agent.DefaultModel(name))
				}
			}
			for _, k := range r.srv.Keys() {
				if k != clistest.WantKey(name, key) {
					t.Errorf("the model server got key %q, want the real one swapped in", k)
				}
			}
			checkUsage(t, name, res.Usage, wantTurns)
			mu.Lock()
			defer mu.Unlock()
			checkEnvDump(t, r, envDump)
			if r.agent.cfg.Contain.Sandbox == nil {
				t.Log("no sandbox on this machine, so no contained network and no gateway: the key checks are skipped")
				return
			}
			if len(holders) > 0 {
				t.Errorf("processes other than planex held the real key during the run: %v", holders)
			}
			if _, ok := shellTool(name, ""); ok && (strings.Contains(envDump, key) || !strings.Contains(envDump, "planex-placeholder-")) {
				t.Errorf("the CLI's shell saw the real key, or no placeholder:\n%s", envDump)
			}
		})
	}
}

// checkUsage: each request reads 600 of its 1000 prompt tokens from the
// cache and writes 100 to it (only Anthropic's format reports writes).
// Claude Code prices claude-sonnet-5-5 itself at $2 in, $0.10 cache read
// (half the $0.20 Anthropic publishes), $2.50 cache write, $10 out per
// million, and its own cost is kept; the others at the test's price, $1
// in, $0.10 cache read, $2 out.
func checkUsage(t *testing.T, name string, got agent.Usage, turns int) {
	t.Helper()
	want := agent.Usage{InputTokens: int64(1000 * turns), OutputTokens: int64(100 * turns), CacheReadTokens: int64(600 * turns)}
	if name == "claude" {
		want.CacheWriteTokens = int64(100 * turns)
		want.CostUSD = float64(turns) * (300*2 + 600*0.1 + 100*2.5 + 100*10) / 1e6
	} else {
		want.CostUSD = float64(turns) * (400*1 + 600*0.1 + 100*2) / 1e6
	}
	if got.InputTokens != want.InputTokens || got.OutputTokens != want.OutputTokens ||
		got.CacheReadTokens != want.CacheReadTokens || got.CacheWriteTokens != want.CacheWriteTokens ||
		got.CostUSD < want.CostUSD-1e-9 || got.CostUSD > want.CostUSD+1e-9 {
		t.Errorf("usage %+v, want %+v", got, want)
	}
}

// checkEnvDump: the shell of an execute step (where the CLI has one the
// model can call) ran, saw none of planex's secrets, and, contained, does
// not run in the user's home.
func checkEnvDump(t *testing.T, r *realCLI, envDump string) {
	t.Helper()
	if _, ok := shellTool(r.name, ""); !ok {
		return
	}
	for _, leak := range []string{"ghp_must_not_leak", "other_must_not_leak"} {
		if strings.Contains(envDump, leak) {
			t.Errorf("the CLI's shell saw a secret %q", leak)
		}
	}
	if home, err := os.UserHomeDir(); err == nil && r.agent.cfg.Contain.Sandbox != nil && strings.Contains(envDump, "HOME-IS="+home+"\n") {
		t.Errorf("the contained shell runs in the user's home %s", home)
	}
	if !strings.Contains(envDump, "HOME-IS=") {
		t.Errorf("the shell command did not run: %q", envDump)
	}
}

// TestRealCLIErrorsReachTheStep: an API error, a refusal and an answer
// without a result end up in the step's error, without terminal codes,
// and the tokens already spent are still reported.
func TestRealCLIErrorsReachTheStep(t *testing.T) {
	t.Parallel()
	// How each CLI shows a refusal: Claude Code as a refusal, Gemini CLI
	// as a blocked (safety) response, Codex not at all (no message).
	refused := map[string]string{"claude": "the model refused", "codex": "without an answer", "gemini": "blocked due to safety"}
	for _, name := range Names() {
		t.Run(name+"/api-error", func(t *testing.T) {
			t.Parallel()
			script := func(turn agenttest.Turn) agenttest.Action {
				// 400: an error no CLI retries.
				return agenttest.Action{Status: 400, Text: "bad request \x1b[31mplanex-test-400\x1b[0m"}
			}
			r := startReal(t, name, script, "")
			_, err := r.run(t, agent.Step{Phase: agent.PhasePlan, Prompt: "## Step: plan the work", Dir: gitDir(t)})
			if err == nil || !strings.Contains(err.Error(), "planex-test-400") || strings.ContainsRune(err.Error(), 0x1b) {
				t.Fatalf("error %v: want the API's message without terminal codes", err)
			}
			if !strings.HasPrefix(err.Error(), name+" agent:") {
				t.Errorf("error does not name the agent: %v", err)
			}
		})
		t.Run(name+"/refusal", func(t *testing.T) {
			t.Parallel()
			script := func(turn agenttest.Turn) agenttest.Action {
				return agenttest.Action{Refuse: true, Text: "I will not do that."}
			}
			r := startReal(t, name, script, "")
			res, err := r.run(t, agent.Step{Phase: agent.PhasePlan, Prompt: "## Step: plan the work", Dir: gitDir(t)})
			if err == nil || !strings.Contains(err.Error(), refused[name]) {
				t.Fatalf("error %v (result %s): want it to say %q", err, res.Raw, refused[name])
			}
			t.Logf("%v", err)
			if res.Usage.InputTokens == 0 {
				t.Errorf("the refused step's tokens were not reported: %+v", res.Usage)
			}
		})
		t.Run(name+"/no-result", func(t *testing.T) {
			t.Parallel()
			script := func(turn agenttest.Turn) agenttest.Action {
				return agenttest.Action{Text: "I won't plan this: \x1b[1mplanex-test-declined\x1b[0m."}
			}
			r := startReal(t, name, script, "")
			res, err := r.run(t, agent.Step{Phase: agent.PhasePlan, Prompt: "## Step: plan the work", Dir: gitDir(t)})
			if err == nil || !strings.Contains(err.Error(), "planex-test-declined") || strings.ContainsRune(err.Error(), 0x1b) {
				t.Fatalf("error %v: want the model's answer, without terminal codes", err)
			}
			t.Logf("%v", err)
			if res.Usage.InputTokens != 1000 || res.Usage.OutputTokens != 100 {
				t.Errorf("usage %+v, want the one request's 1000/100 tokens", res.Usage)
			}
		})
	}
}

// TestRealCLIConfigurationHoldsNoKey: the configuration planex writes for
// Codex and Gemini CLI names the key variable but never holds the key.
func TestRealCLIConfigurationHoldsNoKey(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"codex", "gemini"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _ := lookup(name)
			home := t.TempDir()
			env, err := c.configure(setup{phase: agent.PhaseExecute, model: "m", baseURL: "http://127.0.0.1:9/x/", home: home, keyVar: c.credentials[0]})
			if err != nil {
				t.Fatal(err)
			}
			var all strings.Builder
			filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(p)
					all.Write(b)
					if info, _ := d.Info(); info.Mode().Perm()&0o077 != 0 {
						t.Errorf("%s is readable by others: %v", p, info.Mode())
					}
				}
				return nil
			})
			if strings.Contains(all.String(), testKey) {
				t.Errorf("configuration holds the key")
			}
			joined := strings.Join(env, " ")
			switch name {
			case "codex":
				for _, want := range []string{`base_url = "http://127.0.0.1:9/x"`, `env_key = "OPENAI_API_KEY"`, `model = "m"`} {
					if !strings.Contains(all.String(), want) {
						t.Errorf("config.toml lacks %s:\n%s", want, all.String())
					}
				}
				if !strings.Contains(joined, "CODEX_HOME="+home) {
					t.Errorf("env %v", env)
				}
			case "gemini":
				var settings struct {
					Security struct {
						Auth struct {
							SelectedType string `json:"selectedType"`
						} `json:"auth"`
					} `json:"security"`
				}
				b, err := os.ReadFile(filepath.Join(home, "gemini", ".gemini", "settings.json"))
				if err != nil || json.Unmarshal(b, &settings) != nil || settings.Security.Auth.SelectedType != "gemini-api-key" {
					t.Errorf("settings.json %s: %v", b, err)
				}
				// One node process per step: Gemini CLI's launcher does not
				// start a second one.
				if !strings.Contains(joined, "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9/x") || !strings.Contains(joined, "GEMINI_CLI_HOME=") ||
					!strings.Contains(joined, "GEMINI_CLI_NO_RELAUNCH=true") {
					t.Errorf("env %v", env)
				}
			}
		})
	}
}

// TestRealCLIMCP: each CLI gets the MCP test server from planex's
// configuration, starts it inside the sandbox, offers its tool to the
// model in a read-only step and hands the model what the tool returned.
func TestRealCLIMCP(t *testing.T) {
	t.Parallel()
	bin := mcptest.BuildServer(t)
	cfg, err := mcp.Parse([]byte(mcptest.Config(bin)), "test", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var offered, result string
			script := func(turn agenttest.Turn) agenttest.Action {
				if len(turn.Results) == 0 {
					for _, tool := range turn.Tools {
						if strings.Contains(tool, "lookup_ticket") {
							offered = tool
						}
					}
					if name == "codex" {
						// Codex defers MCP tools: the model calls them from
						// its JavaScript tool, exec.
						offered = "exec → tools.mcp__tickets__lookup_ticket"
						return agenttest.Action{Tool: "exec", Input: `const r = await tools.mcp__tickets__lookup_ticket({key: "PX-7"});` + "\ntext(r);\n"}
					}
					if offered == "" {
						return clistest.Answer(map[string]any{"id": "E1", "status": "failed", "findings": "", "error": "no MCP tool"})
					}
					return agenttest.Action{Tool: offered, Input: map[string]any{"key": "PX-7"}}
				}
				result = turn.Results[0]
				return clistest.Answer(map[string]any{"id": "E1", "status": "completed", "findings": "read the ticket"})
			}
			r := startRealWith(t, name, script, "", func(c *Config) {
				c.MCP = cfg
				c.Contain.Read = append(c.Contain.Read, filepath.Dir(bin))
			})
			res, err := r.run(t, agent.Step{Phase: agent.PhaseExplore, ID: "E1", Prompt: "## Step: explore\nlook the ticket up", Dir: gitDir(t)})
			if err != nil {
				t.Fatalf("run: %v; tools offered: %v", err, r.srv.Turns()[0].Tools)
			}
			if offered == "" {
				t.Fatalf("no MCP tool offered: %v", r.srv.Turns()[0].Tools)
			}
			if !strings.Contains(result, "PX-7: Widgets must be blue (tracker)") {
				t.Errorf("the tool %s returned %q", offered, result)
			}
			var er agent.ExploreResult
			if err := agent.Decode(agent.PhaseExplore, res.Raw, &er); err != nil || er.Status != "completed" {
				t.Errorf("result %s: %v", res.Raw, err)
			}
			// Claude Code's report names no tool calls.
			if want := "[mcp__tickets__lookup_ticket]"; name != "claude" && fmt.Sprint(res.MCPCalls) != want {
				t.Errorf("MCP calls %v, want %s", res.MCPCalls, want)
			}
			t.Logf("%s offered %s", name, offered)
		})
	}
}

// TestRealCodexReadsWebSearchMode: the real Codex loads the config.toml
// planex writes, web_search = "cached" in it, and reads that key as its
// search mode: the same file with a value Codex does not know fails to
// load, naming the modes (so the key is neither ignored nor misplaced).
func TestRealCodexReadsWebSearchMode(t *testing.T) {
	t.Parallel()
	pkg, _ := Tested("codex")
	bin := clistest.Install(t, "codex", pkg.Spec())
	c, _ := lookup("codex")
	s := setup{phase: agent.PhaseExecute, model: "m", home: t.TempDir(), keyVar: "OPENAI_API_KEY"}
	env, err := c.configure(s)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(s.home, "codex", "config.toml")
	load := func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "codex"), "features", "list")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := load(); err != nil {
		t.Fatalf("codex does not load planex's config.toml: %v\n%s", err, out)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(b), `web_search = "cached"`, `web_search = "planex-unknown"`, 1)
	if changed == string(b) {
		t.Fatalf("config.toml has no web_search = \"cached\":\n%s", b)
	}
	if err := os.WriteFile(file, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := load(); err == nil || !strings.Contains(out, "planex-unknown") || !strings.Contains(out, "cached") {
		t.Errorf("codex loaded a config.toml with an unknown search mode (%v), so it does not read the key:\n%s", err, out)
	}
}
