package agent

import (
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/gitrepo"
)

// passedNames are the variables every process a step starts receives
// (when planex holds them): what programs need to find their tools,
// speak the user's language and know they run in CI, and the runner's
// context that names the repository, commit and machine but grants
// nothing. Everything else planex holds stays with planex unless the
// user names it in --allow-env. docs/security.md lists them.
var passedNames = map[string]bool{
	// What every program expects.
	"PATH": true, "HOME": true, "LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true,
	"USER": true, "LOGNAME": true, "SHELL": true, "TMPDIR": true, "CI": true,
	"DEBIAN_FRONTEND": true,
	// Toolchain locations (paths only: a proxy URL or flags could carry a
	// credential, so GOPROXY, GOFLAGS, NPM_CONFIG_* and the like are not
	// among them).
	"GOROOT": true, "GOPATH": true, "GOCACHE": true, "GOMODCACHE": true, "GOTOOLCHAIN": true,
	"JAVA_HOME": true, "CARGO_HOME": true, "RUSTUP_HOME": true,
	// The runner's context.
	"GITHUB_ACTIONS": true, "GITHUB_SERVER_URL": true, "GITHUB_API_URL": true, "GITHUB_GRAPHQL_URL": true,
	"GITHUB_REPOSITORY": true, "GITHUB_REPOSITORY_ID": true, "GITHUB_REPOSITORY_OWNER": true, "GITHUB_REPOSITORY_OWNER_ID": true,
	"GITHUB_SHA": true, "GITHUB_REF": true, "GITHUB_REF_NAME": true, "GITHUB_REF_TYPE": true, "GITHUB_REF_PROTECTED": true,
	"GITHUB_HEAD_REF": true, "GITHUB_BASE_REF": true, "GITHUB_WORKSPACE": true,
	"GITHUB_EVENT_NAME": true, "GITHUB_ACTOR": true, "GITHUB_ACTOR_ID": true, "GITHUB_TRIGGERING_ACTOR": true,
	"GITHUB_WORKFLOW": true, "GITHUB_WORKFLOW_REF": true, "GITHUB_WORKFLOW_SHA": true, "GITHUB_JOB": true,
	"GITHUB_RUN_ID": true, "GITHUB_RUN_NUMBER": true, "GITHUB_RUN_ATTEMPT": true,
	"RUNNER_OS": true, "RUNNER_ARCH": true, "RUNNER_NAME": true, "RUNNER_ENVIRONMENT": true,
	"RUNNER_TEMP": true, "RUNNER_TOOL_CACHE": true, "RUNNER_DEBUG": true,
}

// localeNames are the locale categories POSIX and glibc define, passed
// like passedNames. Not every LC_ name: OpenSSH's default server
// configuration accepts LC_* from every client (AcceptEnv LC_*), so
// LC_-prefixed names are how people carry their own variables, tokens
// too, through ssh onto a machine.
var localeNames = []string{
	"LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY", "LC_MESSAGES",
	"LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION",
}

// neverPass are variables no allow-list lets through: planex's own
// GitHub and Actions credentials (the Action's inputs carry the token
// too), and the files and start-up scripts through which a process could
// change the steps that run after planex, or the shells planex starts.
var neverPass = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "INPUT_*", "ACTIONS_*",
	"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY",
	"BASH_ENV", "ENV",
}

// planexCredentials are the GitHub and Actions credentials planex itself
// holds: no configuration may hand them on to a process an agent reaches.
var planexCredentials = []string{"GITHUB_TOKEN", "GH_TOKEN", "INPUT_*", "ACTIONS_*"}

// IsPlanexCredential reports whether name is one of planex's own GitHub
// or Actions credentials (the token it pushes and comments with).
func IsPlanexCredential(name string) bool {
	return matchAny(planexCredentials, name)
}

func matchAny(patterns []string, name string) bool {
	up := strings.ToUpper(name)
	for _, p := range patterns {
		if ok, _ := path.Match(p, up); ok {
			return true
		}
	}
	return false
}

// NeverPassed reports whether no allow-list can let name through.
func NeverPassed(name string) bool { return matchAny(neverPass, name) }

// PassedByDefault reports whether name is on the list of variables every
// step process gets.
func PassedByDefault(name string) bool {
	return passedNames[name] || slices.Contains(localeNames, name)
}

// envFilter decides which variables a step's processes get.
type envFilter struct {
	allowed map[string]bool
	secret  map[string]bool
}

func newEnvFilter(allow, secrets []string) envFilter {
	f := envFilter{allowed: map[string]bool{}, secret: map[string]bool{}}
	for _, a := range allow {
		if a = strings.TrimSpace(a); a != "" {
			f.allowed[a] = true
		}
	}
	for _, s := range secrets {
		if s != "" && !f.allowed[s] {
			f.secret[s] = true
		}
	}
	return f
}

func (f envFilter) passes(name string) bool {
	switch {
	case name == "" || NeverPassed(name) || f.secret[name]:
		return false
	case f.allowed[name]:
		return true
	}
	return PassedByDefault(name)
}

// ScrubEnv returns the part of env (KEY=VALUE pairs) a step's processes
// get: the variables on the default list (PassedByDefault) and the names
// in allow, which the user explicitly lets through; nothing else.
// secrets names variables to drop even when on the default list (the one
// --api-key-env names) unless allow names them too. The variables in
// neverPass are dropped even when allowed.
func ScrubEnv(env []string, allow []string, secrets ...string) []string {
	f := newEnvFilter(allow, secrets)
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if !f.passes(name) {
			continue
		}
		if name == "PATH" {
			kv = "PATH=" + gitrepo.AbsolutePath(value)
		}
		out = append(out, kv)
	}
	return out
}

// minSecretLen is the shortest value looked for in an agent's output:
// shorter ones ("1", "true") would match everywhere.
const minSecretLen = 8

// settingVars are planex's own settings (the Action's inputs and
// variables holding names, numbers, modes, a branch, folders), never a
// credential: their values are text a task may well write ("main", a
// model's name), so they are not looked for. One that could hold a
// credential (the token, the agent command, the base URL, an inline MCP
// configuration) is.
var settingVars = map[string]bool{
	"PLANEX_ALLOW_ENV": true, "PLANEX_SANDBOX_READ": true, "PLANEX_SANDBOX_WRITE": true,
	"INPUT_AGENT": true, "INPUT_MODEL": true, "INPUT_API_KEY_ENV": true, "INPUT_ALLOW_ENV": true,
	"INPUT_CONCURRENCY": true, "INPUT_TRIGGER_PHRASE": true, "INPUT_BASE_BRANCH": true, "INPUT_DRAFT": true,
	"INPUT_AUTO_APPROVE": true, "INPUT_MAX_COST_USD": true, "INPUT_MAX_ISSUES": true, "INPUT_LABEL": true,
	"INPUT_MODE": true, "INPUT_MATRIX_WORKFLOW": true, "INPUT_MATRIX_STEP": true, "INPUT_TASK": true,
	"INPUT_REVIEW": true, "INPUT_SANDBOX": true, "INPUT_COMMIT_SIGNING": true, "INPUT_CI_FIX": true,
	"INPUT_CI_FIX_ATTEMPTS": true, "INPUT_BOT_LOGIN": true, "INPUT_TRUSTED_BOTS": true,
}

// SecretValues maps the value of every variable in env that a step's
// processes do not get (see ScrubEnv), whatever its name, to that name,
// so planex can refuse to commit or publish a value an agent got hold of
// anyway. Left out: values shorter than minSecretLen, values the agent
// was given anyway (they occur in a variable that is passed on), and the
// planex's own settings (settingVars).
func SecretValues(env []string, allow []string, secrets ...string) map[string]string {
	return heldValues(env, allow, secrets, nil)
}

// heldValues is SecretValues that also leaves out the values isPath says
// name an existing file (a file's name is no secret: an agent can list
// it).
func heldValues(env []string, allow, secrets []string, isPath func(string) bool) map[string]string {
	f := newEnvFilter(allow, secrets)
	var passed []string
	for _, kv := range env {
		if name, value, _ := strings.Cut(kv, "="); f.passes(name) {
			passed = append(passed, value)
		}
	}
	out := map[string]string{}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if f.passes(name) || len(value) < minSecretLen || settingVars[strings.ToUpper(strings.ReplaceAll(name, "-", "_"))] {
			continue
		}
		if seenIn(passed, value) || (isPath != nil && isPath(value)) {
			continue
		}
		out[value] = name
	}
	return out
}

func seenIn(values []string, v string) bool {
	for _, p := range values {
		if strings.Contains(p, v) {
			return true
		}
	}
	return false
}

// Redact replaces every secret value in s, and the base64 forms of each
// (see Variants), with the name of its variable, also where characters
// that show as nothing (zero-width spaces and joiners, word joiners, byte
// order marks) stand between its characters, as the Markdown escaper puts
// them into URLs and as an agent could to slip a value past a plain
// search. Longer forms go first, so a value holding another is redacted
// whole.
func Redact(s string, values map[string]string) string {
	type form struct{ text, name string }
	var forms []form
	for v, name := range values {
		for _, f := range Variants(v) {
			forms = append(forms, form{f, name})
		}
	}
	sort.Slice(forms, func(i, j int) bool {
		if len(forms[i].text) != len(forms[j].text) {
			return len(forms[i].text) > len(forms[j].text)
		}
		return forms[i].text < forms[j].text
	})
	invisible := strings.ContainsFunc(s, isInvisible)
	for _, f := range forms {
		switch {
		case strings.Contains(s, f.text):
			s = strings.ReplaceAll(s, f.text, "[redacted "+f.name+"]")
			if invisible {
				s = spacedForm(f.text).ReplaceAllLiteralString(s, "[redacted "+f.name+"]")
			}
		case invisible:
			s = spacedForm(f.text).ReplaceAllLiteralString(s, "[redacted "+f.name+"]")
		}
	}
	return s
}

// isInvisible reports the characters Redact looks through.
func isInvisible(r rune) bool {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
		return true
	}
	return false
}

// spacedForm matches text with any run of invisible characters between
// two of its characters.
func spacedForm(text string) *regexp.Regexp {
	var b strings.Builder
	for i, r := range text {
		if i > 0 {
			b.WriteString(`[\x{200B}-\x{200D}\x{2060}\x{FEFF}]*`)
		}
		b.WriteString(regexp.QuoteMeta(string(r)))
	}
	return regexp.MustCompile(b.String())
}
