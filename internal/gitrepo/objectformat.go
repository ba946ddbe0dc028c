package gitrepo

import (
	"errors"
	"fmt"
	"strings"
)

// ObjectFormat is the hash a repository names its objects by, as `git
// rev-parse --show-object-format` prints it. It fixes the length of every
// object id planex reads from or hands to git.
type ObjectFormat string

// The object formats git knows.
const (
	SHA1   ObjectFormat = "sha1"
	SHA256 ObjectFormat = "sha256"
)

// ErrObjectFormat is returned for an object format planex does not know.
var ErrObjectFormat = errors.New("unknown git object format")

// ParseObjectFormat reads the name git prints for an object format.
func ParseObjectFormat(s string) (ObjectFormat, error) {
	switch f := ObjectFormat(strings.TrimSpace(s)); f {
	case SHA1, SHA256:
		return f, nil
	default:
		return "", fmt.Errorf("%w %q (planex knows sha1 and sha256)", ErrObjectFormat, s)
	}
}

// reportedFormat reads the line `git rev-parse --show-object-format`
// printed. A git older than 2.28 does not know the option and prints it
// back; such a git reads SHA-1 repositories only.
func reportedFormat(line string) (ObjectFormat, error) {
	if strings.TrimSpace(line) == "--show-object-format" {
		return SHA1, nil
	}
	return ParseObjectFormat(line)
}

// HexLen is the length of a full object id in hex digits: 40 or 64.
func (f ObjectFormat) HexLen() int {
	if f == SHA256 {
		return 64
	}
	return 40
}

// Zero is the all-zero id git uses for "no object" (a ref that must not
// exist yet, an index entry to remove).
func (f ObjectFormat) Zero() string { return strings.Repeat("0", f.HexLen()) }

// IsID reports whether s is a full object id of this format: HexLen
// lowercase hex digits, as git prints them.
func (f ObjectFormat) IsID(s string) bool {
	if len(s) != f.HexLen() {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// IsObjectID reports whether s is a full object id of r's format, as git
// prints them: what planex takes from a record anyone who can push may
// have written is checked so before it is handed to git.
func IsObjectID(r *Repo, s string) bool { return r.format.IsID(s) }
