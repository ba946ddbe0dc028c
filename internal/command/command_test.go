package command

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		trigger string
		kind    Kind
		want    Command // checked when kind == Run
		reply   string  // substring of the reply when kind == Reply
	}{
		{name: "not for planex", body: "Looks good to me", kind: Ignore},
		{name: "trigger later in the text", body: "I think /planex should do this", kind: Ignore},
		{name: "trigger not a whole word", body: "/planexify it", kind: Ignore},
		{name: "only quoted trigger", body: "> /planex approve p-1\nsure", kind: Ignore},
		{name: "trigger inside a code fence", body: "```\n/planex approve p-1\n```\nthat is how", kind: Ignore},
		{name: "empty", body: "  \n\n", kind: Ignore},
		{name: "plan", body: "/planex add rate limiting to the public API", kind: Run,
			want: Command{Name: Plan, Requirement: "add rate limiting to the public API"}},
		{name: "plan, empty requirement", body: "/planex", kind: Run, want: Command{Name: Plan}},
		{name: "plan after quote and fence", body: "> earlier: /planex cancel\n\n```go\nx := 1\n```\n/planex add tests", kind: Run,
			want: Command{Name: Plan, Requirement: "add tests"}},
		{name: "plan, multi-line", body: "/planex add rate limiting\n\n- per token\n- 429 with Retry-After\r\n", kind: Run,
			want: Command{Name: Plan, Requirement: "add rate limiting\n\n- per token\n- 429 with Retry-After"}},
		{name: "plan, text on next lines only", body: "/planex\nmake the CLI faster", kind: Run,
			want: Command{Name: Plan, Requirement: "make the CLI faster"}},
		{name: "plan with flags", body: "/planex -y -c 3 add caching", kind: Run,
			want: Command{Name: Plan, Requirement: "add caching", Yes: true, Concurrency: 3}},
		{name: "plan with long flags", body: "/planex --yes --concurrency=2 add caching", kind: Run,
			want: Command{Name: Plan, Requirement: "add caching", Yes: true, Concurrency: 2}},
		{name: "flag-like words inside the requirement stay text", body: "/planex add a -c flag to the CLI", kind: Run,
			want: Command{Name: Plan, Requirement: "add a -c flag to the CLI"}},
		{name: "double dash ends flags", body: "/planex -- -y should be documented", kind: Run,
			want: Command{Name: Plan, Requirement: "-y should be documented"}},
		{name: "lone dash is text", body: "/planex - tidy up", kind: Run, want: Command{Name: Plan, Requirement: "- tidy up"}},
		{name: "bad concurrency zero", body: "/planex -c 0 add caching", kind: Reply, reply: "between 1 and 64, got 0"},
		{name: "bad concurrency word", body: "/planex -c x add caching", kind: Reply, reply: "whole number, got \"x\""},
		{name: "concurrency missing value", body: "/planex -c", kind: Reply, reply: "needs a number"},
		{name: "unknown flag", body: "/planex --force add caching", kind: Reply, reply: "Unknown flag `--force`"},
		{name: "approve", body: "/planex approve p-20240501-ab12", kind: Run, want: Command{Name: Approve, PlanID: "p-20240501-ab12"}},
		{name: "approve any case, with flags", body: "/planex Approve p-1 -c 4", kind: Run, want: Command{Name: Approve, PlanID: "p-1", Concurrency: 4}},
		{name: "approve without id", body: "/planex approve", kind: Reply, reply: "needs the plan id"},
		{name: "approve with two ids", body: "/planex approve p-1 p-2", kind: Reply, reply: "takes one plan id"},
		{name: "approve with a bad id", body: "/planex approve <plan-id>", kind: Reply, reply: "is not a plan id"},
		{name: "revise", body: "/planex revise split T3 in two\nand drop T5", kind: Run,
			want: Command{Name: Revise, Text: "split T3 in two\nand drop T5"}},
		{name: "revise without feedback", body: "/planex revise", kind: Reply, reply: "needs feedback"},
		{name: "cancel", body: "/planex cancel", kind: Run, want: Command{Name: Cancel}},
		{name: "cancel with extra words", body: "/planex cancel now please", kind: Reply, reply: "takes no arguments"},
		{name: "cancel with explanation below", body: "/planex cancel\nwrong approach", kind: Run, want: Command{Name: Cancel}},
		{name: "retry with concurrency", body: "/planex retry -c 1", kind: Run, want: Command{Name: Retry, Concurrency: 1}},
		{name: "status", body: "/planex status", kind: Run, want: Command{Name: Status}},
		{name: "status rejects flags", body: "/planex status -y", kind: Reply, reply: "takes no arguments"},
		{name: "fix", body: "/planex fix", kind: Run, want: Command{Name: Fix}},
		{name: "fix with text", body: "/planex fix only the high ones", kind: Run, want: Command{Name: Fix, Text: "only the high ones"}},
		{name: "review", body: "/planex review", kind: Run, want: Command{Name: Review}},
		{name: "help", body: "/planex help", kind: Reply, reply: "planex commands"},
		{name: "typo of a command", body: "/planex aprove", kind: Reply, reply: "did you mean `/planex approve`"},
		{name: "single word far from commands is a requirement", body: "/planex refactor", kind: Run,
			want: Command{Name: Plan, Requirement: "refactor"}},
		{name: "custom trigger", body: "@bot approve p-9", trigger: "@bot", kind: Run, want: Command{Name: Approve, PlanID: "p-9"}},
		{name: "custom trigger ignores default", body: "/planex approve p-9", trigger: "@bot", kind: Ignore},
		{name: "leading whitespace and html comment", body: "<!--\nhidden\n-->\n   /planex status", kind: Run, want: Command{Name: Status}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse(tt.body, tt.trigger)
			if got.Kind != tt.kind {
				t.Fatalf("kind = %v, want %v (reply %q, reason %q)", got.Kind, tt.kind, got.Reply, got.Reason)
			}
			switch tt.kind {
			case Run:
				if got.Command == nil || *got.Command != tt.want {
					t.Fatalf("command = %+v, want %+v", got.Command, tt.want)
				}
			case Reply:
				if !strings.Contains(got.Reply, tt.reply) {
					t.Fatalf("reply %q does not contain %q", got.Reply, tt.reply)
				}
			case Ignore:
				if got.Reason == "" {
					t.Fatal("ignored without a reason")
				}
			}
		})
	}
}

func TestHelpTextUsesTrigger(t *testing.T) {
	h := HelpText("@bot")
	if !strings.Contains(h, "`@bot approve <plan-id>`") || strings.Contains(h, "/planex") {
		t.Fatalf("help text: %s", h)
	}
}
