package egress

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/planexhq/planex/internal/usage"
)

// TestRedTeamGatewayBoundsSearchesByTheBudget: with the budget nearly
// spent, the program sends a long prompt (60 KB, some 20,000 tokens)
// with the provider's web search tool and asks for search after search:
// each has the model read the whole prompt again, billed as input, and
// bills a fee. The gateway let 8 searches through whatever was left, so
// such a call overran a nearly spent budget by up to nine readings of its
// prompt. It now asks Cap for a part of the budget for the searches and
// lets through only as many as that part pays for (Worth: a reading of
// the prompt, estimated at a token per three bytes, and the fee, in the
// bound's output tokens); where it pays for none the call is refused
// (402) and the provider sees nothing. A short prompt keeps its 8.
func TestRedTeamGatewayBoundsSearchesByTheBudget(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 60000)
	wideImage := blankPNG(t, 2048, 768)
	for _, r := range []struct {
		name       string
		p          Provider
		path, body string
		capOut     int64
		want       int64 // searches let through; 0: refused; -1: passed, no search tool
	}{
		{"openai, a long prompt", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","input":"` + long + `","tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 3},
		{"openai, a long prompt, its own larger limit", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","max_tool_calls":30,"input":"` + long + `","tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 3},
		{"anthropic, a long prompt", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":"` + long + `"}]}`, 20000, 3},
		{"anthropic, two search tools share them", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"web_search_20250305","name":"a"},{"type":"web_search_20260209","name":"b","max_uses":8}],"messages":[{"role":"user","content":"` + long + `"}]}`, 20000, 2},
		{"anthropic, nothing left for a search", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":"` + long + `"}]}`, 2000, 0},
		{"openai, nothing left for a search", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","input":"` + long + `","tools":[{"type":"web_search","external_web_access":false}]}`, 2000, 0},
		// Another tool OpenAI runs itself (its hosted tool search) loops
		// within the call as a web search does, each call of it a reading
		// of the prompt, without the fee.
		{"openai, a hosted tool search and a long prompt", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","input":"` + long + `","tools":[{"type":"tool_search"},{"type":"function","name":"f","defer_loading":true}]}`, 20000, 4},
		{"openai, a hosted tool search, nothing left", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","input":"` + long + `","tools":[{"type":"tool_search"}]}`, 2000, 0},
		// A short body whose prompt the provider holds: an earlier
		// response's conversation, a stored conversation, an uploaded
		// file. It is reckoned as long as any model's prompt may be (a
		// million tokens), which pays for no search here.
		{"openai, a stored conversation", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","previous_response_id":"resp_1","input":"again","tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 0},
		// A chain of responses (or a conversation, a cache, a file) may
		// hold as much as the model takes, a million tokens, not 200K:
		// where the budget pays for 8 readings of 200K, it pays for 2 of
		// a million.
		{"openai, a stored conversation, much left", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","previous_response_id":"resp_1","input":"again","tools":[{"type":"web_search","external_web_access":false}]}`, 500000, 2},
		{"anthropic, an uploaded file, much left", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_1"}}]}]}`, 500000, 2},
		{"openai, a conversation", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","conversation":{"id":"conv_1"},"input":"again","tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 0},
		{"openai, an uploaded file", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","input":[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}],"tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 0},
		// An item reference names an item of an earlier response the
		// provider stored (a message of any length), by type or, the
		// type left out, by its id alone.
		{"openai, an item reference", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","input":[{"type":"item_reference","id":"msg_1"},{"role":"user","content":"again"}],"tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 0},
		{"openai, an item reference without its type", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","input":[{"id":"msg_1"},{"role":"user","content":"again"}],"tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 0},
		{"openai, an item reference, escaped", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","input":[{"type":"Item\u005fReference","id":"msg_1"}],"tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 0},
		// A reasoning item sent back by its id alone, under store:true:
		// the provider restores the stored reasoning (billed as input, of
		// any length) from it; with its encrypted_content the body holds
		// what is read.
		{"openai, a reasoning item by its id", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","store":true,"input":[{"type":"reasoning","id":"rs_1","summary":[]},{"role":"user","content":"again"}],"tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 0},
		{"openai, a reasoning item by its id, its content null", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","store":true,"input":[{"type":"Reasoning","encrypted_content":null,"id":"rs_1","summary":[]}],"tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 0},
		{"openai, a compaction item by its id", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","store":true,"input":[{"type":"compaction","id":"cmp_1"},{"role":"user","content":"again"}],"tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 0},
		{"openai, a reasoning item with its content", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","store":false,"input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAA"},{"role":"user","content":"again"}],"tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 7},
		{"openai, an output item sent back", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","input":[{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"hi"}]},{"role":"user","content":"again"}],"tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 7},
		{"anthropic, an uploaded file", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_1"}}]}]}`, 20000, 0},
		{"anthropic, a stored prompt and much left", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_1"}}]}]}`, 2000000, 8},
		// Compaction on the provider's side reads the whole prompt again
		// (and again after a search): a call with it and no search must
		// be able to pay one reading, and with search each search counts
		// two readings, after the first compaction's.
		{"anthropic, compaction, nothing left", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"context_management":{"edits":[{"type":"compact_20260112"}]},"messages":[{"role":"user","content":"` + long + `"}]}`, 2000, 0},
		{"anthropic, compaction", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"context_management":{"edits":[{"type":"compact_20260112"}]},"messages":[{"role":"user","content":"` + long + `"}]}`, 20000, -1},
		{"anthropic, compaction and search", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"context_management":{"edits":[{"type":"compact_20260112"}]},"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":"` + long + `"}]}`, 20000, 1},
		{"openai, compaction and search", ProviderOpenAI, "/responses",
			`{"model":"gpt-6.1-sol","context_management":[{"type":"compaction","compact_threshold":1000}],"input":"` + long + `","tools":[{"type":"web_search","external_web_access":false}]}`, 20000, 1},
		// Anthropic's tool search takes no max_uses: each search has the
		// model sample again, rereading the prompt, until the provider's
		// own loop limit (10 samplings) ends the call with pause_turn.
		// The call passes only where the budget's part pays for all of
		// them; its web searches, among those samplings, then pay only
		// their fee from what is left.
		{"anthropic, a tool search and a long prompt, little left", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"},{"name":"f","input_schema":{"type":"object"},"defer_loading":true}],"messages":[{"role":"user","content":"` + long + `"}]}`, 20000, 0},
		{"anthropic, a tool search spelled otherwise", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"Tool_Search_Tool_Regex_20251119","name":"s"}],"messages":[{"role":"user","content":"` + long + `"}]}`, 20000, 0},
		{"anthropic, a tool search and a long prompt, much left", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"tool_search_tool_regex_20251119","name":"s"}],"messages":[{"role":"user","content":"` + long + `"}]}`, 2000000, -1},
		// A type given twice keeps the bounds of both: an advisor's
		// max_uses, and the tool search's reckoning.
		{"anthropic, an advisor's type and a tool search's", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"advisor_20260301","model":"claude-sonnet-5-5","type":"tool_search_tool_regex_20251119","name":"s"}],"messages":[{"role":"user","content":"` + long + `"}]}`, 2000000, 1},
		{"anthropic, an advisor's type and a tool search's, little left", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"tool_search_tool_regex_20251119","model":"claude-sonnet-5-5","type":"advisor_20260301","name":"s"}],"messages":[{"role":"user","content":"` + long + `"}]}`, 20000, 0},
		{"anthropic, a tool search and a web search", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"tool_search_tool_regex_20251119","name":"s"},{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":"` + long + `"}]}`, 44000, 3},
		// gpt-4o-mini bills an image by tiles at 33 times gpt-4o's
		// rate: a blank PNG of 2048 by 768, a few hundred bytes, is 8
		// tiles and 48,169 tokens, which its pixels reckoned at 3,782.
		// Twenty of them are 963K tokens a reading (193K of Worth's
		// units): where the budget's part pays for 2 such readings, 8
		// searches were let through.
		{"openai, gpt-4o-mini, images billed by tiles", ProviderOpenAI, "/responses",
			`{"model":"gpt-4o-mini","input":[{"role":"user","content":[` + strings.Repeat(`{"type":"input_image","image_url":"data:image/png;base64,`+wideImage+`"},`, 20) + `{"type":"input_text","text":"?"}]}],"tools":[{"type":"web_search","external_web_access":false}]}`, 500000, 2},
		{"openai, gpt-5, the same images", ProviderOpenAI, "/responses",
			`{"model":"gpt-5","input":[{"role":"user","content":[` + strings.Repeat(`{"type":"input_image","image_url":"data:image/png;base64,`+wideImage+`"},`, 20) + `{"type":"input_text","text":"?"}]}],"tools":[{"type":"web_search","external_web_access":false}]}`, 500000, 8},
		{"anthropic, a short prompt", ProviderAnthropic, "/v1/messages",
			`{"model":"claude-sonnet-5-5","max_tokens":2000,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[]}`, 20000, 8},
	} {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []byte
			hs := httptest.NewServer(searchLoopProvider(r.p, func(b []byte) { mu.Lock(); seen = b; mu.Unlock() }))
			defer hs.Close()
			u, _ := url.Parse(hs.URL)
			held := 0
			g := &Gateway{Provider: r.p, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{},
				Cap: func(string) (int64, func()) {
					mu.Lock()
					defer mu.Unlock()
					held++
					return r.capOut, func() { mu.Lock(); held--; mu.Unlock() }
				},
				// Input at a fifth of the output price, $10 a million
				// output tokens: a $0.01 fee is 1,000 of them.
				Worth: func(_ string, u usage.Usage) int64 { return u.InputTokens/5 + int64(u.CostUSD*1e5) }}
			c, stop := ServeGatewayForTest(t, g)
			req, _ := http.NewRequest(http.MethodPost, "http://gateway"+r.path, strings.NewReader(r.body))
			req.Header.Set("X-Api-Key", "ph")
			req.Header.Set("Authorization", "Bearer ph")
			status, msg := statusOf(t, c, req)
			stop()
			mu.Lock()
			defer mu.Unlock()
			if held != 0 {
				t.Errorf("%d parts of the budget still held after the call", held)
			}
			if r.want == 0 {
				if status != http.StatusPaymentRequired || seen != nil {
					t.Errorf("status %d (%s), the provider got %d bytes; want 402 and nothing sent", status, msg, len(seen))
				}
				return
			}
			var body struct {
				MaxToolCalls *int64 `json:"max_tool_calls"`
				Tools        []struct {
					MaxUses *int64 `json:"max_uses"`
				} `json:"tools"`
			}
			if status != http.StatusOK || json.Unmarshal(seen, &body) != nil {
				t.Fatalf("status %d (%s)", status, msg)
			}
			got := int64(0)
			if body.MaxToolCalls != nil {
				got = *body.MaxToolCalls
			}
			for _, tool := range body.Tools {
				if tool.MaxUses != nil {
					got += *tool.MaxUses
				}
			}
			if got != max(r.want, 0) {
				t.Errorf("%d searches let through, want %d", got, r.want)
			}
		})
	}
}
