// Package slash parses planex commands out of GitHub comments. It is
// pure: no I/O, no GitHub types.
//
// A comment is read as GitHub Flavored Markdown (package gfm), the way
// GitHub displays it, never line by line:
//
//   - A command is a paragraph whose first line starts with the trigger
//     phrase (default "/planex") followed by a space or the end of the
//     line. It must be the comment's first top-level block, not counting
//     code blocks, block quotes and HTML blocks that show nothing (an HTML
//     comment); anything else first (text, a list, a heading, visible or
//     open raw HTML such as <details>) means the comment is not a command.
//     So text in fenced or indented code, in quotes, in HTML blocks and
//     comments, and in inline code is never a command.
//   - The command's text is what GitHub shows of the comment from the
//     trigger on: HTML comments, link reference definitions, raw HTML and
//     invisible characters are dropped (gfm.Visible), so no hidden text
//     becomes an argument or a requirement.
//   - If the first word after the trigger is one of the reserved words
//     approve, revise, cancel, retry, status, help, fix, review, fix-ci (any case)
//     it is that command. Anything else is a requirement to plan: free text
//     made of the rest of the trigger line and everything after it. An
//     empty requirement means "plan the title and body".
//   - Flags as on the CLI: -y/--yes (approve the plan automatically) and
//     -c N/--concurrency N (also -cN, -c=N, --concurrency=N). For a
//     requirement they must come before the text (so "/planex add a -c
//     flag" stays text); "--" ends flags. For other commands they may follow
//     the command's arguments on the trigger line.
//   - A lone word close to a reserved word ("/planex aprove") is taken for
//     a mistyped command and answered with the help text, not planned.
package slash

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"

	"github.com/planexhq/planex/internal/gfm"
)

// DefaultTrigger is the phrase a command starts with unless configured.
const DefaultTrigger = "/planex"

// MaxConcurrency bounds -c.
const MaxConcurrency = 64

// Kind says what to do with a comment.
type Kind int

const (
	// Ignore: not addressed to planex; do nothing, say nothing.
	Ignore Kind = iota
	// Reply: addressed to planex but not runnable; post Result.Reply (help,
	// or with Result.Refused the reason the command is wrong).
	Reply
	// Run: a valid command in Result.Command.
	Run
)

func (k Kind) String() string {
	switch k {
	case Ignore:
		return "ignore"
	case Reply:
		return "reply"
	case Run:
		return "run"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Name is a command.
type Name string

const (
	Plan    Name = "plan" // "/planex <requirement>"
	Approve Name = "approve"
	Revise  Name = "revise"
	Cancel  Name = "cancel"
	Retry   Name = "retry"
	Status  Name = "status"
	Help    Name = "help"
	Fix     Name = "fix"
	Review  Name = "review"
	FixCI   Name = "fix-ci"
)

// reserved lists the words that are commands when they come first.
var reserved = []Name{Approve, Revise, Cancel, Retry, Status, Help, Fix, Review, FixCI}

// Command is a parsed, valid command.
type Command struct {
	Name Name
	// Requirement is the text to plan (Plan); empty means the issue itself.
	Requirement string
	// PlanID is the plan to run (Approve).
	PlanID string
	// Text is the feedback for Revise and optional free text for Fix and
	// Review.
	Text string
	// Yes is -y: approve the plan without waiting.
	Yes bool
	// Concurrency is -c; 0 when not given.
	Concurrency int
}

// Result is the outcome of Parse.
type Result struct {
	Kind    Kind
	Command *Command // for Run
	Reply   string   // for Reply
	// Refused marks a Reply that turns a command down (unknown command,
	// bad arguments) rather than answering it (help).
	Refused bool
	// Reason says why a comment was ignored, for logs.
	Reason string
}

var planIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Parse reads a comment body. An empty trigger means DefaultTrigger.
func Parse(body, trigger string) Result {
	if trigger = strings.TrimSpace(trigger); trigger == "" {
		trigger = DefaultTrigger
	}
	doc := gfm.Parse(body)
	start, reason := commandStart(doc, trigger)
	if start < 0 {
		return Result{Kind: Ignore, Reason: reason}
	}
	first, rest, _ := strings.Cut(doc.VisibleFrom(start+len(trigger)), "\n")
	tokens := strings.Fields(first)
	raw := rest
	rest = strings.TrimSpace(rest)

	if len(tokens) > 0 {
		word := strings.ToLower(tokens[0])
		for _, n := range reserved {
			if word == string(n) {
				return parseSub(n, tokens[1:], rest, trigger)
			}
		}
		if len(tokens) == 1 && rest == "" && !strings.HasPrefix(word, "-") {
			if near := nearest(word); near != "" {
				return replyf(trigger, "Unknown command %q; did you mean `%s %s`?", tokens[0], trigger, near)
			}
		}
	}
	return parsePlan(first, raw, trigger)
}

// commandStart finds the byte offset of the trigger that starts the
// comment's command paragraph, or -1 and why there is none.
func commandStart(doc *gfm.Doc, trigger string) (int, string) {
	for b := doc.Root.FirstChild(); b != nil; b = b.NextSibling() {
		switch n := b.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.Blockquote:
			continue
		case *ast.HTMLBlock:
			if doc.InertHTML(n) {
				continue
			}
			return -1, "raw HTML comes before any command"
		case *ast.TextBlock:
			if n.Lines().Len() == 0 { // what link reference definitions leave
				continue
			}
		case *ast.Paragraph:
			if n.Lines().Len() == 0 {
				continue
			}
			start := n.Lines().At(0).Start
			src := doc.Source[start:]
			if !bytes.HasPrefix(src, []byte(trigger)) || doc.Hidden(start) {
				return -1, fmt.Sprintf("the comment does not start with %q", trigger)
			}
			if len(src) > len(trigger) && !startsWithSpace(string(src[len(trigger):])) {
				return -1, fmt.Sprintf("%q is not followed by a space", trigger)
			}
			return start, ""
		}
		return -1, fmt.Sprintf("the comment starts with a %s, not with %q", strings.ToLower(b.Kind().String()), trigger)
	}
	return -1, "no text outside code blocks, quotes and HTML"
}

func startsWithSpace(s string) bool { return s[0] == ' ' || s[0] == '\t' || s[0] == '\n' }

// flags holds parsed -y and -c.
type flags struct {
	yes         bool
	concurrency int
}

// parseFlag consumes one flag at tokens[0]; it returns how many tokens it
// used (0 when tokens[0] is not a flag) or an error text.
func (f *flags) parseFlag(tokens []string) (int, string) {
	tok := tokens[0]
	switch {
	case tok == "-y" || tok == "--yes":
		f.yes = true
		return 1, ""
	case tok == "-c" || tok == "--concurrency":
		if len(tokens) < 2 {
			return 0, fmt.Sprintf("`%s` needs a number, for example `%s 4`.", tok, tok)
		}
		return 2, f.setConcurrency(tok, tokens[1])
	case strings.HasPrefix(tok, "--concurrency="):
		return 1, f.setConcurrency("--concurrency", strings.TrimPrefix(tok, "--concurrency="))
	case strings.HasPrefix(tok, "-c"):
		return 1, f.setConcurrency("-c", strings.TrimPrefix(strings.TrimPrefix(tok, "-c"), "="))
	case strings.HasPrefix(tok, "-") && len(tok) > 1:
		return 0, fmt.Sprintf("Unknown flag `%s`; the flags are `-y`/`--yes` and `-c N`/`--concurrency N`.", tok)
	}
	return 0, ""
}

func (f *flags) setConcurrency(flag, v string) string {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Sprintf("`%s` needs a whole number, got %q.", flag, v)
	}
	if n < 1 || n > MaxConcurrency {
		return fmt.Sprintf("`%s` must be between 1 and %d, got %d.", flag, MaxConcurrency, n)
	}
	f.concurrency = n
	return ""
}

func parsePlan(after, rest, trigger string) Result {
	var fl flags
	text := strings.TrimSpace(after)
	for text != "" {
		tokens := strings.Fields(text)
		if tokens[0] == "--" {
			text = strings.TrimSpace(strings.TrimPrefix(text, "--"))
			break
		}
		if !strings.HasPrefix(tokens[0], "-") {
			break
		}
		used, msg := fl.parseFlag(tokens)
		if msg != "" {
			return replyf(trigger, "%s", msg)
		}
		if used == 0 {
			break
		}
		for i := 0; i < used; i++ {
			text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), tokens[i]))
		}
	}
	req := text + "\n" + strings.TrimRight(rest, " \t\n")
	return Result{Kind: Run, Command: &Command{Name: Plan, Requirement: strings.TrimSpace(req), Yes: fl.yes, Concurrency: fl.concurrency}}
}

// parseSub parses a reserved-word command; args are the trigger line's
// words after it and rest the following lines.
func parseSub(n Name, args []string, rest, trigger string) Result {
	fl, words, msg := subArgs(n, args)
	if msg != "" {
		return replyf(trigger, "%s", msg)
	}
	cmd := &Command{Name: n, Yes: fl.yes, Concurrency: fl.concurrency}
	text := strings.TrimSpace(strings.Join(words, " ") + "\n" + rest)
	switch n {
	case Help:
		return Result{Kind: Reply, Reply: HelpText(trigger)}
	case Approve:
		if msg := planIDProblem(words, trigger); msg != "" {
			return replyf(trigger, "%s", msg)
		}
		cmd.PlanID = words[0]
	case Revise:
		if text == "" {
			return replyf(trigger, "`revise` needs feedback: `%s revise <what to change in the plan>`.", trigger)
		}
		cmd.Text = text
	case Fix, Review, FixCI:
		cmd.Text = text
	case Cancel, Status, Retry:
		if len(words) > 0 {
			return replyf(trigger, "`%s` takes no arguments, got %q.", n, strings.Join(words, " "))
		}
	}
	return Result{Kind: Run, Command: cmd}
}

// subArgs splits a reserved-word command's words into its flags (for the
// commands that take any) and the other words; msg says what is wrong
// with a flag.
func subArgs(n Name, args []string) (fl flags, words []string, msg string) {
	allowFlags := n == Approve || n == Retry || n == Fix || n == Revise || n == FixCI
	for i := 0; i < len(args); {
		if allowFlags && strings.HasPrefix(args[i], "-") && len(args[i]) > 1 {
			used, msg := fl.parseFlag(args[i:])
			if msg != "" {
				return fl, nil, msg
			}
			if used > 0 {
				i += used
				continue
			}
		}
		words = append(words, args[i])
		i++
	}
	return fl, words, ""
}

// planIDProblem says what is wrong with approve's words, which must be
// exactly one plan id, or "" when nothing is.
func planIDProblem(words []string, trigger string) string {
	switch {
	case len(words) == 0:
		return fmt.Sprintf("`approve` needs the plan id: `%s approve <plan-id>` (the plan comment shows the exact command).", trigger)
	case len(words) > 1:
		return fmt.Sprintf("`approve` takes one plan id, got %d words: %q.", len(words), strings.Join(words, " "))
	case !planIDPattern.MatchString(words[0]):
		return fmt.Sprintf("%q is not a plan id; copy the approve command from the plan comment.", words[0])
	}
	return ""
}

func replyf(trigger, format string, args ...any) Result {
	return Result{Kind: Reply, Refused: true, Reply: fmt.Sprintf(format, args...) + "\n\n" + HelpText(trigger)}
}

// HelpText is the reply to "help" and to commands planex cannot read.
func HelpText(trigger string) string {
	if trigger == "" {
		trigger = DefaultTrigger
	}
	t := trigger
	return strings.Join([]string{
		"**planex commands** (write them at the start of a comment):",
		"",
		"| Command | What it does |",
		"|---|---|",
		fmt.Sprintf("| `%s <requirement>` | Plan the requirement (text may continue on the next lines). Without text, plan this issue's title and body. |", t),
		fmt.Sprintf("| `%s approve <plan-id>` | Run exactly that plan. |", t),
		fmt.Sprintf("| `%s revise <feedback>` | Re-plan with the feedback; the old plan can no longer be approved. |", t),
		fmt.Sprintf("| `%s cancel` | Stop the plan or run in progress. |", t),
		fmt.Sprintf("| `%s retry` | Re-run failed and skipped tasks. |", t),
		fmt.Sprintf("| `%s status` | Show where the run is. |", t),
		fmt.Sprintf("| `%s fix` | On planex's pull request: plan tasks from the open review findings. |", t),
		fmt.Sprintf("| `%s review` | On a pull request: review its diff against its description. |", t),
		fmt.Sprintf("| `%s fix-ci` | On planex's pull request: read the latest failed CI run of its head and plan the fix. |", t),
		fmt.Sprintf("| `%s help` | Show this help. |", t),
		"",
		"Flags: `-y`/`--yes` runs the plan without waiting for approval; `-c N`/`--concurrency N` runs up to N tasks at once.",
		"Only people with write, maintain or admin permission on the repository can trigger or approve.",
	}, "\n")
}

// nearest returns the reserved word closest to word within edit distance
// 2 (and not equal to it), or "".
func nearest(word string) Name {
	best, bestD := Name(""), 3
	for _, n := range reserved {
		if d := distance(word, string(n)); d > 0 && d < bestD && len(word) >= 3 {
			best, bestD = n, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
