package render

import (
	"fmt"
	"strings"
)

// MaxStepSummaryBytes is the most a step's job summary may hold: the
// runner refuses a larger $GITHUB_STEP_SUMMARY whole, so the summary is
// lost and only an error in the log says so.
const MaxStepSummaryBytes = 1 << 20

// StepSummary bounds s, the job summary planex writes, to what the runner
// accepts. A longer one (a report listing thousands of files an agent
// made, say) is cut between lines, with what the cut left open closed
// and a last line saying where the whole report is.
func StepSummary(s string) string {
	if len(s) <= MaxStepSummaryBytes {
		return s
	}
	return cutMarkdown(s, MaxStepSummaryBytes-400) +
		fmt.Sprintf("\n… (truncated: the job summary holds at most %d KiB; the full report is context.md in the session state)\n", MaxStepSummaryBytes/1024)
}

// cutMarkdown cuts s, Markdown planex rendered, to at most limit bytes
// between lines, and closes what the cut left open so that text appended
// after it reads as text of its own: a fenced code block (whose closing
// fence may add up to a few dozen bytes) and the <details> planex opened.
// Only planex's own lines can open either: what agents write is escaped
// so that no line of it starts with "<" or a fence (internal/render/md).
func cutMarkdown(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	out := s[:strings.LastIndexByte(s[:limit], '\n')+1]
	fence, details := openBlocks(out)
	if fence != "" {
		out += fence + "\n"
	}
	for ; details > 0; details-- {
		out += "\n</details>\n"
	}
	return out
}

// openBlocks reads s line by line and returns the fence of the code
// block still open at its end ("" for none) and how many <details> are
// open outside code blocks.
func openBlocks(s string) (fence string, details int) {
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 {
			continue // indented code, never a fence or a tag of planex's
		}
		n := len(t) - len(strings.TrimLeft(t, "`"))
		if fence != "" {
			if n >= len(fence) && strings.TrimSpace(t[n:]) == "" {
				fence = ""
			}
			continue
		}
		switch {
		case n >= 3 && !strings.Contains(t[n:], "`"):
			fence = t[:n]
		case strings.HasPrefix(t, "<details>"):
			details++
		case strings.HasPrefix(t, "</details>") && details > 0:
			details--
		}
	}
	return fence, details
}
