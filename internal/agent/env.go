package agent

import (
	"path"
	"strings"
)

// secretPatterns name environment variables that must never reach an agent
// or a command it runs unless the user allow-lists them: tokens, keys,
// passwords, the Action's inputs (which carry the token too) and the
// runner's own credentials.
var secretPatterns = []string{
	"GITHUB_TOKEN", "INPUT_*", "ACTIONS_*",
	"*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*CREDENTIAL*",
	"*_KEY", "*_APIKEY", "*_PAT",
	// A socket that signs or authenticates for the user is a secret too.
	"SSH_AUTH_SOCK",
}

// neverPass are variables no allow-list lets through: each names a file
// or a start-up script through which a process could change the steps
// that run after planex, or the shells planex itself starts.
var neverPass = []string{
	"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY",
	"BASH_ENV", "ENV",
}

// planexCredentials are the GitHub and Actions credentials planex itself
// holds: no configuration may hand them on to a process an agent reaches.
var planexCredentials = []string{"GITHUB_TOKEN", "GH_TOKEN", "INPUT_*", "ACTIONS_*"}

// IsPlanexCredential reports whether name is one of planex's own GitHub
// or Actions credentials (the token it pushes and comments with).
func IsPlanexCredential(name string) bool {
	up := strings.ToUpper(name)
	for _, p := range planexCredentials {
		if ok, _ := path.Match(p, up); ok {
			return true
		}
	}
	return false
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

func neverPassed(name string) bool {
	for _, n := range neverPass {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// ScrubEnv returns env (KEY=VALUE pairs) without secrets, except the names
// in allow, which the user explicitly lets through. secrets names more
// variables to drop whatever they are called (the one --api-key-env
// names). The variables in neverPass are dropped even when allowed.
func ScrubEnv(env []string, allow []string, secrets ...string) []string {
	allowed := make(map[string]bool, len(allow))
	for _, a := range allow {
		allowed[a] = true
	}
	named := make(map[string]bool, len(secrets))
	for _, s := range secrets {
		if s != "" && !allowed[s] {
			named[s] = true
		}
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if neverPassed(name) || named[name] || (IsSecretEnv(name) && !allowed[name]) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// credentialPatterns name the variables whose values planex looks for in
// what an agent produced: the ones that hold a credential, not every
// scrubbed variable (INPUT_AGENT_COMMAND is scrubbed, but its value is a
// command line the agent may well repeat).
var credentialPatterns = []string{
	"*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*CREDENTIAL*", "*_KEY", "*_APIKEY", "*_PAT",
}

func isCredential(name string) bool {
	up := strings.ToUpper(name)
	for _, p := range credentialPatterns {
		if ok, _ := path.Match(p, up); ok {
			return true
		}
	}
	return false
}

// minSecretLen is the shortest value looked for in an agent's output:
// shorter ones ("1", "true") would match everywhere.
const minSecretLen = 8

// SecretValues maps the value of every credential in env (named like a
// token, secret, password or key, or named in secrets; allowed names
// excepted) to its variable's name, so planex can refuse to
// commit or publish a value an agent got hold of anyway.
func SecretValues(env []string, allow []string, secrets ...string) map[string]string {
	allowed := make(map[string]bool, len(allow))
	for _, a := range allow {
		allowed[a] = true
	}
	named := make(map[string]bool, len(secrets))
	for _, s := range secrets {
		named[s] = true
	}
	out := map[string]string{}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if allowed[name] || !(named[name] || isCredential(name)) || len(value) < minSecretLen {
			continue
		}
		out[value] = name
	}
	return out
}

// Redact replaces every secret value in s with the name of its variable.
func Redact(s string, values map[string]string) string {
	for v, name := range values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "[redacted "+name+"]")
		}
	}
	return s
}
