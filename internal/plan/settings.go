package plan

import "github.com/planexhq/planex/internal/scope"

// SettingsFile is planex's own configuration in a repository (read from
// the default branch). A task that changes it changes what later runs
// may do once its branch is merged (auto-approve, the cost limit), so a
// task may change it only where its scope names the file itself.
const SettingsFile = ".github/planex.yml"

// SettingsTasks lists the tasks whose scope names SettingsFile, in plan
// order: the ones whose commits may change planex's settings.
func SettingsTasks(tasks []Task) []string {
	var out []string
	for _, t := range tasks {
		if scope.Names(t.Scope, SettingsFile) {
			out = append(out, t.ID)
		}
	}
	return out
}
