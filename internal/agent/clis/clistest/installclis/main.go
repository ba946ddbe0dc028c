// Command installclis installs the CLI versions planex is tested with
// into the test cache (see clistest.CacheDir), so that CI pays for the
// download once, up front, and fails clearly when npm cannot deliver them.
//
//	go run ./internal/agent/clis/clistest/installclis
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/planexhq/planex/internal/agent/clis"
	"github.com/planexhq/planex/internal/agent/clis/clistest"
)

func main() {
	failed := false
	for _, name := range clis.Names() {
		pkg, _ := clis.Tested(name)
		bin, err := clistest.Ensure(context.Background(), name, pkg.Spec())
		if err != nil {
			fmt.Fprintf(os.Stderr, "installclis: %s: %v\n", pkg.Spec(), err)
			failed = true
			continue
		}
		fmt.Printf("%s: %s\n", pkg.Spec(), bin)
	}
	if failed {
		os.Exit(1)
	}
}
