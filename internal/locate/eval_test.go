package locate

import (
	"context"
	"flag"
	"os"
	"testing"
)

// The SWE-bench evaluation needs the upstream repositories, which are not
// part of this tree: run it with
//
//	go test ./internal/locate -run TestEvalSWEBenchLite -v -args -locate.repos DIR
//
// where DIR holds <owner>__<name> git directories or clones.
var reposFlag = flag.String("locate.repos", "", "directory of <owner>__<name> repositories for TestEvalSWEBenchLite")

func TestEvalSWEBenchLite(t *testing.T) {
	if *reposFlag == "" {
		t.Skip("set -locate.repos to run the SWE-bench Lite localisation evaluation")
	}
	ins, err := LoadInstances("testdata/swe-bench-lite-dev.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Evaluate(context.Background(), ins, *reposFlag, 10, EvalOptions{Out: os.Stdout})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rep.Outcomes {
		t.Logf("%-40s %-14s rank=%d top=%v", o.InstanceID, o.System, o.Rank, o.Top[:min(3, len(o.Top))])
	}
	if rep.Metrics[0].N == 0 {
		t.Fatal("nothing evaluated")
	}
}
