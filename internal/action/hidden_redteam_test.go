package action

import (
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/apicommit"
)

// TestRedTeamPullRequestNamesFilesTheRepositoryHides: the repository
// already holds `a/.gitattributes` (`*.txt -diff`) and
// `b/.gitattributes` (`* linguist-generated=true`), as projects do for
// fixtures and generated code. Tasks under a/** and b/** add files there
// without touching any .gitattributes, so GitHub's diff of planex's pull
// request shows one as "Binary file not shown" and collapses the other,
// and the body warned of nothing (it named only attribute files a task
// changed). The body now names both files and the attribute that hides
// each, with local commits and with commits GitHub makes; a file outside
// those folders is not named.
func TestRedTeamPullRequestNamesFilesTheRepositoryHides(t *testing.T) {
	for _, api := range []bool{false, true} {
		t.Run(map[bool]string{false: "local commits", true: "API commits"}[api], func(t *testing.T) {
			w := newParallelWorld(t)
			if api {
				w.config = append(w.config, func(c *Config) { c.CommitSigning = apicommit.ModeAPI })
				w.fake.SetGitDir(wRepo, w.origin)
			}
			w.commitToMain("a/.gitattributes", "*.txt -diff\n")
			w.commitToMain("b/.gitattributes", "* linguist-generated=true\n")
			w.agent.setPlan(wTask{ID: "T1", Title: "one", Scope: "a/**"}, wTask{ID: "T2", Title: "two", Scope: "b/**"},
				wTask{ID: "T3", Title: "three", Scope: "c/**"})
			n, id := w.plannedOne("Add files")
			if r, err := w.handle(w.comment(n, "maintainer", "/planex approve "+id)); err != nil || r.Outputs.Status != StatusDone {
				t.Fatalf("approve: %v %+v", err, r.Outputs)
			}
			prs := w.fake.PullRequests(wRepo)
			if len(prs) != 1 {
				t.Fatalf("pull requests = %+v", prs)
			}
			body := prs[0].Body
			for _, want := range []string{"GitHub's diff hides the changes of 2 files below", "> - `a/T1.txt` (`-diff`)\n", "> - `b/T2.txt` (`linguist-generated`)\n"} {
				if !strings.Contains(body, want) {
					t.Errorf("the body lacks %q:\n%s", want, body)
				}
			}
			if strings.Contains(body, "`c/T3.txt`") || strings.Contains(body, "could not tell") {
				t.Errorf("the body names a shown file, or could not read the attributes:\n%s", body)
			}
			w.noRefusedRequests()
		})
	}
}
