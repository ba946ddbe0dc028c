package agent

import (
	"path/filepath"
	"strings"

	"github.com/planexhq/planex/internal/gitrepo"
)

// withoutGitCredentials are the lines of a git configuration without
// the settings that give a credential (withoutPasswordSettings', and
// every credential helper: one may print a token itself, !f() { echo
// password=…; }, and a step needs none), nor the extra headers but
// plain ones (http.extraHeader = AUTHORIZATION: basic …), and the
// files to cover: those the helpers name by an absolute path (store's
// --file, a script's) and the included configurations (include.path,
// includeIf's, relative ones beside the configuration), which may
// carry the same.
func withoutGitCredentials(lines []string) (kept, keyFiles []string) {
	lines, keyFiles = withoutPasswordSettings(lines)
	inCredential := false
	for _, line := range lines {
		// A [credential] section (any URL's) is left out whole, header
		// and all: it names nothing a step needs.
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "[") {
			name := strings.ToLower(strings.TrimLeft(t, "[ \t"))
			inCredential = strings.HasPrefix(name, "credential") &&
				(len(name) == len("credential") || strings.ContainsAny(name[len("credential"):len("credential")+1], " \t\"]."))
		}
		if inCredential {
			for _, w := range gitrepo.ShellWords(strings.Trim(line, `"`)) {
				if p := strings.TrimPrefix(w, "--file="); filepath.IsAbs(p) {
					keyFiles = append(keyFiles, p)
				}
			}
			continue
		}
		k, val := settingKey(line)
		val = strings.TrimSpace(val)
		switch {
		case k == "helper":
			for _, w := range gitrepo.ShellWords(strings.Trim(val, `"`)) {
				if p := strings.TrimPrefix(w, "--file="); filepath.IsAbs(p) {
					keyFiles = append(keyFiles, p)
				}
			}
			continue
		case k == "extraheader" && !plainHeader(strings.Trim(val, `"`)):
			continue
		case k == "path" && strings.Trim(val, `"`) != "" && !strings.HasPrefix(strings.Trim(val, `"`), "~"):
			// A relative one lies beside the configuration (absKeys).
			keyFiles = append(keyFiles, strings.Trim(val, `"`))
		}
		kept = append(kept, line)
	}
	return kept, keyFiles
}
