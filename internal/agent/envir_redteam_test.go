package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRedTeamGradleOnPathCredentials: a Gradle installation unpacked
// outside every home and put on PATH through a link (a self-hosted
// runner's /usr/local/bin/gradle -> /opt/gradle-8.10/bin/gradle, the
// way Gradle's installation guide and many images do it, with no
// GRADLE_HOME set) keeps an admin's repository password in its
// gradle.properties and its init.d scripts. A contained agent read
// both by the path the link gives away. Now they are covered, and the
// rest of the installation (its lib folder) stays readable.
func TestRedTeamGradleOnPathCredentials(t *testing.T) {
	t.Parallel()
	box, dir := sandboxAndHostFolder(t, "planex-gradlepath-")
	files := map[string]string{
		"opt/gradle-8.10/gradle.properties":            "systemProp.https.proxyPassword=loot-gradle-path-props",
		"opt/gradle-8.10/init.d/corp.gradle":           "credentials { password 'loot-gradle-path-init' }",
		"opt/gradle-8.10/lib/gradle-launcher-8.10.jar": "gradle-lib-readable",
		"opt/gradle-8.10/bin/gradle":                   "#!/bin/sh",
		"opt/gradle-other/gradle.properties":           "org.gradle.jvmargs=-Xmx2g",
	}
	plant(t, dir, files)
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../opt/gradle-8.10/bin/gradle", filepath.Join(bin, "gradle")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + ":/usr/bin:/bin"}
	checkPlantedReads(t, "", Containment{Sandbox: box}, env, dir, files)
}
