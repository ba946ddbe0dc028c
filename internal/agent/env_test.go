package agent

import (
	"slices"
	"testing"
)

func TestScrubEnv(t *testing.T) {
	env := []string{"PATH=/bin", "GITHUB_TOKEN=x", "OPENAI_API_KEY=y", "INPUT_GITHUB-TOKEN=z", "HOME=/h", "NPM_TOKEN=t", "MY_API_KEY=k"}
	got := ScrubEnv(env, []string{"MY_API_KEY"})
	want := []string{"PATH=/bin", "HOME=/h", "MY_API_KEY=k"}
	if !slices.Equal(got, want) {
		t.Fatalf("ScrubEnv = %v, want %v", got, want)
	}
}

func TestScrubEnvRules(t *testing.T) {
	env := []string{
		"PATH=/bin", "HOME=/h", "LANG=C",
		"GITHUB_TOKEN=1", "INPUT_GITHUB_TOKEN=2", "INPUT_AGENT=3", "ACTIONS_RUNTIME_TOKEN=4", "ACTIONS_ID_TOKEN_REQUEST_URL=5",
		"AWS_SECRET_ACCESS_KEY=6", "DB_PASSWORD=7", "MY_SECRET=8", "ANTHROPIC_API_KEY=9", "SIGNING_KEY=10",
		"LLM_GATEWAY=11", // named by --api-key-env
		"GITHUB_ENV=/r/env", "GITHUB_PATH=/r/path", "GITHUB_OUTPUT=/r/out", "GITHUB_STATE=/r/state",
		"GITHUB_STEP_SUMMARY=/r/sum", "BASH_ENV=/x", "ENV=/y", "SSH_AUTH_SOCK=/s",
		"GITHUB_REPOSITORY=o/r", "KEYBOARD=us", "TOKENIZERS_PARALLELISM=false",
	}
	got := ScrubEnv(env, []string{"DB_PASSWORD", "GITHUB_ENV", "BASH_ENV"}, "LLM_GATEWAY")
	want := []string{"PATH=/bin", "HOME=/h", "LANG=C", "DB_PASSWORD=7", "GITHUB_REPOSITORY=o/r", "KEYBOARD=us"}
	if !slices.Equal(got, want) {
		t.Fatalf("ScrubEnv =\n%v\nwant\n%v", got, want)
	}
	// Allowing the --api-key-env variable by name lets it through.
	if got := ScrubEnv([]string{"LLM_GATEWAY=k"}, []string{"LLM_GATEWAY"}, "LLM_GATEWAY"); len(got) != 1 {
		t.Errorf("allowed api key variable dropped: %v", got)
	}
}

func TestSecretValuesAndRedact(t *testing.T) {
	env := []string{"PATH=/usr/bin:/bin", "GITHUB_TOKEN=ghs_abcdefgh", "SHORT_TOKEN=abc", "LLM=key-12345678", "OK_KEY=allowed-value",
		"GITHUB_ENV=/runner/env/file", "INPUT_AGENT_COMMAND=/usr/bin/my-agent"}
	got := SecretValues(env, []string{"OK_KEY"}, "LLM")
	want := map[string]string{"ghs_abcdefgh": "GITHUB_TOKEN", "key-12345678": "LLM"}
	if len(got) != len(want) || got["ghs_abcdefgh"] != "GITHUB_TOKEN" || got["key-12345678"] != "LLM" {
		t.Fatalf("SecretValues = %v, want %v", got, want)
	}
	if r := Redact("token ghs_abcdefgh and key-12345678!", got); r != "token [redacted GITHUB_TOKEN] and [redacted LLM]!" {
		t.Errorf("Redact = %q", r)
	}
}
