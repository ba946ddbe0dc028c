package clis

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/agenttest"
	"github.com/planexhq/planex/internal/agent/clis/clistest"
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

// TestRealCLIKeyStaysWithPlanex: a contained CLI reaches its model
// through planex's gateway with a placeholder key. While it runs (at each
// model request, when the CLI and whatever it started are alive) no
// process but planex holds the real key in its environment or command
// line; a shell command the CLI runs that dumps the environment and every
// /proc/*/environ it can read finds only the placeholder; the model
// server still receives the real key.
func TestRealCLIKeyStaysWithPlanex(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc to scan for the key on this machine")
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// A key of this run's own: other test runs on the machine use
			// testKey in their CLIs' environments.
			key := fmt.Sprintf("%s-%d-%d", testKey, os.Getpid(), time.Now().UnixNano())
			var mu sync.Mutex
			var holders []string
			var dump string
			script := func(turn agenttest.Turn) agenttest.Action {
				mu.Lock()
				holders = append(holders, keyHolders(key)...)
				mu.Unlock()
				switch len(turn.Results) {
				case 0:
					if act, ok := shellTool(name, "env; cat /proc/*/environ | tr '\\0' '\\n'"); ok {
						return act
					}
				case 1:
					mu.Lock()
					dump = turn.Results[0]
					mu.Unlock()
				}
				return clistest.Answer(map[string]any{"id": "T1", "status": "completed", "findings": "done", "files_modified": []string{}, "tests_passed": true})
			}
			r := startRealWith(t, name, script, "", func(c *Config) {
				c.Env = append(c.Env, clistest.KeyEnv(name)+"="+key)
			})
			if r.agent.cfg.Contain.Sandbox == nil {
				t.Skip("no sandbox on this machine, so no contained network and no gateway")
			}
			if _, err := r.run(t, agent.Step{Phase: agent.PhaseExecute, ID: "T1", Prompt: "## Step: carry out task T1\nlook around", Dir: gitDir(t), Scope: "a/**"}); err != nil {
				t.Fatalf("run: %v\nrequests: %v", err, r.srv.Requests())
			}
			if len(r.srv.Keys()) == 0 {
				t.Fatal("the model server got no request")
			}
			for _, k := range r.srv.Keys() {
				if k != clistest.WantKey(name, key) {
					t.Errorf("the model server got key %q, want the real one swapped in", k)
				}
			}
			if len(holders) > 0 {
				t.Errorf("processes other than planex held the real key during the run: %v", holders)
			}
			if _, ok := shellTool(name, ""); ok {
				if strings.Contains(dump, key) || !strings.Contains(dump, "planex-placeholder-") {
					t.Errorf("the CLI's shell saw the real key, or no placeholder:\n%s", dump)
				}
			}
		})
	}
}
