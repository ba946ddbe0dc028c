package agent

import (
	"os"
	"testing"

	"github.com/planexhq/planex/internal/sandbox/sandboxtest"
)

// netProbe is the netprobe command the package's tests share, built on
// first use and removed after the tests.
var netProbe sandboxtest.ProbeBuild

func TestMain(m *testing.M) {
	code := m.Run()
	netProbe.Remove()
	os.Exit(code)
}
