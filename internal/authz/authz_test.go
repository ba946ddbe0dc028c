package authz

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/ghfake"
)

func TestCheck(t *testing.T) {
	ctx := context.Background()
	f := ghfake.New(t)
	f.AddRepo("octo/widgets", ghfake.Repo{})
	for login, role := range map[string]string{"adm": "admin", "mnt": "maintain", "wrt": "write", "tri": "triage", "rdr": "read", "helper[bot]": "write"} {
		f.SetPermission("octo/widgets", login, role)
	}
	f.AddUser("outsider", "User")
	client, err := gh.NewClient(ctx, gh.Options{Token: "t", APIURL: f.URL(), HTTPClient: f.HTTPClient(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		login, userType string
		action          Action
		allowed         bool
		reason          string
	}{
		{"octo", "User", Trigger, true, ""},
		{"adm", "User", Approve, true, ""},
		{"mnt", "User", Approve, true, ""},
		{"wrt", "User", Trigger, true, ""},
		{"tri", "User", Trigger, false, "you have triage access"},
		{"rdr", "User", Approve, false, "you have read access"},
		{"outsider", "User", Trigger, false, "need write, maintain or admin access to octo/widgets"},
		{"nobody-known", "User", Trigger, false, "you have no access"},
		{"helper[bot]", "Bot", Trigger, false, "does not name in trusted-bots"},
		{"helper[bot]", "Bot", Approve, false, "bots cannot approve"},
		{"wrt", "Bot", Trigger, false, "does not name in trusted-bots"},
		{"wrt", "Bot", Approve, false, "bots cannot approve"},
	}
	for _, tt := range tests {
		t.Run(tt.login+"/"+string(tt.action), func(t *testing.T) {
			d, err := Policy{}.Check(ctx, client, "octo", "widgets", tt.login, tt.userType, tt.action)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed != tt.allowed {
				t.Fatalf("allowed = %v, want %v (%+v)", d.Allowed, tt.allowed, d)
			}
			if !strings.Contains(d.Reason, tt.reason) || (tt.allowed && d.Reason != "") {
				t.Fatalf("reason %q, want it to contain %q", d.Reason, tt.reason)
			}
		})
	}
}

type failing struct{}

func (failing) Permission(context.Context, string, string, string) (gh.Permission, error) {
	return gh.Permission{}, errors.New("boom")
}

type custom struct{}

func (custom) Permission(context.Context, string, string, string) (gh.Permission, error) {
	return gh.Permission{Permission: "write", RoleName: "release-manager"}, nil
}

func TestCheckErrorsAreSeparateFromRefusals(t *testing.T) {
	ctx := context.Background()
	if _, err := (Policy{}).Check(ctx, failing{}, "o", "r", "u", "User", Trigger); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("want internal error, got %v", err)
	}
	if _, err := (Policy{}).Check(ctx, custom{}, "o", "r", "", "User", Trigger); err == nil {
		t.Fatal("empty login accepted")
	}
	d, err := Policy{}.Check(ctx, custom{}, "o", "r", "u", "User", Approve)
	if err != nil || !d.Allowed {
		t.Fatalf("custom role with write base: %+v %v", d, err)
	}
}

func TestCheckSurvivesTransientFailures(t *testing.T) {
	ctx := context.Background()
	f := ghfake.New(t)
	f.AddRepo("octo/widgets", ghfake.Repo{})
	f.SetPermission("octo/widgets", "mnt", "maintain")
	f.InjectFault("GET /repos/{owner}/{repo}/collaborators/{username}/permission", 1, ghfake.ServerError(502))
	client, _ := gh.NewClient(ctx, gh.Options{APIURL: f.URL(), HTTPClient: f.HTTPClient(),
		Retry:  gh.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	d, err := Policy{}.Check(ctx, client, "octo", "widgets", "mnt", "User", Approve)
	if err != nil || !d.Allowed {
		t.Fatalf("%+v %v", d, err)
	}
}

// TestRedTeamCheckFailsClosed: a maintainer's permission cannot be read
// (the token may not read collaborators, GitHub keeps failing, a rate
// limit far off, the answer is not the permission object): Check allows
// nothing, and says so as an error unless GitHub answered that the user
// has no access here.
func TestRedTeamCheckFailsClosed(t *testing.T) {
	t.Parallel()
	const route = "GET /repos/{owner}/{repo}/collaborators/{username}/permission"
	for _, c := range []struct {
		name    string
		fault   ghfake.Fault
		wantErr bool
	}{
		{"forbidden", ghfake.Forbidden("Resource not accessible by integration"), true},
		{"not found", ghfake.NotFound(), false},
		{"server errors", ghfake.ServerError(502), true},
		{"rate limited for hours", ghfake.PrimaryRateLimit(403, time.Now().Add(3*time.Hour)), true},
		{"no permission in the answer", ghfake.Fault{Status: 200, Body: `{"user":{"login":"mnt"}}`}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := ghfake.New(t)
			f.AddRepo("octo/widgets", ghfake.Repo{})
			f.SetPermission("octo/widgets", "mnt", "maintain")
			f.InjectFault(route, 100, c.fault)
			client, _ := gh.NewClient(ctx, gh.Options{APIURL: f.URL(), HTTPClient: f.HTTPClient(),
				Retry:  gh.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, SettleWindow: -1},
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			for _, action := range []Action{Trigger, Approve} {
				d, err := Policy{}.Check(ctx, client, "octo", "widgets", "mnt", "User", action)
				if d.Allowed || (err != nil) != c.wantErr {
					t.Errorf("%s: %+v %v", action, d, err)
				}
			}
		})
	}
}

// TestRedTeamActionsBotNamesNobody: github-actions[bot] is the account of
// every workflow's job token, among them workflows a reader's issue or
// comment starts (a labeller that adds planex:auto by the words,
// a chat-ops workflow that dispatches planex). Should GitHub report write
// access for it, it triggered planex like a maintainer: its act names no
// person who may. It is refused for everything, in any case.
func TestRedTeamActionsBotNamesNobody(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := ghfake.New(t)
	f.AddRepo("octo/widgets", ghfake.Repo{})
	f.SetPermission("octo/widgets", ghfake.DefaultActor, "admin")
	client, err := gh.NewClient(ctx, gh.Options{Token: "t", APIURL: f.URL(), HTTPClient: f.HTTPClient(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, login := range []string{"github-actions[bot]", "GitHub-Actions[bot]"} {
		for _, action := range []Action{Trigger, Approve} {
			d, err := Policy{}.Check(ctx, client, "octo", "widgets", login, "Bot", action)
			if err != nil || d.Allowed || !strings.Contains(d.Reason, "@"+login) {
				t.Errorf("%s %s: %+v %v", login, action, d, err)
			}
		}
	}
}

// TestPolicyTrustedBots: a GitHub App with write access (a chat bridge,
// an issue importer) that posts `/planex ...` or adds the trigger label
// on someone's behalf started plans, so whoever could make it write had
// planex run. A bot starts planex only when the workflow names it, with
// write access still read from GitHub; a named bot never approves, and
// the Actions bot does nothing even when named.
func TestPolicyTrustedBots(t *testing.T) {
	t.Parallel()
	pol := Policy{TrustedBots: []string{"Importer[bot]", "github-actions[bot]"}}
	ctx := context.Background()
	cases := []struct {
		pol     Policy
		login   string
		action  Action
		allowed bool
		reason  string
	}{
		{Policy{}, "importer[bot]", Trigger, false, "does not name in trusted-bots"},
		{pol, "importer[bot]", Trigger, true, ""},
		{pol, "IMPORTER[BOT]", Trigger, true, ""},
		{pol, "importer[bot]", Approve, false, "bots cannot approve"},
		{pol, "other[bot]", Trigger, false, "does not name in trusted-bots"},
		{pol, "github-actions[bot]", Trigger, false, "acts for every workflow"},
		{pol, "maintainer", Trigger, true, ""},
	}
	for _, c := range cases {
		d, err := c.pol.Check(ctx, custom{}, "o", "r", c.login, "Bot", c.action)
		if c.login == "maintainer" {
			d, err = c.pol.Check(ctx, custom{}, "o", "r", c.login, "User", c.action)
		}
		if err != nil || d.Allowed != c.allowed || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%v %s %s: %+v %v", c.pol.TrustedBots, c.login, c.action, d, err)
		}
	}
}

// roleNamed answers a custom repository role: its name is the
// organisation's choice, its base access the permission field.
type roleNamed struct{ permission, role string }

func (r roleNamed) Permission(context.Context, string, string, string) (gh.Permission, error) {
	return gh.Permission{Permission: r.permission, RoleName: r.role}, nil
}

// TestRedTeamCustomRoleNamedLikeWrite: an organisation's custom
// repository role is named by its owners ("Maintain" for the people who
// keep the issue tracker tidy, say) and built on read or triage. The
// permission API reports its name in role_name and its base access in
// permission; a role_name spelled like a built-in write role was taken
// for one, so its holders triggered and approved plans. Only the base
// access decides (the built-in maintain role reports write there).
func TestRedTeamCustomRoleNamedLikeWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		permission, role string
		allowed          bool
	}{
		{"read", "Maintain", false},
		{"read", "write", false},
		{"read", "ADMIN", false},
		{"none", "maintain", false},
		{"write", "maintain", true},
		{"write", "Issue Keeper", true},
		{"admin", "admin", true},
	} {
		for _, action := range []Action{Trigger, Approve} {
			d, err := Policy{}.Check(ctx, roleNamed{c.permission, c.role}, "o", "r", "u", "User", action)
			if err != nil || d.Allowed != c.allowed {
				t.Errorf("permission %q, role %q, %s: allowed %v (%v), want %v", c.permission, c.role, action, d.Allowed, err, c.allowed)
			}
		}
	}
}
