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
var parallelPackages = []string{"internal/cli", "internal/agent/clis", "internal/gitrepo"}

// serialTests may not run beside others, and say why.
var serialTests = map[string]string{
	"internal/cli.TestUnknownCommandSuggestions": "changes the process's working directory",
	"internal/cli.TestBenchWidePlan":             "times runs against each other (and runs only with PLANEX_BENCH)",
	"internal/agent/clis.TestMissingBinary":      "sets PATH for the whole process",
	// The counting git is put first on the process's PATH.
	"internal/gitrepo.TestGitProcessesPerTaskCommit":           "puts a counting git on the process's PATH",
	"internal/gitrepo.TestStateSaveOnCountsAndParents":         "puts a counting git on the process's PATH",
	"internal/gitrepo.TestConfigFileReadOnce":                  "puts a counting git on the process's PATH",
	"internal/gitrepo.TestStateIsOneGitProcess":                "puts a counting git on the process's PATH",
	"internal/gitrepo.TestResolveFoldersReadsAtOnce":           "puts a counting git on the process's PATH",
	"internal/gitrepo.TestReadConfigFilesOneGit":               "puts a counting git on the process's PATH",
	"internal/gitrepo.TestFetchRefConnections":                 "puts a counting git on the process's PATH",
	"internal/gitrepo.TestRedTeamListingsRunNoDriverUnscanned": "puts a counting git on the process's PATH and plants programs through HOME",
	// The attack or the user's setting is in the process's environment, as
	// it is in planex's.
	"internal/gitrepo.TestIgnoredGlobalExcludes":                  "names the user's global config in GIT_CONFIG_GLOBAL",
	"internal/gitrepo.TestIgnoredRepeatedListingProcesses":        "names the user's global config in GIT_CONFIG_GLOBAL and counts git processes",
	"internal/gitrepo.TestIgnoredRelistSeesChanges":               "names the user's global config in GIT_CONFIG_GLOBAL",
	"internal/gitrepo.TestIgnoredExcludesWithIncludes":            "names the user's global config in GIT_CONFIG_GLOBAL",
	"internal/gitrepo.TestRedTeamGitRepoAPIRunsNoPlantedProgram":  "plants programs through HOME and GIT_* variables",
	"internal/gitrepo.TestRedTeamGitIdentityFromGlobalConfig":     "sets HOME and GIT_CONFIG_* for the identity Open reads",
	"internal/gitrepo.TestRedTeamGitProgramsOnRelativePath":       "plants relative folders on PATH",
	"internal/gitrepo.TestRedTeamGitProgramsOnAbsolutePathInRepo": "plants the repository's folders on PATH",
	"internal/gitrepo.TestRedTeamGitProgramsInWritableFolder":     "plants a writable folder on PATH",
	"internal/gitrepo.TestWorktreeLivesOutsideTheRepository":      "sets TMPDIR for the OS temp dir row",
	// What they measure is the whole process's.
	"internal/gitrepo.TestRedTeamChangeListBounded":        "measures the process's allocations",
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
