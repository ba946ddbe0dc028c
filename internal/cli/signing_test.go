package cli

import "testing"

func TestGitHubRepoOfRemoteURLs(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]string{
		"https://github.com/octo/demo.git":        "octo/demo",
		"https://github.com/octo/demo":            "octo/demo",
		"git@github.com:octo/demo.git":            "octo/demo",
		"ssh://git@ghe.example.com/octo/demo.git": "octo/demo",
		"/srv/git/demo.git":                       "",
		"../demo":                                 "",
		"https://github.com/octo":                 "",
	} {
		if got := githubRepoOf(url); got != want {
			t.Errorf("githubRepoOf(%q) = %q, want %q", url, got, want)
		}
	}
}
