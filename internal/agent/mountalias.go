package agent

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Folders reached through another mount.
//
// A folder the sandbox hides (a home, a CI system's temporary folder)
// may be mounted at a second place too: a home kept on a data disk and
// bind-mounted to /home (/data/home/ci is /home/ci), a bind mount of a
// user's folder into a chroot or a service's tree. Covering one name
// leaves the other showing the same files. The mount table tells the
// other names: every mount of the same file system whose root holds the
// folder, or lies inside it.

// maxMountinfo bounds the mount table read.
const maxMountinfo = 4 << 20

// mountEntry is one line of /proc/self/mountinfo: the file system's
// device, the folder of it mounted (root) and where (point).
type mountEntry struct {
	dev, root, point string
	// layers are an overlay's lower, upper and data folders, whose
	// files its point shows on a device of its own.
	layers []string
}

// withMountAliases is dirs with the other names the machine's mounts
// give them (hiddenAliases), but for / and the system's program folders,
// which no hidden folder's alias may cover.
func withMountAliases(dirs []string) []string {
	out := dirs
	for _, a := range hiddenAliases(readMountinfo(), dirs) {
		if a != "/" && !isProgramPath(a) {
			out = append(out, a)
		}
	}
	return out
}

// maskAliases are the other names the machine's mounts give the files
// and folders of masks (hiddenAliases), but for / and the system's
// program folders: a credential file covered by the name a variable
// gives it is read by another where its folder is mounted twice.
func maskAliases(masks []string) []string {
	info := readMountinfo()
	var out []string
	for _, a := range hiddenAliases(info, masks) {
		if a != "/" && !isProgramPath(a) {
			out = append(out, a)
		}
	}
	return out
}

// withOverlayAliases is views with each file also shown, alike, under
// the other names the machine's mounts give it (a folder bind-mounted
// from a data disk): the real file was read by the other name.
func withOverlayAliases(views []FileOverlay) []FileOverlay {
	if len(views) == 0 {
		return views
	}
	info := readMountinfo()
	out := views
	for _, v := range views {
		for _, a := range hiddenAliases(info, []string{v.Path}) {
			if !isProgramPath(a) && !slices.ContainsFunc(out, func(o FileOverlay) bool { return o.Path == a }) {
				out = append(out, FileOverlay{Path: a, Content: v.Content})
			}
		}
	}
	return out
}

// hiddenAliases are the other names, through the mounts mountinfo (the
// text of /proc/self/mountinfo) lists, of each folder of dirs (links
// resolved), not among dirs already.
func hiddenAliases(mountinfo string, dirs []string) []string {
	mounts := parseMountinfo(mountinfo)
	var out []string
	for _, d := range dirs {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		for _, a := range slices.Concat(mountAliases(mounts, real), innerMountAliases(mounts, real), overlayAliases(mounts, real)) {
			if a != real && !within(a, real) && !slices.Contains(dirs, a) && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// mountAliases are the names path (absolute, links resolved) has through
// mounts: the mount holding it gives its device and its place in that
// file system; each mount of the same device whose root holds that
// place shows it under its own point, and one whose root lies inside it
// is wholly part of it.
func mountAliases(mounts []mountEntry, path string) []string {
	home := -1
	for i, m := range mounts {
		if within(path, m.point) && (home < 0 || len(m.point) >= len(mounts[home].point)) {
			home = i
		}
	}
	if home < 0 {
		return nil
	}
	m := mounts[home]
	rel, err := filepath.Rel(m.point, path)
	if err != nil {
		return nil
	}
	inFS := filepath.Join(m.root, rel)
	var out []string
	for i, n := range mounts {
		if i == home || n.dev != m.dev {
			continue
		}
		switch {
		case within(inFS, n.root):
			r, err := filepath.Rel(n.root, inFS)
			if err == nil {
				out = append(out, filepath.Join(n.point, r))
			}
		case within(n.root, inFS):
			out = append(out, n.point)
		}
	}
	return out
}

// innerMountAliases are the other names of the mounts inside path
// (absolute, links resolved): hiding path hides a folder bound into it
// (~/.aws bound from a data disk's /data/aws), not the same files where
// their file system is mounted too. For each mount below path, each
// other mount of its device whose root holds the mount's root shows it
// under its own point, and one whose root lies inside it is wholly
// part of it.
func innerMountAliases(mounts []mountEntry, path string) []string {
	var out []string
	for i, m := range mounts {
		if m.point == path || !within(m.point, path) {
			continue
		}
		for j, n := range mounts {
			if j == i || n.dev != m.dev {
				continue
			}
			switch {
			case within(m.root, n.root):
				if r, err := filepath.Rel(n.root, m.root); err == nil {
					out = append(out, filepath.Join(n.point, r))
				}
			case within(n.root, m.root):
				out = append(out, n.point)
			}
		}
	}
	return out
}

// overlayAliases are the names path (absolute, links resolved) has
// through the overlays of mounts: an overlay whose layer lies inside
// path shows part of it at its point, wholly hidden; one whose layer
// holds path shows it below its point.
func overlayAliases(mounts []mountEntry, path string) []string {
	var out []string
	for _, m := range mounts {
		for _, l := range m.layers {
			switch {
			case within(l, path):
				out = append(out, m.point)
			case within(path, l):
				if r, err := filepath.Rel(l, path); err == nil {
					out = append(out, filepath.Join(m.point, r))
				}
			}
		}
	}
	return out
}

// parseMountinfo reads the mount table's lines; malformed ones are
// skipped.
func parseMountinfo(s string) []mountEntry {
	var out []mountEntry
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		out = append(out, mountEntry{dev: f[2], root: unescapeMount(f[3]), point: unescapeMount(f[4]), layers: overlayLayers(f)})
	}
	return out
}

// overlayLayers are the layer folders (lowerdir's, lowerdir+'s,
// upperdir, datadir+) of a mount table line's fields where its file
// system is an overlay (the type after the - that ends the optional
// fields); absolute ones only.
func overlayLayers(f []string) []string {
	i := slices.Index(f, "-")
	if i < 0 || i+3 >= len(f) || f[i+1] != "overlay" {
		return nil
	}
	var out []string
	for _, opt := range strings.Split(f[i+3], ",") {
		k, v, ok := strings.Cut(opt, "=")
		if !ok {
			continue
		}
		switch k {
		case "lowerdir", "lowerdir+", "upperdir", "datadir+":
			for _, l := range strings.Split(v, ":") {
				if l = unescapeMount(l); filepath.IsAbs(l) {
					out = append(out, filepath.Clean(l))
				}
			}
		}
	}
	return out
}

// unescapeMount decodes the octal escapes (\040 for a space) the kernel
// writes in mountinfo's paths.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readMountinfo is this process's mount table, "" when it cannot be read.
func readMountinfo() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxMountinfo))
	return string(b)
}
