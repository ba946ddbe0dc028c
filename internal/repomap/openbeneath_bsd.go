//go:build unix && !linux

package repomap

// openBeneath opens rel (slash-separated, relative) under the folder root
// one part at a time, no symlink followed in any part.
func openBeneath(root, rel string, flags int) (int, error) {
	dir, err := openRoot(root)
	if err != nil {
		return -1, err
	}
	defer closeUnless(dir, -1)
	return openPartByPart(dir, rel, flags)
}

// openBeneathAt is openBeneath under the folder open as dir.
func openBeneathAt(dir int, rel string, flags int) (int, error) {
	return openPartByPart(dir, rel, flags)
}
