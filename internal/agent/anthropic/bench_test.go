package anthropic

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/builtin"
	"github.com/planexhq/planex/internal/prompt"
)

// countingAPI answers Messages API requests from a script and counts the
// bytes of every request body: what a step sends the model.
type countingAPI struct {
	mu      sync.Mutex
	replies []reply
	bytes   int
	reqs    int
}

func (c *countingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes += len(b)
	c.reqs++
	if len(c.replies) == 0 {
		http.Error(w, "no more replies", http.StatusInternalServerError)
		return
	}
	rep := c.replies[0]
	c.replies = c.replies[1:]
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, rep.Body)
}

// largeRepo writes a repository of 40 packages × 100 files, so that
// list_files fills its 1000 entries as on a large project.
func largeRepo(b *testing.B) string {
	dir := b.TempDir()
	for p := 0; p < 40; p++ {
		pkg := filepath.Join(dir, "internal", fmt.Sprintf("package%02d", p))
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 100; f++ {
			body := fmt.Sprintf("package package%02d\n\n// Handler%d serves requests.\nfunc Handler%d() string {\n\treturn %q\n}\n", p, f, f, strings.Repeat("x", 40*(f%7)))
			for i := 0; i < 20; i++ {
				body += fmt.Sprintf("\n// helper %d of file %d\nfunc helper%d_%d() int { return %d }\n", i, f, f, i, i)
			}
			if err := os.WriteFile(filepath.Join(pkg, fmt.Sprintf("file%03d.go", f)), []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return dir
}

// exploreScript is an explore step as models run one: look at the tree,
// search, read two files, report (six requests, as on sympy).
func exploreScript() []reply {
	return []reply{
		message("tool_use", 100, 10, toolUse("t1", "list_files", `{"path":"."}`)),
		message("tool_use", 100, 10, toolUse("t2", "search", `{"pattern":"func Handler1[0-9]\\(","glob":"**/*.go"}`)),
		message("tool_use", 100, 10, toolUse("t3", "read_file", `{"path":"internal/package03/file010.go"}`)),
		message("tool_use", 100, 10, toolUse("t4", "list_files", `{"path":"internal/package07"}`)),
		message("tool_use", 100, 10, toolUse("t5", "read_file", `{"path":"internal/package07/file012.go"}`)),
		message("tool_use", 100, 10, toolUse("t6", "report_result",
			`{"id":"E1","status":"completed","findings":"handlers live in internal/packageNN","key_files":["internal/package03/file010.go"],"error":""}`)),
	}
}

// BenchmarkExplorePromptBytes measures the bytes an explore step sends
// the model on a large repository, now and as planex sent them before
// it elided tool outputs already seen (KeepOutputs), in the same run,
// and reports their ratio (issue #15: at most 0.5).
func BenchmarkExplorePromptBytes(b *testing.B) {
	repo := largeRepo(b)
	ps, err := prompt.Load()
	if err != nil {
		b.Fatal(err)
	}
	summary := strings.Repeat("internal/packageNN: handlers and helpers for one area of the service\n", 60)
	text, err := ps.Explore(prompt.Common{Requirement: "add rate limiting to every handler", RepoSummary: summary,
		KeyFiles: []string{"internal/package03/file010.go", "internal/package07/file012.go"}},
		agent.Angle{ID: "E1", Angle: "handlers", Description: "where handlers are", Focus: "handlers"})
	if err != nil {
		b.Fatal(err)
	}
	run := func(keep bool) (bytes, reqs int) {
		api := &countingAPI{replies: exploreScript()}
		srv := httptest.NewServer(api)
		defer srv.Close()
		p, err := New(Config{APIKey: "k", BaseURL: srv.URL, Model: "claude-sonnet-4-5"})
		if err != nil {
			b.Fatal(err)
		}
		a := builtin.New(p, builtin.Options{Name: "anthropic", Model: p.Model(), KeepOutputs: keep})
		if _, err := a.Run(context.Background(), agent.Step{Phase: agent.PhaseExplore, ID: "E1", Prompt: text, Dir: repo, Timeout: time.Minute}); err != nil {
			b.Fatal(err)
		}
		return api.bytes, api.reqs
	}
	var before, now, reqs int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before, reqs = run(true)
		now, _ = run(false)
	}
	ratio := float64(now) / float64(before)
	b.ReportMetric(float64(now)/float64(reqs), "bytes/request")
	b.ReportMetric(ratio, "ratio")
	b.Logf("explore step, %d requests: %d prompt bytes, %d when every output is sent again (ratio %.2f)", reqs, now, before, ratio)
}
