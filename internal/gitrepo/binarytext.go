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
)

// errStopListing ends a listing that reached its bound.
var errStopListing = errors.New("listing bound reached")

// binaryProbe is how much of a file git reads to call it binary: a NUL
// byte in its first 8000 bytes (buffer_is_binary), attributes aside.
const binaryProbe = 8000

// maxBinaryShown is the most of one binary file's content a patch shows.
const maxBinaryShown = 32 << 10

// binaryNote heads the contents of the files a patch showed as binary.
const binaryNote = "\nplanex: git shows the files below as binary (each holds a NUL byte), so the patch above leaves out their content. It follows, each NUL, other control byte or invalid UTF-8 byte written as \\xNN; a script or source file can hold a NUL and still run.\n"

// binaryContents returns what follows a commit's patch for the files it
// adds or changes that git shows only as "Binary files … differ": their
// content, escaped, at most maxBinaryShown bytes of each and budget in
// all. A NUL byte anywhere in a file's first 8000 bytes is enough for
// git, and shells and JavaScript run such a file (a NUL in a comment), so
// an agent could otherwise commit code its reviewer never reads.
func binaryContents(ctx context.Context, r *Repo, sha string, budget int) (string, bool, error) {
	paths := map[string][]string{}
	var blobs []string
	var meta []string
	// Bounded as DiffTrees is: past it the rest is left out, said as a cut.
	names, cut := 0, false
	err := streamRecords(ctx, r, "", nil, []string{"diff-tree", "-r", "-z", "--root", "--no-renames", "--no-commit-id", sha, "--"}, func(rec []byte) error {
		if meta == nil {
			if meta = strings.Fields(strings.TrimPrefix(string(rec), ":")); len(meta) < 5 {
				meta = []string{}
			}
			return nil
		}
		if len(meta) >= 5 && (meta[1] == "100644" || meta[1] == "100755") {
			if names += len(rec); len(blobs) == maxChanges || names > maxChangeBytes {
				cut = true
				return errStopListing
			}
			if paths[meta[3]] == nil {
				blobs = append(blobs, meta[3])
			}
			paths[meta[3]] = append(paths[meta[3]], string(rec))
		}
		meta = nil
		return nil
	})
	if err != nil && !errors.Is(err, errStopListing) {
		return "", false, fmt.Errorf("listing the files of commit %s: %w", sha, err)
	}
	var b strings.Builder
	full := false
	buf := make([]byte, maxBinaryShown)
	err = r.StreamBlobs(ctx, blobs, func(blob string, content io.Reader) error {
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
		text := escapeBinary(head)
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
	return b.String(), cut || full, nil
}

// escapeBinary writes b as text: printable characters, newlines and tabs
// as they are, every other byte as \xNN.
func escapeBinary(b []byte) string {
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
