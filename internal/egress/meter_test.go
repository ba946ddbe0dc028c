package egress

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/usage"
)

// TestAnswerScanReadsUsage: the usage and model of answers in each
// provider's wire format, whole or a byte at a time, where the model's
// own output (text, tool arguments: what a prompt-injected model or the
// program calling the gateway chooses) holds usage and model members of
// its own. Only the provider's count and model are read.
func TestAnswerScanReadsUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		p     Provider
		sse   bool
		body  string
		want  usage.Usage
		model string
	}{
		{"openai responses JSON, usage in function arguments", ProviderOpenAI, false,
			`{"id":"resp_1","object":"response","model":"gpt-6.1-sol","output":[{"type":"function_call","name":"f","arguments":"{\"model\":\"gpt-5-nano\",\"usage\":{\"input_tokens\":0}}"}],` +
				`"usage":{"input_tokens":900,"input_tokens_details":{"cached_tokens":100},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":950}}`,
			usage.Usage{InputTokens: 900, OutputTokens: 50, CacheReadTokens: 100}, "gpt-6.1-sol"},
		{"anthropic JSON, usage and model in tool input", ProviderAnthropic, false,
			`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[{"type":"tool_use","id":"t","name":"x","input":{"model":"claude-3-haiku","usage":{"input_tokens":1}}},` +
				`{"type":"text","text":"\"usage\":{\"input_tokens\":0},\"model\":\"claude-3-haiku\""}],"stop_reason":"tool_use","usage":{"input_tokens":10,"cache_read_input_tokens":30,"cache_creation_input_tokens":5,"output_tokens":20}}`,
			usage.Usage{InputTokens: 45, OutputTokens: 20, CacheReadTokens: 30, CacheWriteTokens: 5}, "claude-sonnet-5-5"},
		{"anthropic SSE, CRLF lines, counts running up", ProviderAnthropic, true,
			"event: message_start\r\ndata:{\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"claude-opus-5\",\"content\":[],\"usage\":{\"input_tokens\":7,\"output_tokens\":1}}}\r\n\r\n" +
				"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"data: {\\\"usage\\\":{}}\"}}\r\n\r\n" +
				": a comment line\r\nevent: message_delta\r\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\r\ndata: \"usage\":{\"output_tokens\":400}}\r\n\r\n",
			usage.Usage{InputTokens: 7, OutputTokens: 400}, "claude-opus-5"},
		{"openai SSE response.completed", ProviderOpenAI, true,
			"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"model\":\"gpt-6.1-sol\",\"usage\":null}}\n\n" +
				"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"model\":\"gpt-6.1-sol\",\"output\":[],\"usage\":{\"input_tokens\":3000,\"input_tokens_details\":{\"cached_tokens\":2000},\"output_tokens\":77}}}\n\n",
			usage.Usage{InputTokens: 3000, OutputTokens: 77, CacheReadTokens: 2000}, "gpt-6.1-sol"},
		{"gemini stream without alt=sse (a JSON array)", ProviderGemini, false,
			`[{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"usageMetadata":{"promptTokenCount":0}}}}]}}],"usageMetadata":{"promptTokenCount":500,"candidatesTokenCount":3}},` + "\r\n" +
				`{"candidates":[],"usageMetadata":{"promptTokenCount":500,"candidatesTokenCount":60,"thoughtsTokenCount":40,"toolUsePromptTokenCount":8,"cachedContentTokenCount":100},"modelVersion":"gemini-3.8-flash"}]`,
			usage.Usage{InputTokens: 508, OutputTokens: 100, CacheReadTokens: 100}, "gemini-3.8-flash"},
		{"not JSON at all", ProviderAnthropic, false, `}}]] "usage":{"input_tokens":5}`, usage.Usage{}, ""},
	}
	for _, c := range cases {
		for _, bytewise := range []bool{false, true} {
			a := &answerUsage{p: c.p}
			s := newAnswerScan(c.sse, a)
			if bytewise {
				for i := range len(c.body) {
					s.Write([]byte{c.body[i]})
				}
			} else {
				s.Write([]byte(c.body))
			}
			if a.u != c.want || a.model != c.model || a.found != (c.want != usage.Usage{}) {
				t.Errorf("%s (a byte at a time: %v): read %+v of model %q (found %v), want %+v of %q", c.name, bytewise, a.u, a.model, a.found, c.want, c.model)
			}
		}
	}
}

// TestAnswerScanBounded: an answer of 40 MiB on one line (a model's long
// output in OpenAI's response.completed, before its usage) and one that
// nests a million arrays deep are read with a few kilobytes of state,
// and the usage after the long output is still found.
func TestAnswerScanBounded(t *testing.T) {
	t.Parallel()
	a := &answerUsage{p: ProviderOpenAI}
	s := newAnswerScan(true, a)
	s.Write([]byte(`data: {"type":"response.completed","response":{"model":"gpt-6.1-sol","output":[{"type":"message","content":[{"type":"output_text","text":"`))
	chunk := []byte(strings.Repeat(`long \"text\" `, 4096))
	for range (40 << 20) / len(chunk) {
		s.Write(chunk)
	}
	s.Write([]byte(`"}]}],"metadata":{"big":"` + strings.Repeat("x", 1<<20) + `"},"usage":{"input_tokens":11,"output_tokens":22}}}` + "\n\n"))
	if a.u != (usage.Usage{InputTokens: 11, OutputTokens: 22}) || a.model != "gpt-6.1-sol" {
		t.Errorf("after a long output: %+v of %q", a.u, a.model)
	}
	deep := &answerUsage{p: ProviderAnthropic}
	d := newAnswerScan(false, deep)
	d.Write([]byte(`{"usage":`))
	d.Write([]byte(strings.Repeat("[", 1<<20)))
	for _, st := range []*answerScan{s, d} {
		if cap(st.json.capture) > 2*maxCapture || cap(st.json.open) > 2*maxNesting || cap(st.json.key) > 2*maxSkimName || cap(st.field) > 64 {
			t.Errorf("state grew with the answer: capture %d, levels %d, name %d, field %d", cap(st.json.capture), cap(st.json.open), cap(st.json.key), cap(st.field))
		}
	}
	if deep.found {
		t.Errorf("a usage cut short was read: %+v", deep.u)
	}
}

// meteredGateway serves g, with a Meter, in front of upstream and
// returns a client for it and a function that stops it (after which the
// meter holds every call).
func meteredGateway(t *testing.T, p Provider, upstream http.Handler, admit func() error) (*Gateway, *http.Client, func()) {
	t.Helper()
	hs := httptest.NewServer(upstream)
	t.Cleanup(hs.Close)
	u, _ := url.Parse(hs.URL)
	g := &Gateway{Provider: p, Upstream: u, Key: "sk-real", Placeholder: "ph", Meter: &Meter{}, Admit: admit}
	client, stop := ServeGatewayForTest(t, g)
	return g, client, stop
}

// meterAnswer sends one Anthropic call through a metered gateway whose
// upstream answers body as contentType, reads the answer to its end and
// returns what the meter counted.
func meterAnswer(t *testing.T, contentType, body string) map[string]usage.Usage {
	t.Helper()
	g, c, stop := meteredGateway(t, ProviderAnthropic, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, body)
	}), nil)
	resp := postMessages(t, c)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	stop()
	return g.Meter.Totals()
}

const meterCallBody = `{"model":"claude-sonnet-5-5","max_tokens":64000,"stream":true,"messages":[{"role":"user","content":"write forever"}]}`

func postMessages(t *testing.T, c *http.Client) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(meterCallBody))
	req.Header.Set("X-Api-Key", "ph")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestGatewayMeterFloor: where the provider's count cannot be read in
// full the gateway counts a floor, never zero: an answer without usage,
// and a stream the calling program hangs up on after the first event
// (the provider bills what it generated until then). An error answer
// without usage is not billed by the providers and counts nothing.
func TestGatewayMeterFloor(t *testing.T) {
	t.Parallel()
	reqBytes := int64(len(meterCallBody))
	t.Run("no usage", func(t *testing.T) {
		t.Parallel()
		answer := `{"id":"msg_1","type":"message","content":[{"type":"text","text":"hi"}]}`
		g, c, stop := meteredGateway(t, ProviderAnthropic, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, answer)
		}), nil)
		resp := postMessages(t, c)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		stop()
		// Under the model the call asked for, the answer naming none.
		if got := g.Meter.Totals()["claude-sonnet-5-5"]; got.InputTokens != reqBytes || got.OutputTokens != int64(len(answer)) {
			t.Errorf("metered %+v, want the floor of %d in, %d out", g.Meter.Totals(), reqBytes, len(answer))
		}
	})
	t.Run("error answer", func(t *testing.T) {
		t.Parallel()
		g, c, stop := meteredGateway(t, ProviderAnthropic, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"type":"error","error":{"type":"overloaded_error"}}`, 529)
		}), nil)
		resp := postMessages(t, c)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		stop()
		if got := g.Meter.Totals(); len(got) != 0 {
			t.Errorf("an error answer was metered: %+v", got)
		}
	})
	t.Run("hung up mid-stream", func(t *testing.T) {
		t.Parallel()
		first := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-5-5\",\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n"
		g, c, stop := meteredGateway(t, ProviderAnthropic, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, first)
			w.(http.Flusher).Flush()
			<-r.Context().Done() // generating until the caller is gone
		}), nil)
		resp := postMessages(t, c)
		buf := make([]byte, len(first))
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		stop()
		if got := g.Meter.Totals()["claude-sonnet-5-5"]; got.InputTokens != reqBytes || got.OutputTokens != int64(len(first)) {
			t.Errorf("metered %+v, want the floor of %d in, %d out", g.Meter.Totals(), reqBytes, len(first))
		}
	})
}

// TestGatewayAdmitRefuses: once Admit says the step's budget is spent,
// the program's next call gets the gateway's refusal with the reason
// and never reaches the provider; free calls (counting tokens) pass.
func TestGatewayAdmitRefuses(t *testing.T) {
	t.Parallel()
	up := &upstreamRecorder{}
	spent := errors.New("the step's cost budget is spent")
	_, c, _ := meteredGateway(t, ProviderAnthropic, up, func() error { return spent })
	resp := postMessages(t, c)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPaymentRequired || !strings.Contains(string(b), spent.Error()) {
		t.Errorf("status %d: %s", resp.StatusCode, b)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages/count_tokens", strings.NewReader(`{"model":"m","messages":[]}`))
	req.Header.Set("X-Api-Key", "ph")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	up.mu.Lock()
	seen := append([]string(nil), up.seen...)
	up.mu.Unlock()
	if len(seen) != 1 || !strings.HasPrefix(seen[0], "POST /v1/messages/count_tokens") {
		t.Errorf("the provider saw %q", seen)
	}
}

// TestRedTeamGatewayUnmeteredShapes: a contained program shapes a model
// call so that the provider's answer leaves out the usage the meter reads,
// or bills after the answer: Google's field masks (fields, $fields, the
// X-Goog-FieldMask header) and answer formats (alt=proto, alt given
// twice), a method override (Google's front ends honour
// X-HTTP-Method-Override) and OpenAI's background responses; or bills
// above the list price the meter prices it at (OpenAI's priority
// processing, Anthropic's fast mode, Gemini's priority inference, whose
// service_tier passed before). Each reached the upstream before; the
// query parameters and those calls are refused, the headers never reach it.
func TestRedTeamGatewayUnmeteredShapes(t *testing.T) {
	t.Parallel()
	gemini := "/v1beta/models/gemini-3.8-flash:streamGenerateContent"
	cases := []struct {
		name   string
		p      Provider
		target string
		header string
		body   string
		status int
	}{
		{"field mask in the query", ProviderGemini, gemini + "?alt=sse&fields=usageMetadata.promptTokenCount", "", "", 403},
		{"field mask as a system parameter", ProviderGemini, gemini + "?alt=sse&%24fields=candidates", "", "", 403},
		{"protobuf answer", ProviderGemini, gemini + "?alt=proto", "", "", 403},
		{"alt given twice", ProviderGemini, gemini + "?alt=sse&alt=json", "", "", 403},
		{"another project pays", ProviderGemini, gemini + "?alt=sse&userProject=p", "", "", 403},
		{"field mask header", ProviderGemini, gemini + "?alt=sse", "X-Goog-FieldMask", "", 200},
		{"method override", ProviderGemini, gemini + "?alt=sse", "X-HTTP-Method-Override", "", 200},
		{"method override, underscores", ProviderGemini, gemini + "?alt=sse", "X_Http_Method_Override", "", 200},
		{"method header", ProviderGemini, gemini + "?alt=sse", "X-HTTP-Method", "", 200},
		{"another project pays (header)", ProviderGemini, gemini + "?alt=sse", "X-Goog-User-Project", "", 200},
		{"a part of the answer", ProviderAnthropic, "/v1/messages", "Range", `{"model":"claude-sonnet-5-5","max_tokens":1,"messages":[]}`, 200},
		{"another OpenAI project", ProviderOpenAI, "/responses", "OpenAI-Project", `{"model":"gpt-6.1-sol","input":"x"}`, 200},
		{"another OpenAI organisation", ProviderOpenAI, "/responses", "Openai_Organization", `{"model":"gpt-6.1-sol","input":"x"}`, 200},
		{"background response", ProviderOpenAI, "/responses", "", `{"model":"gpt-6.1-sol","background":true,"input":"x"}`, 403},
		{"background response, spelled otherwise", ProviderOpenAI, "/responses", "", `{"model":"gpt-6.1-sol","Background":1,"input":"x"}`, 403},
		{"priority processing", ProviderOpenAI, "/responses", "", `{"model":"gpt-6.1-sol","service_tier":"priority","input":"x"}`, 403},
		{"a service tier spelled otherwise", ProviderOpenAI, "/responses", "", `{"model":"gpt-6.1-sol","serviceTier":"Priority","input":"x"}`, 403},
		{"the flex tier, cheaper", ProviderOpenAI, "/responses", "", `{"model":"gpt-6.1-sol","service_tier":"flex","input":"x"}`, 200},
		{"a tier given twice, priority last", ProviderOpenAI, "/responses", "", `{"model":"gpt-6.1-sol","service_tier":"auto","service_tier":"priority","input":"x"}`, 403},
		{"a tier's value escaped", ProviderOpenAI, "/responses", "", `{"model":"gpt-6.1-sol","service_tier":"\u0070riority","input":"x"}`, 403},
		{"fast as priority's alias", ProviderOpenAI, "/responses", "", `{"model":"gpt-6.1-sol","service_tier":"fast","input":"x"}`, 403},
		{"fast mode", ProviderAnthropic, "/v1/messages", "", `{"model":"claude-opus-5-5","speed":"fast","max_tokens":1,"messages":[]}`, 403},
		{"fast mode spelled otherwise", ProviderAnthropic, "/v1/messages", "", `{"model":"claude-opus-5-5","Speed":"FAST","max_tokens":1,"messages":[]}`, 403},
		{"a speed that is no string", ProviderAnthropic, "/v1/messages", "", `{"model":"claude-opus-5-5","speed":{"mode":"fast"},"max_tokens":1,"messages":[]}`, 403},
		{"inference kept to one region", ProviderAnthropic, "/v1/messages", "", `{"model":"claude-opus-5-5","inference_geo":"us","max_tokens":1,"messages":[]}`, 403},
		{"inference anywhere", ProviderAnthropic, "/v1/messages", "", `{"model":"claude-opus-5-5","inference_geo":"global","max_tokens":1,"messages":[]}`, 200},
		{"the standard speed", ProviderAnthropic, "/v1/messages", "", `{"model":"claude-opus-5-5","speed":"standard","max_tokens":1,"messages":[]}`, 200},
		{"not in the background", ProviderOpenAI, "/responses", "", `{"model":"gpt-6.1-sol","background":false,"input":"x"}`, 200},
		{"the stream, as Gemini CLI sends it", ProviderGemini, gemini + "?alt=sse", "", "", 200},
		// Gemini's priority inference bills at a premium; flex below the list price.
		{"Gemini priority inference", ProviderGemini, gemini + "?alt=sse", "", `{"contents":[],"service_tier":"priority"}`, 403},
		{"Gemini priority, the enum's name", ProviderGemini, gemini + "?alt=sse", "", `{"contents":[],"serviceTier":"SERVICE_TIER_PRIORITY"}`, 403},
		{"Gemini priority in generationConfig", ProviderGemini, gemini + "?alt=sse", "", `{"contents":[],"generationConfig":{"service_tier":"PRIORITY"}}`, 403},
		{"Gemini tier as a number", ProviderGemini, gemini + "?alt=sse", "", `{"contents":[],"serviceTier":3}`, 403},
		{"Gemini flex inference", ProviderGemini, gemini + "?alt=sse", "", `{"contents":[],"service_tier":"flex"}`, 200},
		{"Gemini standard inference", ProviderGemini, gemini + "?alt=sse", "", `{"contents":[],"serviceTier":"SERVICE_TIER_STANDARD"}`, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			seen := make(chan http.Header, 1)
			_, client, _ := meteredGateway(t, c.p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen <- r.Header.Clone()
				io.WriteString(w, `{"usageMetadata":{"promptTokenCount":1}}`)
			}), nil)
			body := c.body
			if body == "" {
				body = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
			}
			req, _ := http.NewRequest(http.MethodPost, "http://gateway"+c.target, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer ph")
			if c.header != "" {
				req.Header[c.header] = []string{"GET"}
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, b)
			}
			select {
			case h := <-seen:
				if c.status != 200 {
					t.Errorf("a refused call reached the upstream")
				}
				for name := range h {
					n := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
					if strings.Contains(n, "method") || n == "x-goog-fieldmask" || strings.Contains(n, "project") || strings.Contains(n, "organization") || strings.Contains(n, "range") {
						t.Errorf("the upstream got %s", name)
					}
				}
			default:
				if c.status == 200 {
					t.Errorf("the upstream saw no call")
				}
			}
		})
	}
}

// TestRedTeamGatewayMetersCompressedAnswers: the program asks for a
// compressed answer (Accept-Encoding: gzip) to a call whose output is
// long and repetitive. The provider's gzip hid the usage from the meter,
// whose floor then counted the answer's few compressed bytes as the
// output; the gateway now asks for the encoding itself and meters the
// decoded answer, which the program gets decoded.
func TestRedTeamGatewayMetersCompressedAnswers(t *testing.T) {
	t.Parallel()
	answer := `{"model":"claude-sonnet-5-5","content":[{"type":"text","text":"` + strings.Repeat("spend ", 50000) +
		`"}],"usage":{"input_tokens":30,"output_tokens":50000}}`
	g, c, stop := meteredGateway(t, ProviderAnthropic, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			io.WriteString(w, answer)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, answer)
		zw.Close()
	}), nil)
	for _, enc := range []string{"gzip", "gzip, deflate, br", ""} {
		req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(meterCallBody))
		req.Header.Set("X-Api-Key", "ph")
		req.Header.Set("Accept-Encoding", enc)
		resp, err := c.Transport.RoundTrip(req) // as sent: no decoding of the client's own
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != answer {
			t.Errorf("Accept-Encoding %q: the program got %d bytes (%s), not the answer", enc, len(b), resp.Header.Get("Content-Encoding"))
		}
	}
	stop()
	if got := g.Meter.Totals()["claude-sonnet-5-5"]; got != (usage.Usage{InputTokens: 90, OutputTokens: 150000}) {
		t.Errorf("metered %+v, want the three answers' own usage", g.Meter.Totals())
	}
}

// TestRedTeamGatewayAdmitBoundsOverrun: with one call's worth of budget
// left, the program opens twenty calls at once, each admitted before any
// answer is metered. Every one reached the provider before (a spent
// budget overrun by one call per connection, 64 of them); now at most
// MaxAdmitted run at once, and those after them are refused once the
// first answers are metered.
func TestRedTeamGatewayAdmitBoundsOverrun(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	reached := 0
	release := make(chan struct{})
	var g *Gateway
	admit := func() error {
		if len(g.Meter.Totals()) > 0 {
			return errors.New("the step's budget is spent")
		}
		return nil
	}
	g, c, _ := meteredGateway(t, ProviderAnthropic, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached++
		mu.Unlock()
		<-release
		io.WriteString(w, `{"model":"claude-sonnet-5-5","content":[],"usage":{"input_tokens":1000,"output_tokens":64000}}`)
	}), func() error { return admit() })
	const calls = 20
	statuses := make(chan int, calls)
	for range calls {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, "http://gateway/v1/messages", strings.NewReader(meterCallBody))
			req.Header.Set("X-Api-Key", "ph")
			resp, err := c.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := reached
		mu.Unlock()
		if n >= MaxAdmitted || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // time for calls past the bound to arrive, were they let through
	close(release)
	counts := map[int]int{}
	for range calls {
		counts[<-statuses]++
	}
	mu.Lock()
	defer mu.Unlock()
	if reached != MaxAdmitted || counts[http.StatusOK] != MaxAdmitted || counts[http.StatusPaymentRequired] != calls-MaxAdmitted {
		t.Errorf("the provider got %d calls at once with one call's budget left, statuses %v; want %d", reached, counts, MaxAdmitted)
	}
}

// TestMeterBoundsModels: calls naming thousands of models (a Gemini
// call's model is its path's) or one of a long name are kept under a
// bounded number of names, none of their tokens lost.
func TestMeterBoundsModels(t *testing.T) {
	t.Parallel()
	var m Meter
	for i := range 5000 {
		m.Add(fmt.Sprintf("model-%d", i), usage.Usage{InputTokens: 1})
	}
	m.Add(strings.Repeat("m", 1<<16), usage.Usage{OutputTokens: 7})
	got := m.Totals()
	var sum usage.Usage
	for name, u := range got {
		if len(name) > maxMeterModel {
			t.Errorf("a name of %d bytes was kept", len(name))
		}
		sum = sum.Add(u)
	}
	if len(got) > maxMeterModels+1 || sum != (usage.Usage{InputTokens: 5000, OutputTokens: 7}) {
		t.Errorf("%d names kept, %+v counted; want at most %d and every token", len(got), sum, maxMeterModels+1)
	}
}
