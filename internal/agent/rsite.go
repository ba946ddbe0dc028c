package agent

import (
	"os"
	"path/filepath"
	"slices"
)

// maxRPathDirs bounds the PATH folders looked at for an R.
const maxRPathDirs = 64

// rSiteEnvirons are the site environment files of the R installations
// base leads to, which R reads into every session as /etc/R's
// (sysConfigs'): the one R_ENVIRON names, R_HOME's etc/Renviron.site,
// and that of the installation each R on PATH belongs to (rig's and
// r-lib's setup-r's /opt/R/<version>/bin/R, whose home is
// /opt/R/<version>/lib/R), its links followed.
func rSiteEnvirons(base []string) []string {
	var out []string
	add := func(p string) {
		if filepath.IsAbs(p) && !slices.Contains(out, p) {
			if _, err := os.Stat(p); err == nil {
				out = append(out, p)
			}
		}
	}
	add(lookup(base, "R_ENVIRON"))
	if h := lookup(base, "R_HOME"); filepath.IsAbs(h) {
		add(filepath.Join(h, "etc", "Renviron.site"))
	}
	for i, dir := range filepath.SplitList(lookup(base, "PATH")) {
		if i >= maxRPathDirs || !filepath.IsAbs(dir) {
			continue
		}
		real, err := filepath.EvalSymlinks(filepath.Join(dir, "R"))
		if err != nil {
			continue
		}
		prefix := filepath.Dir(filepath.Dir(real))
		for _, lib := range []string{"lib", "lib64"} {
			add(filepath.Join(prefix, lib, "R", "etc", "Renviron.site"))
		}
	}
	return out
}
