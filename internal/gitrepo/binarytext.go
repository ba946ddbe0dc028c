package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/planexhq/planex/internal/plural"
)

// errStopListing ends a listing that reached its bound.
var errStopListing = errors.New("listing bound reached")

// binaryProbe is how much of a file git reads to call it binary: a NUL
// byte in its first 8000 bytes (buffer_is_binary), attributes aside.
const binaryProbe = 8000

// maxBinaryShown is the most of one binary file's content a patch shows.
const maxBinaryShown = 32 << 10

// maxFileList bounds the list of a commit's files that heads its patch.
const maxFileList = 16 << 10

// binaryNote heads the contents of the files a patch showed as binary.
const binaryNote = "\nplanex: git shows the files below as binary (each holds a NUL byte), so the patch above leaves out their content. It follows, each NUL, other control byte or invalid UTF-8 byte written as \\xNN; a script or source file can hold a NUL and still run.\n"

// commitFile is one file a commit changes against its first parent.
type commitFile struct {
	status, mode, blob, path string
	// oldMode and oldBlob are the file's in the first parent.
	oldMode, oldBlob string
}

// commitFiles lists the files sha changes against its first parent (all
// of a root commit's), bounded as DiffTrees is; cut says the list stops
// short.
func commitFiles(ctx context.Context, r *Repo, sha string) (files []commitFile, cut bool, err error) {
	var meta []string
	names := 0
	err = streamRecords(ctx, r, "", nil, []string{"diff-tree", "-r", "-z", "--root", "--no-renames", "--no-commit-id", sha, "--"}, func(rec []byte) error {
		if meta == nil {
			if meta = strings.Fields(strings.TrimPrefix(string(rec), ":")); len(meta) < 5 {
				meta = []string{}
			}
			return nil
		}
		if len(meta) >= 5 {
			if names += len(rec); len(files) == maxChanges || names > maxChangeBytes {
				cut = true
				return errStopListing
			}
			files = append(files, commitFile{status: meta[4], mode: meta[1], blob: meta[3], path: string(rec), oldMode: meta[0], oldBlob: meta[2]})
		}
		meta = nil
		return nil
	})
	if err != nil && !errors.Is(err, errStopListing) {
		return nil, false, fmt.Errorf("listing the files of commit %s: %w", sha, err)
	}
	return files, cut, nil
}

// fileList is the list of a commit's files that heads the patch a
// reviewer reads, at most maxFileList bytes: a patch cut short (a huge
// file first) still shows every file the commit touches, so a reviewer
// told to read the rest knows what the rest is.
func fileList(files []commitFile, cut bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "planex: the commit changes %s (A added, M modified, D deleted, T type changed):\n", plural.Count(len(files), "file", "files"))
	for i, f := range files {
		line := f.status + "\t" + strconv.Quote(f.path) + "\n"
		if b.Len()+len(line) > maxFileList {
			fmt.Fprintf(&b, "… and %d more\n", len(files)-i)
			return b.String() + "\n"
		}
		b.WriteString(line)
	}
	if cut {
		b.WriteString("… and more, not listed\n")
	}
	return b.String() + "\n"
}

// binaryContents returns what follows a commit's patch for the files it
// adds or changes that git shows only as "Binary files … differ": their
// content, escaped, at most maxBinaryShown bytes of each and budget in
// all (cut says some did not fit). A NUL byte anywhere in a file's first
// 8000 bytes is enough for git, and shells and JavaScript run such a
// file (a NUL in a comment), so an agent could otherwise commit code its
// reviewer never reads.
func binaryContents(ctx context.Context, r *Repo, sha string, files []commitFile, budget int) (string, bool, error) {
	paths := map[string][]string{}
	var blobs []string
	for _, f := range files {
		if f.mode != "100644" && f.mode != "100755" {
			continue
		}
		if paths[f.blob] == nil {
			blobs = append(blobs, f.blob)
		}
		paths[f.blob] = append(paths[f.blob], f.path)
	}
	var b strings.Builder
	full := false
	buf := make([]byte, maxBinaryShown)
	err := r.StreamBlobs(ctx, blobs, func(blob string, content io.Reader) error {
		if full {
			return nil
		}
		n, err := io.ReadFull(content, buf)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return err
		}
		head := buf[:n]
		if bytes.IndexByte(head[:min(n, binaryProbe)], 0) < 0 {
			return nil
		}
		rest, err := io.Copy(io.Discard, content)
		if err != nil {
			return err
		}
		text := EscapeBinary(head)
		if rest > 0 {
			text += fmt.Sprintf("\n… (%d more bytes not shown: read the file)", rest)
		}
		for _, p := range paths[blob] {
			section := fmt.Sprintf("--- binary file %s (%d bytes) ---\n%s\n", strconv.Quote(p), int64(n)+rest, text)
			if b.Len() == 0 {
				section = binaryNote + section
			}
			if b.Len()+len(section) > budget {
				full = true
				return nil
			}
			b.WriteString(section)
		}
		return nil
	})
	if err != nil {
		return "", false, fmt.Errorf("reading the binary files of commit %s: %w", sha, err)
	}
	return b.String(), full, nil
}

// EscapeBinary writes b as text: printable characters, newlines and tabs
// as they are, every other byte as \xNN.
func EscapeBinary(b []byte) string {
	var s strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size <= 1, r < 0x20 && r != '\n' && r != '\t', r == 0x7f:
			fmt.Fprintf(&s, `\x%02x`, b[0])
			size = 1
		default:
			s.Write(b[:size])
		}
		b = b[size:]
	}
	return s.String()
}
