package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/planexhq/planex/internal/apicommit"
	"github.com/planexhq/planex/internal/engine"
	"github.com/planexhq/planex/internal/gh"
	"github.com/planexhq/planex/internal/gitrepo"
)

// signingRemote is the git remote that is the GitHub repository the
// commits are made in.
const signingRemote = "origin"

// commitPublisher is what --commit-signing api needs locally: a token
// (GITHUB_TOKEN or GH_TOKEN), the repository (GITHUB_REPOSITORY, or the
// origin remote's GitHub URL) and the API root (GITHUB_API_URL, default
// github.com's). It returns nil for git mode.
func commitPublisher(ctx context.Context, mode string, repo *gitrepo.Repo, getenv func(string) string, retry gh.RetryPolicy, log *slog.Logger) (engine.Publisher, error) {
	if mode != apicommit.ModeAPI {
		return nil, nil
	}
	token := getenv("GITHUB_TOKEN")
	if token == "" {
		token = getenv("GH_TOKEN")
	}
	if token == "" {
		return nil, fmt.Errorf("--commit-signing api makes commits through GitHub's API and needs a token with contents: write in GITHUB_TOKEN (or GH_TOKEN)")
	}
	originURL := repo.RemoteURL(signingRemote)
	if originURL == "" {
		return nil, fmt.Errorf("--commit-signing api needs the remote %q, the GitHub repository the commits are made in", signingRemote)
	}
	full := getenv("GITHUB_REPOSITORY")
	if full == "" {
		full = githubRepoOf(originURL)
	}
	owner, name, ok := strings.Cut(full, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("--commit-signing api: cannot tell the GitHub repository from remote %q (%s); set GITHUB_REPOSITORY=owner/name", signingRemote, originURL)
	}
	serverURL := getenv("GITHUB_SERVER_URL")
	client, err := gh.NewClient(ctx, gh.Options{Token: token, APIURL: getenv("GITHUB_API_URL"), ServerURL: serverURL, UserAgent: "planex", Logger: log, Retry: retry})
	if err != nil {
		return nil, err
	}
	local, err := gitrepo.Authenticated(ctx, repo, client.ServerURL(), token)
	if err != nil {
		return nil, err
	}
	return &apicommit.Publisher{GH: client, Local: local, Owner: owner, Repo: name, Remote: signingRemote, Log: log}, nil
}

// githubRepoOf reads owner/name from a GitHub remote URL
// (https://host/owner/name.git, git@host:owner/name.git, ssh://…).
func githubRepoOf(remote string) string {
	p := ""
	if u, err := url.Parse(remote); err == nil && u.Host != "" {
		p = u.Path
	} else if host, rest, ok := strings.Cut(remote, ":"); ok && strings.Contains(host, "@") {
		p = rest // scp-like: user@host:owner/name
	}
	p = strings.TrimSuffix(strings.Trim(p, "/"), ".git")
	if strings.Count(p, "/") != 1 {
		return ""
	}
	return p
}
