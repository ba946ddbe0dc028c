package builtin

import (
	"fmt"
	"strings"
)

// Tool outputs are the bulk of a step's prompt: a list_files of a large
// repository is tens of kilobytes, and every later turn would send it
// again. Once the model has had turns to act on a large output, it is
// replaced by a short note; the model can call the tool again when it
// needs the output back.
const (
	// ElideAbove is the size from which a tool output is elided.
	ElideAbove = 1 << 10
	// keepResults is how many of the latest tool-result messages are
	// always sent whole.
	keepResults = 1
	// elidedHead is how much of an elided output stays, so the note says
	// what it was.
	elidedHead = 200
)

// elide returns msgs as sent to the model: tool outputs over ElideAbove
// bytes in all but the keepResults latest tool-result messages are cut
// to a note. msgs itself is not changed. Older messages change only once,
// when they leave the window, so a cached prefix stays valid up to there.
func elide(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	copy(out, msgs)
	seen := 0
	for i := len(out) - 1; i >= 0; i-- {
		if len(out[i].ToolResults) == 0 {
			continue
		}
		seen++
		if seen <= keepResults {
			continue
		}
		var results []ToolResult
		for j, r := range out[i].ToolResults {
			if len(r.Content) <= ElideAbove {
				continue
			}
			if results == nil {
				results = append([]ToolResult(nil), out[i].ToolResults...)
			}
			results[j].Content = elidedNote(r)
		}
		if results != nil {
			out[i].ToolResults = results
		}
	}
	return out
}

func elidedNote(r ToolResult) string {
	// A character cut in two at the end is dropped.
	head := strings.ToValidUTF8(r.Content[:elidedHead], "")
	return fmt.Sprintf("%s\n… [the rest of this %s output (%d bytes in all) is left out here: you saw it in an earlier turn; call the tool again if you need it]",
		head, r.Name, len(r.Content))
}
