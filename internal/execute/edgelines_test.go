package execute

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// edgeLines gives the lines splitting the whole text and keeping the
// first and last five gave (empty ones aside: no modeline is empty),
// whatever the text's length and ending.
func TestEdgeLines(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"", "a", "a\n", "a\nb", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n", strings.Repeat("x\n", 50) + "vim: ft=markdown"} {
		lines := bytes.Split([]byte(text), []byte("\n"))
		if len(lines) > 10 {
			lines = append(lines[:5:5], lines[len(lines)-5:]...)
		}
		want := fmt.Sprintf("%q", nonEmpty(lines))
		if got := fmt.Sprintf("%q", nonEmpty(edgeLines([]byte(text), 5))); got != want {
			t.Errorf("edgeLines(%q) = %s, want %s", text, got, want)
		}
	}
}

func nonEmpty(lines [][]byte) [][]byte {
	var out [][]byte
	for _, l := range lines {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}
