package repomap

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/safefile"
)

// cacheVersion changes whenever Map's encoding or the extraction rules
// change, so stale caches are never read as current.
const cacheVersion = "repomap-v7"

// keepCaches bounds how many maps stay on disk per cache directory.
const keepCaches = 8

// gitStateKey is the key of the work tree at root (see stateKeyer):
// any change to a tracked or untracked file's contents, mode or identity,
// to which files exist, or to what the index stages changes it, without
// reading file contents.
func gitStateKey(ctx context.Context, root string, g *gitInfo, opts Options) (string, error) {
	dir, err := cacheDir(g, opts)
	if err != nil {
		return "", err
	}
	k := &stateKeyer{root: root, git: g, cache: dir, opts: opts, now: time.Now}
	return k.key(ctx)
}

// statKey identifies a non-git directory by the names, sizes and mtimes of
// its files.
func statKey(root string, files []string, opts Options) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%s", cacheVersion, opts.MaxFileBytes, root)
	for _, p := range files {
		fmt.Fprintf(h, "\x00%s", p)
		if st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			fmt.Fprintf(h, " %d %d", st.Size(), st.ModTime().UnixNano())
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// cacheDir is where maps of root are cached: the caller's folder, the
// repository's git directory, the user's cache folder, or, with none of
// those (no HOME), a folder of this user's own in the temporary folder.
// That one is refused with safefile.ErrNotPrivate when another user made
// it, it is a link or others may write to it: the temporary folder is
// shared, and a map read from there would be whatever they put in it.
func cacheDir(g *gitInfo, opts Options) (string, error) {
	if opts.CacheDir != "" {
		return opts.CacheDir, nil
	}
	if g != nil {
		return filepath.Join(g.commonDir, "planex", "cache"), nil
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "planex", "repomap"), nil
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("planex-cache-%d", os.Getuid()))
	if err := safefile.PrivateDir(dir); err != nil {
		return "", fmt.Errorf("choosing the repository map's cache folder: %w", err)
	}
	return dir, nil
}

type cacheFile struct {
	Version string
	Map     *Map
}

func cachePath(dir, key string) string { return filepath.Join(dir, "repomap-"+key+".gob") }

func loadCache(dir, key string) (*Map, error) {
	// A link in the cache's place is not followed to a map put elsewhere.
	f, err := safefile.OpenNoFollow(cachePath(dir, key))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var c cacheFile
	if err := gob.NewDecoder(bufio.NewReaderSize(f, 1<<16)).Decode(&c); err != nil {
		return nil, fmt.Errorf("decoding cache %s: %w", f.Name(), err)
	}
	if c.Version != cacheVersion || c.Map == nil {
		return nil, fmt.Errorf("cache %s: version %q, want %q", f.Name(), c.Version, cacheVersion)
	}
	// Deps index Entries: a file that names one out of range is not a
	// map this package wrote.
	for i := range c.Map.Entries {
		for _, d := range c.Map.Entries[i].Deps {
			if d < 0 || int(d) >= len(c.Map.Entries) {
				return nil, fmt.Errorf("cache %s: %s depends on file %d of %d", f.Name(), c.Map.Entries[i].Path, d, len(c.Map.Entries))
			}
		}
	}
	if c.Map.Languages == nil {
		c.Map.Languages = map[string]int{}
	}
	if c.Map.Skipped == nil {
		c.Map.Skipped = map[string]int{}
	}
	return c.Map, nil
}

// saveCache writes atomically: concurrent readers see the old file or the
// whole new one, never a torn write.
func saveCache(dir, key string, m *Map) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating cache dir: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".repomap-*.tmp")
	if err != nil {
		return fmt.Errorf("creating cache file: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	w := bufio.NewWriterSize(tmp, 1<<16)
	if err := gob.NewEncoder(w).Encode(cacheFile{Version: cacheVersion, Map: m}); err != nil {
		tmp.Close()
		return fmt.Errorf("encoding cache: %w", err)
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), cachePath(dir, key)); err != nil {
		return fmt.Errorf("installing cache: %w", err)
	}
	PruneCache(dir, "repomap-", ".gob", keepCaches)
	return nil
}

// PruneCache keeps the keep newest files of dir whose names have the
// given prefix and suffix (maps, and locate's indexes beside them) and
// removes the rest: older tree states are unlikely to be asked about
// again. Failures only leave files behind.
func PruneCache(dir, prefix, suffix string, keep int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type aged struct {
		name string
		mod  int64
	}
	var files []aged
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !strings.HasSuffix(e.Name(), suffix) {
			continue
		}
		if info, err := e.Info(); err == nil {
			files = append(files, aged{e.Name(), info.ModTime().UnixNano()})
		}
	}
	if len(files) <= keep {
		return
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod > files[j].mod })
	for _, f := range files[keep:] {
		os.Remove(filepath.Join(dir, f.name))
	}
}
