package sandbox

import (
	"os"
	"testing"

	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
)

// probeBuild is the netprobe command the package's tests share, built on
// first use and removed after the tests.
var probeBuild sandboxtest.ProbeBuild

func TestMain(m *testing.M) {
	code := m.Run()
	probeBuild.Remove()
	os.Exit(code)
}
