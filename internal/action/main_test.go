package action

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

func TestMain(m *testing.M) {
	flag.Parse()
	parallelByDefault()
	os.Exit(m.Run())
}

// parallelByDefault lets more of this package's tests run at once than
// Go's default of one per CPU, unless -parallel was given: a world's job
// spends much of its time waiting on the git processes it starts (clones,
// fetches and pushes to the world's origin, each with its helpers) and on
// the fake GitHub's answers, so with one test per CPU the package used
// about two thirds of one CPU of two (62 CPU-s in 93 s).
func parallelByDefault() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}
