package agent

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/planexhq/planex/internal/gitrepo"
)

// ErrPastBound is returned when planex's environment or the machine
// holds more of something than planex follows to hide the credentials
// it leads to: no step starts, rather than one shown the rest whole.
var ErrPastBound = errors.New("more than planex follows to hide credentials")

// environmentPastBound checks, for each reading of base (planex's
// environment, envReadings) and the unit folders under etc, that no
// list planex follows is longer than it reads: PATH and XDG_CONFIG_DIRS
// folders (maxPathDirs), git's configuration pairs from the environment
// (maxGitConfigPairs) and unit files (maxUnitFiles).
func environmentPastBound(base []string, etc string) error {
	for _, b := range envReadings(base) {
		for _, v := range []string{"PATH", "XDG_CONFIG_DIRS"} {
			if n := len(filepath.SplitList(lookup(b, v))); n > maxPathDirs {
				return fmt.Errorf("%s holds %d folders, planex follows %d: shorten it: %w", v, n, maxPathDirs, ErrPastBound)
			}
		}
		if n := gitConfigCount(lookup(b, "GIT_CONFIG_COUNT")); n > maxGitConfigPairs {
			return fmt.Errorf("GIT_CONFIG_COUNT is %d, planex follows %d pairs: %w", n, maxGitConfigPairs, ErrPastBound)
		}
		if n := len(gitrepo.ShellWords(lookup(b, "GIT_CONFIG_PARAMETERS"))); n > maxGitConfigPairs {
			return fmt.Errorf("GIT_CONFIG_PARAMETERS holds %d settings, planex follows %d: %w", n, maxGitConfigPairs, ErrPastBound)
		}
	}
	for _, d := range unitFolders(etc) {
		dir, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if n := len(unitFiles(dir)); n > maxUnitFiles {
			return fmt.Errorf("%s holds %d unit files, planex reads %d for the environment files they name: %w", dir, n, maxUnitFiles, ErrPastBound)
		}
	}
	return nil
}

// gitConfigCount is GIT_CONFIG_COUNT's value as git reads it (strtoul
// in base 10: blanks and a sign before the digits, nothing after); 0
// for a value git refuses, or a negative one (git then stops at the
// first missing pair and reads no configuration at all).
func gitConfigCount(v string) int {
	n, err := strconv.Atoi(strings.TrimLeft(v, " \t\n\v\f\r"))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
