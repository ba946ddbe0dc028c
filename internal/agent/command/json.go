package command

import (
	"bytes"
	"encoding/json"
	"github.com/planexhq/planex/internal/agent"
)

// LastJSONObject finds the last complete top-level JSON object in out,
// whether bare or inside a ``` fence. Agents print logs around their
// result, so the last object wins.
func LastJSONObject(out []byte) []byte {
	var last []byte
	for i := 0; i < len(out); i++ {
		if out[i] != '{' {
			continue
		}
		end := matchBrace(out, i)
		if end < 0 {
			continue
		}
		cand := out[i : end+1]
		if json.Valid(cand) {
			last = cand
			i = end
		}
	}
	return last
}

// matchBrace returns the index of the brace closing the one at start,
// skipping braces inside JSON strings, or -1.
func matchBrace(b []byte, start int) int {
	depth := 0
	inStr := false
	for i := start; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// usageFrom reads an optional "usage" object agents may add to their
// result ({"input_tokens":…,"output_tokens":…,"cost_usd":…}).
func usageFrom(raw []byte) (u agent.Usage) {
	var wrap struct {
		Usage agent.Usage `json:"usage"`
	}
	if json.Unmarshal(bytes.TrimSpace(raw), &wrap) == nil {
		return wrap.Usage
	}
	return u
}
