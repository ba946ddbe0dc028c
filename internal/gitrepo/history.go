package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/planexhq/planex/internal/abbrev"
)

// Trailer keys planex writes on every task commit.
const (
	TrailerSession = "Planex-Session"
	TrailerTask    = "Planex-Task"
)

// TaskCommit is a task commit found on a run branch.
type TaskCommit struct {
	SHA     string
	Session string
	Task    string
	Subject string
	Body    string
}

// maxMessage bounds the commit message TaskCommits keeps in memory; a
// longer one (planex writes a few kilobytes at most) stops the read with
// ErrLongMessage rather than growing without limit.
const maxMessage = 1 << 20

// ErrLongMessage is returned when a commit on a run branch has a message
// longer than planex reads.
var ErrLongMessage = errors.New("commit message too long")

// TaskCommits lists the planex task commits on branch that base does not
// have, oldest first (no commit before its parents); nil when the branch
// does not exist. base is a full commit id, or "" for the whole history.
// History is read by `git log` through the repository's own git
// directory, never through the worktree's .git entry, which planex does
// not trust, and one commit at a time, so memory stays bounded however
// long the branch is.
// The messages kept come to at most maxTaskHistory in all (a branch
// anyone can push to may carry any number of forged task commits, each
// up to maxMessage): past it the read stops with ErrLongMessage.
func (r *Repo) TaskCommits(ctx context.Context, branch, base string) ([]TaskCommit, error) {
	tip, err := r.ResolveBranch(ctx, branch)
	if err != nil {
		return nil, fmt.Errorf("reading branch %s: %w", branch, err)
	}
	return TaskCommitsAt(ctx, r, branch, tip, base)
}

// TaskCommitsAt is TaskCommits of branch when its tip is tip, a commit
// id the caller read ("" when the branch does not exist): a caller that
// holds the tip it checks and builds on reads the history of that very
// commit, not of wherever the branch is a git process later.
func TaskCommitsAt(ctx context.Context, r *Repo, branch, tip, base string) ([]TaskCommit, error) {
	var out []TaskCommit
	held := 0
	err := commitsFrom(ctx, r, branch, tip, base, func(tc TaskCommit) error {
		if tc.Task == "" {
			return nil
		}
		if held += len(tc.Subject) + len(tc.Body) + len(tc.Session) + len(tc.Task); held > maxTaskHistory {
			return fmt.Errorf("the task commits' messages come to more than %d MiB: %w", maxTaskHistory>>20, ErrLongMessage)
		}
		out = append(out, tc)
		return nil
	})
	return out, err
}

// maxTaskHistory bounds the task commits' messages TaskCommits keeps in
// all (planex writes a few kilobytes for each task).
const maxTaskHistory = 16 << 20

// MaxOtherCommits bounds the commits OtherCommits lists.
const MaxOtherCommits = 50

// OtherCommits lists, oldest first, the commits on branch that base does
// not have and that are no task commit of session (no planex trailers,
// or another session's): work planex did not do, which a pull request of
// the run carries all the same. At most MaxOtherCommits are listed; n is
// how many there are.
func OtherCommits(ctx context.Context, r *Repo, branch, base, session string) (list []TaskCommit, n int, err error) {
	tip, err := r.ResolveBranch(ctx, branch)
	if err != nil {
		return nil, 0, fmt.Errorf("reading branch %s: %w", branch, err)
	}
	return OtherCommitsAt(ctx, r, branch, tip, base, session)
}

// OtherCommitsAt is OtherCommits of branch when its tip is tip, which
// the caller read ("" when the branch does not exist).
func OtherCommitsAt(ctx context.Context, r *Repo, branch, tip, base, session string) (list []TaskCommit, n int, err error) {
	err = commitsFrom(ctx, r, branch, tip, base, func(tc TaskCommit) error {
		if tc.Task != "" && tc.Session == session {
			return nil
		}
		if n++; n <= MaxOtherCommits {
			tc.Body = "" // the subject says what it is; the body is not kept
			list = append(list, tc)
		}
		return nil
	})
	return list, n, err
}

// commitsFrom calls fn for each commit of branch, whose tip is tip (""
// when the branch does not exist), that base does not have, oldest first
// (no commit before its parents), read as TaskCommits read them, until fn
// fails.
func commitsFrom(ctx context.Context, r *Repo, branch, tip, base string, fn func(TaskCommit) error) error {
	if base != "" && !r.format.IsID(base) {
		return fmt.Errorf("reading the history of %s: the base %q is not a commit id (this repository's are %d hex digits)", branch, abbrev.Truncate(base, 80), r.format.HexLen())
	}
	if tip == "" {
		return nil
	}
	if !r.format.IsID(tip) {
		return fmt.Errorf("reading the history of %s: its tip %q is not a commit id (this repository's are %d hex digits)", branch, abbrev.Truncate(tip, 80), r.format.HexLen())
	}
	// -z ends each commit with a NUL; the id is the first line of the record.
	args := []string{"log", "-z", "--format=%H%n%B", "--date-order", "--reverse", tip}
	if base != "" {
		args = append(args, "^"+base)
	}
	c := call{dir: r.Root, env: append(r.gitEnv(r.Root), r.env...), config: r.config, args: append(args, "--"), scans: r.scans}
	err := stream(ctx, c, func(log io.Reader) error {
		return eachRecord(log, func(rec []byte) error {
			sha, msg, _ := bytes.Cut(rec, []byte("\n"))
			if !r.format.IsID(string(sha)) {
				return fmt.Errorf("git log printed %q where a commit id belongs", abbrev.Truncate(string(sha), 80))
			}
			return fn(ParseTaskCommit(string(sha), string(msg)))
		})
	})
	if err != nil {
		return fmt.Errorf("reading the history of %s: %w", branch, err)
	}
	return nil
}

// eachRecord calls fn with each NUL-terminated record of r, refusing a
// record longer than maxMessage.
func eachRecord(r io.Reader, fn func([]byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxMessage)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, 0); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		if err := fn(sc.Bytes()); err != nil {
			return err
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("%w (over %d bytes)", ErrLongMessage, maxMessage)
	}
	return sc.Err()
}

// ParseTaskCommit reads planex's trailers from the last paragraph of a
// commit message (where TaskMessage puts them, and nowhere else).
func ParseTaskCommit(sha, msg string) TaskCommit {
	tc := TaskCommit{SHA: sha}
	subject, body, _ := strings.Cut(strings.TrimRight(msg, "\n"), "\n")
	tc.Subject = subject
	body = strings.TrimSpace(body)
	paras := strings.Split(body, "\n\n")
	last := paras[len(paras)-1]
	for _, line := range strings.Split(last, "\n") {
		k, v, ok := strings.Cut(line, ":")
		switch {
		case ok && k == TrailerSession:
			tc.Session = strings.TrimSpace(v)
		case ok && k == TrailerTask:
			tc.Task = strings.TrimSpace(v)
		}
	}
	if tc.Task != "" {
		paras = paras[:len(paras)-1]
	}
	tc.Body = strings.TrimSpace(strings.Join(paras, "\n\n"))
	return tc
}

// TaskMessage builds the commit message of a task: "T2: title", an
// optional body, and the trailers that let a resumed run recognise it.
func TaskMessage(session, task, title, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", task, defuseRefs(abbrev.Truncate(abbrev.OneLine(title), 72)))
	if body = defuseRefs(strings.TrimSpace(body)); body != "" {
		// Agent-written text must not be able to forge a trailer.
		// One paragraph: its blank lines, however many and whatever
		// white space they hold, are dropped.
		body = blankLines.ReplaceAllString(body, "\n")
		body = strings.ReplaceAll(body, "Planex-", "Planex‑")
		// Nor name a person as an author, a signer or a reviewer.
		body = personTrailer.ReplaceAllString(body, "$1‑$2")
		b.WriteString("\n" + body + "\n")
	}
	fmt.Fprintf(&b, "\n%s: %s\n%s: %s\n", TrailerSession, session, TrailerTask, task)
	return b.String()
}

// blankLines is a line break followed by lines of white space only.
var blankLines = regexp.MustCompile(`\n(?:[ \t\r\f\v]*\n)+`)

// personTrailer finds the lines of a message that start like a trailer
// naming a person ("Co-authored-by:", "Signed-off-by:"), in any case:
// the first hyphen is the one TaskMessage replaces by a non-breaking one.
var personTrailer = regexp.MustCompile(`(?im)^([ \t]*[a-z]+)-([a-z-]*by[ \t]*:)`)

// DefuseRefs is defuseRefs for text that GitHub puts into a commit
// message itself: a pull request's title, which the merge commit's (and
// a squash commit's) message carries onto the default branch, where a
// "closes #12" in it closes issue 12.
func DefuseRefs(s string) string { return defuseRefs(s) }

// defuseRefs keeps an agent's text in a commit message from referencing
// issues: "#12", "GH-12" and "owner/repo#12" get a zero-width joiner
// after their "#" or "-", and "://" one after its ":", so that "fixes #12"
// or "closes https://github.com/o/r/issues/12" closes nothing when the
// commit reaches the default branch (nor links the issue).
func defuseRefs(s string) string {
	const zwj = "\u200d"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		digit := i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9'
		switch {
		case c == '#' && digit,
			c == '-' && digit && i >= 2 && strings.EqualFold(s[i-2:i], "GH"),
			c == ':' && strings.HasPrefix(s[i+1:], "//"):
			b.WriteString(zwj)
		}
	}
	return b.String()
}
