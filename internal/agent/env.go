package agent

import (
	"path"
	"strings"
)

// secretPatterns name environment variables that must never reach an agent
// or a command it runs: tokens, keys and the Action's inputs (which carry
// the token too).
var secretPatterns = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
	"*_API_KEY", "*_APIKEY", "*_TOKEN", "*_SECRET", "*_SECRET_KEY", "*_PASSWORD",
	"INPUT_*", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_*", "ACTIONS_RUNTIME_URL",
}

// IsSecretEnv reports whether an environment variable name looks like a
// secret that agents must not see.
func IsSecretEnv(name string) bool {
	up := strings.ToUpper(name)
	for _, p := range secretPatterns {
		if ok, _ := path.Match(p, up); ok {
			return true
		}
	}
	return false
}

// ScrubEnv returns env (KEY=VALUE pairs) without secrets, except the names
// in allow, which the user explicitly lets through.
func ScrubEnv(env []string, allow []string) []string {
	allowed := make(map[string]bool, len(allow))
	for _, a := range allow {
		allowed[a] = true
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if IsSecretEnv(name) && !allowed[name] {
			continue
		}
		out = append(out, kv)
	}
	return out
}
