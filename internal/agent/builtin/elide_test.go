package builtin

import (
	"strings"
	"testing"
)

func TestElide(t *testing.T) {
	big := strings.Repeat("src/file.go\n", 500)
	msgs := []Message{
		{Role: RoleUser, Text: "task"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Name: "list_files"}, {ID: "2", Name: "read_file"}}},
		{Role: RoleUser, ToolResults: []ToolResult{{CallID: "1", Name: "list_files", Content: big}, {CallID: "2", Name: "read_file", Content: "short"}}},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "3", Name: "search"}}},
		{Role: RoleUser, ToolResults: []ToolResult{{CallID: "3", Name: "search", Content: big}}},
	}
	out := elide(msgs)
	old := out[2].ToolResults[0].Content
	if len(old) > 500 || !strings.HasPrefix(old, "src/file.go\n") || !strings.Contains(old, "list_files output (6000 bytes in all) is left out") {
		t.Errorf("seen output not elided: %d bytes: %.300q", len(old), old)
	}
	if out[2].ToolResults[1].Content != "short" {
		t.Errorf("a short output was elided: %q", out[2].ToolResults[1].Content)
	}
	if out[4].ToolResults[0].Content != big {
		t.Error("the latest output was elided before the model acted on it")
	}
	if msgs[2].ToolResults[0].Content != big {
		t.Error("elide changed the conversation it was given")
	}
	// The same conversation one turn later: what was elided stays the
	// same, so a cached prefix stays valid.
	later := append(append([]Message(nil), msgs...),
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "4", Name: "read_file"}}},
		Message{Role: RoleUser, ToolResults: []ToolResult{{CallID: "4", Name: "read_file", Content: "x"}}})
	if out2 := elide(later); out2[2].ToolResults[0].Content != old || out2[4].ToolResults[0].Content == big {
		t.Error("elision is not stable from turn to turn")
	}
	// A multi-byte character cut at the edge is dropped, not split.
	r := ToolResult{Name: "read_file", Content: strings.Repeat("a", elidedHead-1) + "é" + big}
	if n := elidedNote(r); !strings.HasPrefix(n, strings.Repeat("a", elidedHead-1)+"\n") {
		t.Errorf("note %.220q", n)
	}
}
