package repomap

import "hash/maphash"

// pathIndex finds a file's place in Map.Entries by its path. It is an
// open-addressing table of file numbers (plus one; zero is a free slot)
// hashed by path and at most half full, the paths themselves read from
// the entries: 8 to 16 bytes a file, where a Go map from every path to
// its number took about 40 (import resolution looks up every import's
// candidate paths, so a binary search of the entries is too slow here).
type pathIndex struct {
	seed  maphash.Seed
	slots []int32
	files fileSet
}

func newPathIndex(files fileSet) pathIndex {
	n := files.len()
	size := 16
	for size < 2*n {
		size *= 2
	}
	ix := pathIndex{seed: maphash.MakeSeed(), slots: make([]int32, size), files: files}
	// A path listed twice names its last file, as a map's last store
	// would.
	for i := range n {
		ix.slots[ix.slot(files.path(i))] = int32(i) + 1
	}
	return ix
}

// slot is where p is, or the free slot where it would go.
func (ix pathIndex) slot(p string) int {
	mask := len(ix.slots) - 1
	s := int(maphash.String(ix.seed, p)) & mask
	for ix.slots[s] != 0 && ix.files.path(int(ix.slots[s]-1)) != p {
		s = (s + 1) & mask
	}
	return s
}

// find is the number of the file at path p.
func (ix pathIndex) find(p string) (int32, bool) {
	if len(ix.slots) == 0 {
		return 0, false
	}
	n := ix.slots[ix.slot(p)]
	return n - 1, n != 0
}

// hasJoined says whether the map has a file at dir+name, hashing and
// comparing the two parts without joining them.
func (ix pathIndex) hasJoined(dir, name string) bool {
	if len(ix.slots) == 0 {
		return false
	}
	var h maphash.Hash
	h.SetSeed(ix.seed)
	h.WriteString(dir)
	h.WriteString(name)
	mask := len(ix.slots) - 1
	for s := int(h.Sum64()) & mask; ix.slots[s] != 0; s = (s + 1) & mask {
		p := ix.files.path(int(ix.slots[s] - 1))
		if len(p) == len(dir)+len(name) && p[:len(dir)] == dir && p[len(dir):] == name {
			return true
		}
	}
	return false
}
