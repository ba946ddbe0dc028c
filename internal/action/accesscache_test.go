package action

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/gh"
)

// countingAccess answers each owner/repo@login (as asked) from perms,
// counting the questions.
type countingAccess struct {
	perms map[string]string
	asked []string
}

func (c *countingAccess) Permission(_ context.Context, owner, repo, login string) (gh.Permission, error) {
	key := owner + "/" + repo + "@" + login
	c.asked = append(c.asked, key)
	return gh.Permission{Permission: c.perms[strings.ToLower(key)]}, nil
}

// TestAccessAnswersAreNotShared: a job keeps GitHub's answer about
// someone's access for Config.AccessRecheck. The answer about one
// repository is not taken for another (a job may read a second
// repository: a dispatch naming another), an answer about one login is
// not another's, and the same person in other letter case is the same
// answer (GitHub's logins ignore case), never a fresh one that could
// differ within one decision.
func TestAccessAnswersAreNotShared(t *testing.T) {
	t.Parallel()
	type q struct {
		owner, repo, login string
		after              time.Duration
		want               string
	}
	cases := []struct {
		name  string
		qs    []q
		asked int
	}{
		{"another repository is asked again", []q{{"o", "r", "maintainer", 0, "write"}, {"o", "other", "maintainer", 0, "read"}}, 2},
		{"another owner is asked again", []q{{"o", "r", "maintainer", 0, "write"}, {"x", "r", "maintainer", 0, "none"}}, 2},
		{"another login is asked again", []q{{"o", "r", "maintainer", 0, "write"}, {"o", "r", "maintainer2", 0, "read"}}, 2},
		{"the same login in other case is one answer", []q{{"o", "r", "maintainer", 0, "write"}, {"O", "R", "MAINTAINER", 0, "write"}}, 1},
		{"an answer older than AccessRecheck is asked again", []q{{"o", "r", "maintainer", 0, "write"}, {"o", "r", "maintainer", DefaultAccessRecheck, "write"}}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
			ca := &countingAccess{perms: map[string]string{
				"o/r@maintainer": "write", "o/other@maintainer": "read", "x/r@maintainer": "none", "o/r@maintainer2": "read"}}
			e := &env{Cfg: &Config{AccessRecheck: DefaultAccessRecheck}, GH: GitHub{Access: ca}, Now: func() time.Time { return now }}
			for _, x := range c.qs {
				now = now.Add(x.after)
				p, err := e.access().Permission(context.Background(), x.owner, x.repo, x.login)
				if err != nil || p.Permission != x.want {
					t.Errorf("%s/%s@%s: %q %v, want %q", x.owner, x.repo, x.login, p.Permission, err, x.want)
				}
			}
			if len(ca.asked) != c.asked {
				t.Errorf("GitHub was asked %d times (%v), want %d", len(ca.asked), ca.asked, c.asked)
			}
		})
	}
}
