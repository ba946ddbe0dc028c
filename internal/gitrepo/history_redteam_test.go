package gitrepo

import (
	"regexp"
	"strings"
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

// TestTaskMessageBodyIsOneParagraph: the agent's findings are one
// paragraph of the task's commit message, whatever blank lines they
// hold (three line breaks in a row, a line of spaces or tabs between):
// only planex's trailers end the message as a paragraph of their own.
func TestTaskMessageBodyIsOneParagraph(t *testing.T) {
	t.Parallel()
	for _, findings := range []string{
		"a\n\n\nb",
		"a\n \nb",
		"a\n\t\r\n\n  \nb",
		"a\n\n\n\n\nb\n\nc",
	} {
		msg := TaskMessage("s1", "T1", "t", findings)
		paras := strings.Split(strings.TrimSpace(msg), "\n\n")
		if len(paras) != 3 || strings.TrimSpace(paras[2]) != TrailerSession+": s1\n"+TrailerTask+": T1" {
			t.Errorf("TaskMessage of the findings %q has %d paragraphs:\n%s", findings, len(paras), msg)
		}
		for _, line := range strings.Split(paras[1], "\n") {
			if strings.TrimSpace(line) == "" {
				t.Errorf("TaskMessage of the findings %q keeps a blank line in its body:\n%s", findings, msg)
			}
		}
	}
}
