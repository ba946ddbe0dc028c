//go:build linux

package agent

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamOtherShellsTokens: the admin gives every login its token in
// the other shells' startup files too (zsh's zshrc under both
// distributions' names, csh's cshrc and a profile.d/*.csh twin, fish's
// config and conf.d), each in its own syntax (setenv, set -gx), or later
// on a line than its first assignment. A contained agent read them: only
// sh-family scripts were filtered, and only a line's first assignment.
func TestRedTeamOtherShellsTokens(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-shells-")
	etc := filepath.Join(dir, "etc")
	files := map[string]string{
		"etc/zsh/zshrc":            "export PAGER=less DEPLOY_TOKEN=loot-zshrc",
		"etc/zshrc":                "[ -n \"$PS1\" ] && export VAULT_TOKEN=loot-rhel-zshrc",
		"etc/csh.cshrc":            "setenv NPM_AUTH loot-cshrc\nsetenv EDITOR vim",
		"etc/profile.d/deploy.csh": "setenv DEPLOY_TOKEN 'loot-profile-csh'",
		"etc/fish/config.fish":     "set -gx CI_SECRET loot-fish",
		"etc/fish/conf.d/ci.fish":  "set --export --global SENTRY_KEY loot-fish-confd",
	}
	out := catPlanted(t, box, dir, etc, files)
	for _, kept := range []string{"export PAGER=less DEPLOY_TOKEN=", "setenv EDITOR vim", "set -gx CI_SECRET "} {
		if !strings.Contains(out, kept) {
			t.Errorf("the machine's startup files lost %q:\n%s", kept, out)
		}
	}
}
