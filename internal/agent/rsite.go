package agent

import (
	"os"
	"path/filepath"
	"slices"
)

// maxRPathDirs bounds the PATH folders looked at for an R.
const maxRPathDirs = 64

// rSiteEnvirons are the site environment files and site profiles of
// the R installations base leads to, which R reads into every session
// as /etc/R's (sysConfigs'): the ones R_ENVIRON and R_PROFILE name,
// R_HOME's etc/Renviron.site and etc/Rprofile.site, and those of the
// installation each R on PATH belongs to (rig's and r-lib's setup-r's
// /opt/R/<version>/bin/R, whose home is /opt/R/<version>/lib/R), its
// links followed. A site profile is R code; its Sys.setenv(NAME =
// "…") reads as the assignments the shell filter leaves out.
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
	add(lookup(base, "R_PROFILE"))
	homes := []string{lookup(base, "R_HOME")}
	for i, dir := range filepath.SplitList(lookup(base, "PATH")) {
		if i >= maxRPathDirs || !filepath.IsAbs(dir) {
			continue
		}
		real, err := filepath.EvalSymlinks(filepath.Join(dir, "R"))
		if err != nil {
			continue
		}
		prefix := filepath.Dir(filepath.Dir(real))
		homes = append(homes, filepath.Join(prefix, "lib", "R"), filepath.Join(prefix, "lib64", "R"))
	}
	for _, h := range homes {
		if filepath.IsAbs(h) {
			add(filepath.Join(h, "etc", "Renviron.site"))
			add(filepath.Join(h, "etc", "Rprofile.site"))
		}
	}
	return out
}
