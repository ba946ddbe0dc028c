package agent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/planexhq/planex/internal/egress"
	"github.com/planexhq/planex/internal/sandbox"
)

// runnerEnv is the environment the Actions runner gives a step on a
// hosted Ubuntu runner (names as the runner and the image set them),
// with the workflow's secrets and planex's own inputs added.
var runnerEnv = []string{
	"CI=true", "GITHUB_ACTION=__planexhq_planex", "GITHUB_ACTION_PATH=/home/runner/work/_actions/planexhq/planex/v1",
	"GITHUB_ACTION_REPOSITORY=planexhq/planex", "GITHUB_ACTIONS=true", "GITHUB_ACTOR=octocat", "GITHUB_ACTOR_ID=1",
	"GITHUB_API_URL=https://api.github.com", "GITHUB_BASE_REF=", "GITHUB_ENV=/home/runner/work/_temp/_runner_file_commands/set_env_1",
	"GITHUB_EVENT_NAME=issue_comment", "GITHUB_EVENT_PATH=/home/runner/work/_temp/_github_workflow/event.json",
	"GITHUB_GRAPHQL_URL=https://api.github.com/graphql", "GITHUB_HEAD_REF=", "GITHUB_JOB=planex",
	"GITHUB_OUTPUT=/home/runner/work/_temp/_runner_file_commands/set_output_1", "GITHUB_PATH=/home/runner/work/_temp/_runner_file_commands/add_path_1",
	"GITHUB_REF=refs/heads/main", "GITHUB_REF_NAME=main", "GITHUB_REF_PROTECTED=true", "GITHUB_REF_TYPE=branch",
	"GITHUB_REPOSITORY=o/r", "GITHUB_REPOSITORY_ID=2", "GITHUB_REPOSITORY_OWNER=o", "GITHUB_REPOSITORY_OWNER_ID=3",
	"GITHUB_RETENTION_DAYS=90", "GITHUB_RUN_ATTEMPT=1", "GITHUB_RUN_ID=4", "GITHUB_RUN_NUMBER=5",
	"GITHUB_SERVER_URL=https://github.com", "GITHUB_SHA=abc", "GITHUB_STATE=/home/runner/work/_temp/_runner_file_commands/save_state_1",
	"GITHUB_STEP_SUMMARY=/home/runner/work/_temp/_runner_file_commands/step_summary_1", "GITHUB_TRIGGERING_ACTOR=octocat",
	"GITHUB_WORKFLOW=planex", "GITHUB_WORKFLOW_REF=o/r/.github/workflows/planex.yml@refs/heads/main", "GITHUB_WORKFLOW_SHA=abc",
	"GITHUB_WORKSPACE=/home/runner/work/r/r", "RUNNER_ARCH=X64", "RUNNER_DEBUG=1", "RUNNER_ENVIRONMENT=github-hosted",
	"RUNNER_NAME=GitHub Actions 6", "RUNNER_OS=Linux", "RUNNER_TEMP=/home/runner/work/_temp", "RUNNER_TOOL_CACHE=/opt/hostedtoolcache",
	"RUNNER_TRACKING_ID=github_6", "RUNNER_WORKSPACE=/home/runner/work/r",
	"ACTIONS_RUNTIME_TOKEN=eyJ-runtime", "ACTIONS_RUNTIME_URL=https://pipelines.actions.githubusercontent.com/x/",
	"ACTIONS_CACHE_URL=https://artifactcache.actions.githubusercontent.com/x/", "ACTIONS_RESULTS_URL=https://results-receiver.actions.githubusercontent.com/",
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN=eyJ-oidc", "ACTIONS_ID_TOKEN_REQUEST_URL=https://pipelines.actions.githubusercontent.com/oidc",
	"ACTIONS_ORCHESTRATION_ID=x", "GITHUB_TOKEN=ghs_token", "INPUT_GITHUB-TOKEN=ghs_token", "INPUT_AGENT=claude",
	"ANTHROPIC_API_KEY=sk-ant-x", "DATABASE_URL=postgres://u:p@db/x",
	"ImageOS=ubuntu24", "ImageVersion=20250101.1", "JAVA_HOME_17_X64=/usr/lib/jvm/17", "ANDROID_HOME=/usr/local/lib/android/sdk",
	"PIPX_HOME=/opt/pipx", "POWERSHELL_DISTRIBUTION_CHANNEL=GitHub-Actions-ubuntu24", "XDG_CONFIG_HOME=/home/runner/.config",
	"XDG_RUNTIME_DIR=/run/user/1001", "SGX_AESM_ADDR=1", "ACCEPT_EULA=Y", "DEBIAN_FRONTEND=noninteractive",
	"USER=runner", "HOME=/home/runner", "SHELL=/bin/bash", "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin",
	"SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "DOCKER_HOST=unix:///var/run/docker.sock", "BASH_ENV=/x", "ENV=/y",
	"NODE_OPTIONS=--require /x.js", "LD_PRELOAD=/x.so", "LC_DEPLOY_TOKEN=tok",
}

// TestActionEnvironmentReachingAStep: the exact names a contained step
// of the Action gets (docs/security.md, section 2), from the
// environment the runner gives planex: the runner's context, what
// programs need, the private home and /tmp, the proxy variables, and
// nothing else. A name added to the default list fails here until this
// list, and the documentation, say so.
func TestActionEnvironmentReachingAStep(t *testing.T) {
	t.Parallel()
	box, err := sandbox.New(context.Background(), sandbox.ModeAuto)
	if err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	if err := box.ProbeNetwork(context.Background()); err != nil {
		t.Skipf("this machine cannot make network namespaces: %v", err)
	}
	c := Containment{Sandbox: box, Egress: &Egress{Log: &egress.Log{}}}
	out := runContained(t, c, runnerEnv, "/usr/bin/env")
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, _, _ := strings.Cut(line, "=")
		got = append(got, name)
	}
	want := []string{
		"CI", "DEBIAN_FRONTEND", "HOME", "LANG", "PATH", "SHELL", "TMPDIR", "USER",
		"GITHUB_ACTIONS", "GITHUB_ACTOR", "GITHUB_ACTOR_ID", "GITHUB_API_URL", "GITHUB_BASE_REF", "GITHUB_EVENT_NAME",
		"GITHUB_GRAPHQL_URL", "GITHUB_HEAD_REF", "GITHUB_JOB", "GITHUB_REF", "GITHUB_REF_NAME", "GITHUB_REF_PROTECTED",
		"GITHUB_REF_TYPE", "GITHUB_REPOSITORY", "GITHUB_REPOSITORY_ID", "GITHUB_REPOSITORY_OWNER", "GITHUB_REPOSITORY_OWNER_ID",
		"GITHUB_RUN_ATTEMPT", "GITHUB_RUN_ID", "GITHUB_RUN_NUMBER", "GITHUB_SERVER_URL", "GITHUB_SHA", "GITHUB_TRIGGERING_ACTOR",
		"GITHUB_WORKFLOW", "GITHUB_WORKFLOW_REF", "GITHUB_WORKFLOW_SHA", "GITHUB_WORKSPACE",
		"RUNNER_ARCH", "RUNNER_DEBUG", "RUNNER_ENVIRONMENT", "RUNNER_NAME", "RUNNER_OS", "RUNNER_TEMP", "RUNNER_TOOL_CACHE",
	}
	want = append(want, proxyVars()...)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("a contained step's variables:\n%q\nwant exactly\n%q", got, want)
	}
	if strings.Contains(out, "HOME=/home/runner\n") || !strings.Contains(out, "TMPDIR=/tmp\n") {
		t.Errorf("the step's home or temporary folder is the runner's:\n%s", out)
	}
}
