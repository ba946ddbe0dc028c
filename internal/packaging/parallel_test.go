package packaging

import (
	"go/ast"
	"strings"
	"testing"
)

// parallelPackages are the packages whose tests start real processes (planex
// itself, git, the coding CLIs) and spend most of their time waiting on them.
// Run one after another they took minutes (issue 32, item 4), so each of
// their top-level tests opens with t.Parallel(), but those in serialTests.
var parallelPackages = []string{"internal/cli", "internal/agent/clis", "internal/gitrepo", "internal/sandbox"}

// serialTests may not run beside others, and say why.
var serialTests = map[string]string{
	"internal/cli.TestUnknownCommandSuggestions":      "changes the process's working directory",
	"internal/cli.TestBenchWidePlan":                  "times runs against each other (and runs only with PLANEX_BENCH)",
	"internal/cli.TestCommandUnderAccountHomeRefused": "sets HOME for the whole process",
	"internal/agent/clis.TestMissingBinary":           "sets PATH for the whole process",
	// The counting git is put first on the process's PATH.
	"internal/gitrepo.TestGitProcessesPerTaskCommit":           "puts a counting git on the process's PATH",
	"internal/gitrepo.TestStateSaveOnCountsAndParents":         "puts a counting git on the process's PATH",
	"internal/gitrepo.TestConfigFileReadOnce":                  "puts a counting git on the process's PATH",
	"internal/gitrepo.TestRedTeamExcludesFileIsAFIFO":          "sets XDG_CONFIG_HOME, where git looks for the user's default ignore file",
	"internal/gitrepo.TestStateIsOneGitProcess":                "puts a counting git on the process's PATH",
	"internal/gitrepo.TestResolveFoldersReadsAtOnce":           "puts a counting git on the process's PATH",
	"internal/gitrepo.TestReadConfigFilesOneGit":               "puts a counting git on the process's PATH",
	"internal/gitrepo.TestFetchRefConnections":                 "puts a counting git on the process's PATH",
	"internal/gitrepo.TestRedTeamListingsRunNoDriverUnscanned": "puts a counting git on the process's PATH and plants programs through HOME",
	// The attack or the user's setting is in the process's environment, as
	// it is in planex's.
	"internal/gitrepo.TestIgnoredGlobalExcludes":                  "names the user's global config in GIT_CONFIG_GLOBAL",
	"internal/gitrepo.TestRedTeamRepositoryUnignoresUserSecrets":  "names the user's global config in GIT_CONFIG_GLOBAL",
	"internal/gitrepo.TestIgnoredRepeatedListingProcesses":        "names the user's global config in GIT_CONFIG_GLOBAL and counts git processes",
	"internal/gitrepo.TestIgnoredRelistSeesChanges":               "names the user's global config in GIT_CONFIG_GLOBAL",
	"internal/gitrepo.TestIgnoredExcludesWithIncludes":            "names the user's global config in GIT_CONFIG_GLOBAL",
	"internal/gitrepo.TestRedTeamGitRepoAPIRunsNoPlantedProgram":  "plants programs through HOME and GIT_* variables",
	"internal/gitrepo.TestRedTeamGitIdentityFromGlobalConfig":     "sets HOME and GIT_CONFIG_* for the identity Open reads",
	"internal/gitrepo.TestRedTeamGitProgramsOnRelativePath":       "plants relative folders on PATH",
	"internal/gitrepo.TestRedTeamGitProgramsOnAbsolutePathInRepo": "plants the repository's folders on PATH",
	"internal/gitrepo.TestRedTeamGitProgramsInWritableFolder":     "plants a writable folder on PATH",
	"internal/gitrepo.TestRedTeamHTTPSTrustFromRepositoryConfig":  "unsets GIT_SSL_CAINFO and GIT_SSL_CAPATH, which git takes over the config's authority",
	"internal/gitrepo.TestWorktreeLivesOutsideTheRepository":      "sets TMPDIR for the OS temp dir row",
	// What they measure is the whole process's.
	"internal/gitrepo.TestRedTeamChangeListBounded":        "measures the process's allocations",
	"internal/gitrepo.TestRedTeamRemoteRefListingBounded":  "measures the process's allocations",
	"internal/gitrepo.TestRedTeamIgnorerBounded":           "measures the process's allocations",
	"internal/gitrepo.TestRedTeamIgnorerBoundsPatternText": "measures the process's allocations",
	"internal/gitrepo.TestRedTeamLinkTargetsBounded":       "measures the process's allocations",
	"internal/gitrepo.TestRedTeamManyShortLinksBounded":    "measures the process's allocations",
	"internal/gitrepo.TestRedTeamParentsBounded":           "measures the process's allocations",
	"internal/gitrepo.TestRedTeamTaskHistoryBounded":       "measures the process's allocations",
	"internal/gitrepo.TestRedTeamLinkWayListingBounded":    "measures the process's allocations",
	"internal/gitrepo.TestRedTeamCommitMessageBounded":     "measures the process's allocations",
	"internal/gitrepo.TestRedTeamGitStderrBounded":         "measures the process's allocations",
	"internal/gitrepo.TestRedTeamFolderListingBounded":     "measures the process's allocations",
	"internal/gitrepo.TestRedTeamFolderTextBounded":        "measures the process's allocations",
	// internal/sandbox: serial tests finish before parallel ones resume,
	// so these see no other test's sandbox.
	"internal/sandbox.TestBuildRoot":                             "ends an OS thread (inThread), whose Pdeathsig would kill an init another test forked from it",
	"internal/sandbox.TestBuildRootErrors":                       "ends an OS thread (inThread), whose Pdeathsig would kill an init another test forked from it",
	"internal/sandbox.TestMaskKinds":                             "ends an OS thread (inThread), whose Pdeathsig would kill an init another test forked from it",
	"internal/sandbox.TestStartNetwork":                          "ends an OS thread (inThread), whose Pdeathsig would kill an init another test forked from it",
	"internal/sandbox.TestLeaveSessionKeyring":                   "ends an OS thread (inThread), whose Pdeathsig would kill an init another test forked from it",
	"internal/sandbox.TestSessionKeyringOutOfReach":              "joins a session keyring on an OS thread it then hands back to other goroutines",
	"internal/sandbox.TestContainment":                           "sets a secret in the process's environment with t.Setenv",
	"internal/sandbox.TestLendingIsHeldAcrossTempDirs":           "sets TMPDIR with t.Setenv",
	"internal/sandbox.TestLimitsStopRunawaySteps":                "runs a fork bomb and a memory hog under limits counted for the sandbox's uid, shared by every test's sandbox",
	"internal/sandbox.TestDiskFillEndsTheStep":                   "mounts a file system on the host while other sandboxes copy its mounts, and needs the init's disk looks on time",
	"internal/sandbox.TestInodeFillEndsTheStep":                  "mounts a file system on the host while other sandboxes copy its mounts, and needs the init's disk looks on time",
	"internal/sandbox.TestRedTeamDiskFillBetweenLooks":           "mounts a file system on the host, and a step fills it between looks 20 ms apart: the machine must be quiet",
	"internal/sandbox.TestKernelCountsBoundedPerStep":            "counts the inotify instances and namespaces of the whole machine's user",
	"internal/sandbox.TestRedTeamStepsShareKernelCounts":         "counts the inotify instances of the whole machine's user",
	"internal/sandbox.TestRedTeamParkedPtysBounded":              "measures the machine's pool of terminals, which other tests' terminals move",
	"internal/sandbox.TestRedTeamParkedNamespaceDiesWithTheStep": "measures the machine's shared memory",
	"internal/sandbox.TestRedTeamNothingOutlivesTheStep":         "looks through every process's namespaces, whose numbers other tests' new namespaces may take",
	// They plant a host service's socket or secret in the machine's own
	// folders (fixed names among them), which every sandbox built
	// meanwhile walks and covers.
	"internal/sandbox.TestMountedSecretsHidden":                 "plants a secret under /run/secrets, which every sandbox built meanwhile covers",
	"internal/sandbox.TestOtherCIRunnerConfigsHidden":           "plants runner configurations under /etc and /opt, which every sandbox built meanwhile covers",
	"internal/sandbox.TestRedTeamClusterCredentialsHidden":      "plants cluster credentials under /etc and /var/snap, which every sandbox built meanwhile covers",
	"internal/sandbox.TestRedTeamBuildkiteAgentHooksHidden":     "plants /etc/buildkite-agent, which every sandbox built meanwhile covers, and removes it after",
	"internal/sandbox.TestCrashDumpsHidden":                     "plants crash dumps under /var/crash, which every sandbox built meanwhile covers",
	"internal/sandbox.TestSystemdRuntimeUnitsHidden":            "plants units under /run/systemd and /run/credentials, which every sandbox built meanwhile covers",
	"internal/sandbox.TestContainerRuntimeStateHidden":          "plants bundles under /run/containerd and /run/docker, which every sandbox built meanwhile covers",
	"internal/sandbox.TestCloudProvisioningDataHidden":          "plants user data under /var/lib/cloud, /run/cloud-init and /var/lib/waagent, which every sandbox built meanwhile covers",
	"internal/sandbox.TestHostServiceSocketsOutOfReach":         "plants a socket under /run, which every sandbox built meanwhile walks",
	"internal/sandbox.TestContainerManagerSocketsOutOfReach":    "plants sockets at container managers' fixed paths, which every sandbox built meanwhile walks",
	"internal/sandbox.TestBoundSocketsOutsideRunOutOfReach":     "binds sockets under /var/lib, /opt and /srv, which every sandbox built meanwhile covers",
	"internal/sandbox.TestRedTeamLateSocketUnderRunOutOfReach":  "plants a socket under /run, which every sandbox built meanwhile walks",
	"internal/sandbox.TestRedTeamSessionSocketsOutOfReach":      "makes and removes /run/screen, /mnt/wslg and /run/WSL, which every sandbox built meanwhile walks",
	"internal/sandbox.TestRedTeamKerberosCacheSocketOutOfReach": "plants a socket under /run, which every sandbox built meanwhile walks",
	// Entry points of child processes a test starts; in the package's
	// run they skip at once.
	"internal/sandbox.TestSandboxFDHelper":          "a child process's entry point (skips in the package's run)",
	"internal/sandbox.TestSandboxGroupsHelper":      "a child process's entry point (skips in the package's run)",
	"internal/sandbox.TestKernelProbeHelper":        "a child process's entry point (skips in the package's run)",
	"internal/sandbox.TestKeyringProbeHelper":       "a child process's entry point (skips in the package's run)",
	"internal/sandbox.TestCapInheritedHelper":       "a child process's entry point (skips in the package's run)",
	"internal/sandbox.TestMemoryCgroupProbeHelper":  "a child process's entry point (skips in the package's run)",
	"internal/sandbox.TestDescriptorHogHelper":      "a child process's entry point (skips in the package's run)",
	"internal/sandbox.TestMemoryHogHelper":          "a child process's entry point (skips in the package's run)",
	"internal/sandbox.TestInotifyHogHelper":         "a child process's entry point (skips in the package's run)",
	"internal/sandbox.TestMountAPIProbeHelper":      "a child process's entry point (skips in the package's run)",
	"internal/sandbox.TestLeaseProbeHelper":         "a child process's entry point (skips in the package's run)",
	"internal/sandbox.TestMachineCountsProbeHelper": "a child process's entry point (skips in the package's run)",
	"internal/sandbox.TestHostIPCProbeHelper":       "a child process's entry point (skips in the package's run)",
}

// TestSlowPackagesTestInParallel: every top-level test of parallelPackages
// opens with t.Parallel(), or is a known serial test that indeed does not.
// (A test that sets the process's environment with t.Setenv cannot be
// parallel; the end-to-end fixtures pass what they need to each child
// process instead.)
func TestSlowPackagesTestInParallel(t *testing.T) {
	t.Parallel()
	s := mustSource(t)
	serial := map[string]bool{}
	for name := range serialTests {
		serial[name] = true
	}
	seen := map[string]bool{}
	for _, dir := range parallelPackages {
		p := s.pkgs[dir]
		if p == nil {
			t.Fatalf("no package %s", dir)
		}
		tests := 0
		for _, f := range append(append([]*ast.File{}, p.tests...), p.xtests...) {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || !isTopLevelTest(fn) {
					continue
				}
				tests++
				name := dir + "." + fn.Name.Name
				switch parallel := opensWithParallel(fn); {
				case serial[name] && !parallel:
					seen[name] = true
				case !serial[name] && !parallel:
					t.Errorf("%s (%s) does not open with t.Parallel(): the tests of %s run side by side; make it independent of the others (no t.Setenv, no os.Chdir, its own folders and ports) or list it in serialTests with the reason", name, s.where(fn.Pos()), dir)
				}
			}
		}
		if tests < 5 {
			t.Errorf("found only %d tests in %s: the check reads the wrong files", tests, dir)
		}
	}
	checkExceptions(t, "tests running in parallel", serial, seen)
}

// isTopLevelTest reports whether fn is a func TestXxx(t *testing.T) that go
// test runs (TestMain aside).
func isTopLevelTest(fn *ast.FuncDecl) bool {
	if fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
		return false
	}
	params := fn.Type.Params.List
	if len(params) != 1 || len(params[0].Names) != 1 {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}

// opensWithParallel reports whether fn's first statement is t.Parallel()
// on its own *testing.T.
func opensWithParallel(fn *ast.FuncDecl) bool {
	if fn.Body == nil || len(fn.Body.List) == 0 {
		return false
	}
	stmt, ok := fn.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := stmt.X.(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Parallel" {
		return false
	}
	recv, ok := sel.X.(*ast.Ident)
	return ok && recv.Name == fn.Type.Params.List[0].Names[0].Name
}
