package clistest

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/agent/agenttest"
)

// Server returns the scripted model server speaking a CLI's wire format.
func Server(t testing.TB, name string, u agenttest.Usage, s agenttest.Script) *agenttest.Server {
	switch name {
	case "claude":
		return agenttest.Anthropic(t, u, s)
	case "codex":
		return agenttest.Responses(t, u, s)
	case "gemini":
		return agenttest.Gemini(t, u, s)
	}
	t.Fatalf("no scripted server for %q", name)
	return nil
}

// BaseURL is the --base-url that points a CLI at a server mounted at
// root (Codex's providers name the API's /v1 folder themselves).
func BaseURL(name, root string) string {
	if name == "codex" {
		return root + "/v1"
	}
	return root
}

// KeyEnv is the variable a CLI reads its model key from.
func KeyEnv(name string) string {
	switch name {
	case "claude":
		return "ANTHROPIC_API_KEY"
	case "codex":
		return "OPENAI_API_KEY"
	}
	return "GEMINI_API_KEY"
}

// WantKey is how the key arrives at the server: Codex sends a bearer
// token, the others the bare key.
func WantKey(name, key string) string {
	if name == "codex" {
		return "Bearer " + key
	}
	return key
}

var workdir = regexp.MustCompile(`Primary working directory: (/\S+)`)

// Write is the call with which a CLI's model creates a file through the
// CLI's own edit tool: Claude Code's Write (absolute paths), Codex's
// apply_patch (a free-form patch), Gemini CLI's write_file. A relative
// path is in the working directory.
func Write(name string, t agenttest.Turn, path, content string) agenttest.Action {
	switch name {
	case "claude":
		if !filepath.IsAbs(path) {
			dir := "."
			if m := workdir.FindStringSubmatch(t.System + "\n" + t.Prompt); m != nil {
				dir = m[1]
			}
			path = dir + "/" + path
		}
		return agenttest.Action{Tool: "Write", Input: map[string]any{"file_path": path, "content": content}}
	case "codex":
		var patch strings.Builder
		patch.WriteString("*** Begin Patch\n*** Add File: " + path + "\n")
		for _, line := range strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n") {
			patch.WriteString("+" + strings.TrimSuffix(line, "\n") + "\n")
		}
		patch.WriteString("*** End Patch\n")
		return agenttest.Action{Tool: "apply_patch", Input: patch.String()}
	}
	return agenttest.Action{Tool: "write_file", Input: map[string]any{"file_path": path, "content": content}}
}

// Task is one task the scripted model plans and carries out: it writes
// File with Content.
type Task struct {
	ID, Title, Scope, File, Content string
	Deps                            []string
}

// Run plays a model through a whole planex run: analyze proposes one
// angle, explore reports on it, plan returns Tasks, and each execute step
// writes its task's file with the CLI's own tool and then reports. Every
// text it reports is wrapped in terminal colour codes, which must never
// reach what planex stores.
type Run struct {
	CLI   string
	Tasks []Task

	mu    sync.Mutex
	steps []string
}

// Steps lists the planex steps the model was asked for, in order
// (analyze, explore E1, plan, execute T1, …), one entry per request.
func (r *Run) Steps() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.steps...)
}

// Colour wraps s in ANSI colour codes, as a CLI printing to a terminal
// would.
func Colour(s string) string { return "\x1b[32m" + s + "\x1b[0m" }

var stepLine = regexp.MustCompile(`## Step: (analyze|explore|plan|carry out task (T\d+)|review)`)

// Script is the agenttest.Script of the run.
func (r *Run) Script() agenttest.Script {
	return func(t agenttest.Turn) agenttest.Action {
		m := stepLine.FindStringSubmatch(t.Prompt)
		step := "unknown"
		if m != nil {
			step = m[1]
			if m[2] != "" {
				step = "execute " + m[2]
			}
		}
		r.mu.Lock()
		r.steps = append(r.steps, step)
		r.mu.Unlock()
		switch {
		case step == "analyze":
			return Answer(map[string]any{"type": "feature", "complexity": "Low", "angles": []any{
				map[string]any{"id": "E1", "angle": "patterns", "description": "where greetings live", "focus": Colour("text files")}}})
		case step == "explore":
			return Answer(map[string]any{"id": "E1", "status": "completed", "findings": Colour("greetings belong in their own folders"), "key_files": []string{"a/keep.txt"}})
		case step == "plan":
			var tasks []any
			for _, tk := range r.Tasks {
				deps := tk.Deps
				if deps == nil {
					deps = []string{}
				}
				tasks = append(tasks, map[string]any{"id": tk.ID, "title": tk.Title, "description": "write " + tk.File,
					"scope": tk.Scope, "test": "the file exists", "acceptance_criteria": "it holds the greeting",
					"execution_directives": "grep -q . " + tk.File, "deps": deps, "context_from": []string{"E1"}})
			}
			return Answer(map[string]any{"summary": "add greetings", "approach": "one file per task", "tasks": tasks})
		case strings.HasPrefix(step, "execute "):
			id := strings.TrimPrefix(step, "execute ")
			for _, tk := range r.Tasks {
				if tk.ID != id {
					continue
				}
				if len(t.Results) == 0 {
					return Write(r.CLI, t, tk.File, tk.Content)
				}
				return Answer(map[string]any{"id": id, "status": "completed", "findings": Colour("wrote " + tk.File),
					"files_modified": []string{tk.File}, "tests_passed": true, "acceptance_met": "yes"})
			}
		}
		return agenttest.Action{Text: "I cannot tell which planex step this is."}
	}
}

// Answer is a final message ending with the JSON result, as planex asks.
func Answer(v any) agenttest.Action {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return agenttest.Action{Text: fmt.Sprintf("Here is the result.\n```json\n%s\n```", b)}
}
