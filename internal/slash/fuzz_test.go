package slash

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/planexhq/planex/internal/gfm"
)

// FuzzParse: whatever a comment holds, Parse ends, a command it returns is
// one planex knows with bounded, visible arguments, and nothing inside an
// HTML comment is ever a command.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"/planex add rate limiting", "/planex approve 0123456789", "/planex -y -c 3 do it", "/planex revise smaller",
		"> /planex approve x\n\n/planex status", "```\n/planex approve x\n```", "<!-- /planex approve x -->",
		"/planex fix-ci only the limiter", "/planex help", "/planex  approve\u200b x", "/planex -c 999 x", "text\n/planex cancel",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := Parse(body, DefaultTrigger)
		if r.Kind == Run {
			c := r.Command
			if c == nil {
				t.Fatal("Run without a command")
			}
			if c.Name != Plan && !slices.Contains(reserved, c.Name) {
				t.Fatalf("unknown command %q", c.Name)
			}
			if c.Name == Approve && !planIDPattern.MatchString(c.PlanID) {
				t.Fatalf("approve of plan id %q", c.PlanID)
			}
			if c.Concurrency < 0 || c.Concurrency > MaxConcurrency {
				t.Fatalf("-c %d", c.Concurrency)
			}
			for _, s := range []string{c.Requirement, c.Text, c.PlanID} {
				if !utf8.ValidString(s) || strings.ContainsFunc(s, gfm.Invisible) {
					t.Fatalf("argument %q holds what GitHub does not show", s)
				}
			}
		}
		if !strings.Contains(body, "--") && !strings.Contains(body, ">") {
			if h := Parse("<!--\n"+body+"\n-->", DefaultTrigger); h.Kind == Run {
				t.Fatalf("a command inside an HTML comment ran: %+v", h.Command)
			}
		}
	})
}
