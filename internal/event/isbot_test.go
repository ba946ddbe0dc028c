package event

import "testing"

// One bot check serves the event, authz and the Action's reading of
// GitHub's lists (reviews, comments, issues).
func TestIsBot(t *testing.T) {
	tests := []struct {
		login, typ string
		want       bool
	}{
		{"github-actions[bot]", "Bot", true},
		{"planex-app[bot]", "", true}, // a login alone, as some lists give it
		{"Planex-App[BOT]", "User", true},
		{"renovate", "Bot", true},
		{"renovate", "bot", true},
		{"octocat", "User", false},
		{"bot-lover", "User", false},
		{"[bot]-in-front", "Organization", false},
		{"", "", false},
	}
	for _, tc := range tests {
		if got := IsBot(tc.login, tc.typ); got != tc.want {
			t.Errorf("IsBot(%q, %q) = %v, want %v", tc.login, tc.typ, got, tc.want)
		}
		if got := (User{Login: tc.login, Type: tc.typ}).IsBot(); got != tc.want {
			t.Errorf("User{%q, %q}.IsBot() = %v, want %v", tc.login, tc.typ, got, tc.want)
		}
	}
}
