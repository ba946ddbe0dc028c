package agent

import (
	"path/filepath"
	"slices"
	"strings"
)

// A TeamCity build's credentials.
//
// TeamCity hands a build its parameters in properties files it names in
// the build's environment (TEAMCITY_BUILD_PROPERTIES_FILE, and from it
// the configuration's and the runner's), each also as XML beside it:
// they hold the build's own REST credentials (teamcity.auth.userId and
// teamcity.auth.password) and the values of the configuration's password
// parameters. The build agent's own configuration
// (<agent.home.dir>/conf/buildAgent.properties) holds the token it
// authenticates to the server with. All lie outside every home, readable
// by the user builds run as; planex covers them while it holds the
// variable.

// teamcityPropertyFiles are the keys of a build's properties file that
// name another properties file.
var teamcityPropertyFiles = []string{"teamcity.configuration.properties.file", "teamcity.runner.properties.file"}

// teamcityFiles are the files of a TeamCity build base (planex's
// environment) names, existing or not.
func teamcityFiles(base []string) []string {
	build := lookup(base, "TEAMCITY_BUILD_PROPERTIES_FILE")
	if !filepath.IsAbs(build) {
		return nil
	}
	out := []string{build, build + ".xml"}
	for _, line := range readLines(build) {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), javaPropertyValue(v)
		switch {
		case !filepath.IsAbs(v):
		case k == "agent.home.dir":
			out = append(out, filepath.Join(v, "conf", "buildAgent.properties"))
		case slices.Contains(teamcityPropertyFiles, k):
			out = append(out, v, v+".xml")
		}
	}
	return out
}

// javaPropertyValue is a Java properties file's value with its escapes
// removed (TeamCity writes \: for a colon) and its surrounding blanks.
func javaPropertyValue(v string) string {
	var b strings.Builder
	v = strings.TrimSpace(v)
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
