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
