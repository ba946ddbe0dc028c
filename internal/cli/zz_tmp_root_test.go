package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

func TestTmpLocateCmd(t *testing.T) {
	cmd := newLocateCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--repo", "../..", "--top", "3", "--explain", "Rank files with BM25 and symbol definitions"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	cmd = newLocateCmd()
	cmd.SetArgs([]string{"--repo", "../..", "  "})
	err := cmd.ExecuteContext(context.Background())
	if err == nil || !strings.Contains(err.Error(), "query is empty") {
		t.Fatal(err)
	}
	ev := newEvalLocateCmd()
	ev.SetOut(&out)
	if os.Getenv("TMPEVAL") != "" {
		ev.SetArgs([]string{"--data", "../locate/testdata/swe-bench-lite-dev.jsonl", "--repos", "/tmp/repos"})
		if err := ev.ExecuteContext(context.Background()); err != nil {
			t.Log(err)
		}
		t.Log(out.String())
	}
}
