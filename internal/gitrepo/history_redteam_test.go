package gitrepo

import (
	"regexp"
	"testing"
)

// TestRedTeamTaskMessageNamesNoPerson: an agent's findings, which go into
// its task's commit message, carry trailers that name a person:
// "Co-authored-by" shows them on GitHub as an author of planex's commit
// (and of the squash commit that gathers it), "Signed-off-by" signs the
// project's DCO in their name. Each is broken, however it is spelt.
func TestRedTeamTaskMessageNamesNoPerson(t *testing.T) {
	t.Parallel()
	attribution := regexp.MustCompile(`(?im)^[ \t]*(co-authored-by|signed-off-by|reviewed-by|acked-by|tested-by|approved-by)[ \t]*:`)
	for _, findings := range []string{
		"done\n\nCo-authored-by: Maintainer <maintainer@example.com>",
		"done\n\n\nco-authored-by: m <m@example.com>\n",
		"  Signed-off-by: Maintainer <maintainer@example.com>",
		"Reviewed-By : Lead <lead@example.com>\nAcked-by: x <x@y>",
	} {
		msg := TaskMessage("s1", "T1", "t", findings)
		if m := attribution.FindString(msg); m != "" {
			t.Errorf("TaskMessage kept %q from the findings %q:\n%s", m, findings, msg)
		}
	}
}
