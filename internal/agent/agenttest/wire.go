package agenttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// The scripted model servers below speak the wire formats of the coding
// CLIs planex drives (Anthropic Messages with SSE for Claude Code, the
// OpenAI Responses API with SSE for Codex, Gemini streamGenerateContent
// SSE for Gemini CLI). They decode each request into a Turn, ask a Script
// what the model does next, and stream that back with a fixed usage, so a
// real CLI can be run end to end without a model.

// Turn is what a scripted model sees of one request.
type Turn struct {
	// Model is the model the request names.
	Model string
	// Prompt is every user text of the conversation (not tool results),
	// joined by newlines; the system prompt is in System.
	Prompt string
	System string
	// Tools are the names of the tools offered.
	Tools []string
	// Results are the outputs of the tool calls so far, oldest first.
	Results []string
}

// Offers reports whether the request offers the tool.
func (t Turn) Offers(name string) bool {
	for _, n := range t.Tools {
		if n == name {
			return true
		}
	}
	return false
}

// Action is the model's reply: a tool call when Tool is set, else Text.
type Action struct {
	Tool string
	// Input is the tool's arguments: a JSON object, or for a free-form
	// (custom) tool such as Codex's apply_patch, a string.
	Input any
	Text  string
	// Refuse makes the reply a refusal (with Text as its explanation)
	// in the wire format's own way.
	Refuse bool
	// Status, when set, answers with this HTTP error status and Text as
	// the API's error message instead of a reply.
	Status int
}

// Script decides the model's next reply.
type Script func(Turn) Action

// Usage is the fixed token count every reply reports. In counts the
// whole prompt; CacheRead and CacheWrite are the parts of it served from
// and written to the prompt cache, reported in each format's own way
// (CacheWrite only by Anthropic's, the one format that reports writes).
type Usage struct{ In, Out, CacheRead, CacheWrite int64 }

// Server is a scripted model server for one wire format; mount it with
// httptest.NewServer.
type Server struct {
	t      testing.TB
	script Script
	usage  Usage
	format string

	mu       sync.Mutex
	turns    []Turn
	keys     []string
	requests []string
}

// Anthropic serves POST /v1/messages with streaming (SSE) replies; keys
// are read from x-api-key.
func Anthropic(t testing.TB, u Usage, s Script) *Server {
	return &Server{t: t, script: s, usage: u, format: "anthropic"}
}

// Responses serves the OpenAI Responses API (POST …/responses, SSE);
// keys are read from the Authorization header.
func Responses(t testing.TB, u Usage, s Script) *Server {
	return &Server{t: t, script: s, usage: u, format: "responses"}
}

// Gemini serves POST …/models/{model}:streamGenerateContent (SSE) and
// :generateContent; keys are read from x-goog-api-key (or ?key=).
func Gemini(t testing.TB, u Usage, s Script) *Server {
	return &Server{t: t, script: s, usage: u, format: "gemini"}
}

// Turns returns the decoded model requests served so far.
func (s *Server) Turns() []Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Turn(nil), s.turns...)
}

// Keys returns the credential each model request carried.
func (s *Server) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.keys...)
}

// Requests lists every request as "METHOD path", including those the
// server answered with 404.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch s.format {
	case "anthropic":
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/messages") {
			http.NotFound(w, r)
			return
		}
		s.anthropic(w, r, body)
	case "responses":
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
			http.NotFound(w, r)
			return
		}
		s.responses(w, r, body)
	case "gemini":
		if r.Method != http.MethodPost || !strings.Contains(r.URL.Path, "/models/") {
			http.NotFound(w, r)
			return
		}
		s.gemini(w, r, body)
	}
}

// next records a turn and asks the script for the reply.
func (s *Server) next(turn Turn, key string) Action {
	s.mu.Lock()
	s.turns = append(s.turns, turn)
	s.keys = append(s.keys, key)
	s.mu.Unlock()
	return s.script(turn)
}

func sse(w http.ResponseWriter) func(event string, data any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	return func(event string, data any) {
		b, err := json.Marshal(data)
		if err != nil {
			panic(err)
		}
		if event != "" {
			fmt.Fprintf(w, "event: %s\n", event)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// text joins the text of a content value that is a string or a list of
// blocks with a "text" field.
func text(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, b := range c {
			if m, ok := b.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					parts = append(parts, s)
				} else if m["content"] != nil {
					parts = append(parts, text(m["content"]))
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// apiError answers with the wire format's error body.
func (s *Server) apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var body any
	switch s.format {
	case "anthropic":
		body = map[string]any{"type": "error", "error": map[string]any{"type": "authentication_error", "message": msg}}
	case "responses":
		body = map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": msg, "code": "invalid_api_key"}}
	default:
		body = map[string]any{"error": map[string]any{"code": status, "message": msg, "status": http.StatusText(status)}}
	}
	json.NewEncoder(w).Encode(body)
}

// --- Anthropic Messages ---

func (s *Server) anthropic(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Model    string `json:"model"`
		System   any    `json:"system"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		s.t.Errorf("anthropic request is not JSON: %v", err)
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	turn := Turn{Model: req.Model, System: text(req.System)}
	var prompt []string
	for _, m := range req.Messages {
		if m.Role == "system" {
			turn.System += "\n" + text(m.Content)
			continue
		}
		if m.Role != "user" {
			continue
		}
		if str, ok := m.Content.(string); ok {
			prompt = append(prompt, str)
			continue
		}
		blocks, _ := m.Content.([]any)
		for _, b := range blocks {
			blk, _ := b.(map[string]any)
			switch blk["type"] {
			case "text":
				s, _ := blk["text"].(string)
				prompt = append(prompt, s)
			case "tool_result":
				turn.Results = append(turn.Results, text(blk["content"]))
			}
		}
	}
	turn.Prompt = strings.Join(prompt, "\n")
	for _, t := range req.Tools {
		turn.Tools = append(turn.Tools, t.Name)
	}
	act := s.next(turn, r.Header.Get("X-Api-Key"))
	if act.Status != 0 {
		s.apiError(w, act.Status, act.Text)
		return
	}

	id := fmt.Sprintf("msg_%d", len(s.Turns()))
	stop := "end_turn"
	if act.Refuse {
		stop = "refusal"
	}
	var block map[string]any
	var delta map[string]any
	if act.Tool != "" {
		stop = "tool_use"
		in, _ := json.Marshal(act.Input)
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", len(s.Turns())), "name": act.Tool, "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(in)}
	} else {
		block = map[string]any{"type": "text", "text": ""}
		delta = map[string]any{"type": "text_delta", "text": act.Text}
	}
	// Anthropic's input_tokens leaves out the cached parts of the prompt.
	usage := map[string]any{"input_tokens": s.usage.In - s.usage.CacheRead - s.usage.CacheWrite, "output_tokens": 1,
		"cache_creation_input_tokens": s.usage.CacheWrite, "cache_read_input_tokens": s.usage.CacheRead}
	if !req.Stream {
		if act.Tool != "" {
			block["input"] = act.Input
		} else {
			block["text"] = act.Text
		}
		usage["output_tokens"] = s.usage.Out
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	send := sse(w)
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": s.usage.Out}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// --- OpenAI Responses ---

func (s *Server) responses(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Model        string           `json:"model"`
		Instructions string           `json:"instructions"`
		Input        []map[string]any `json:"input"`
		Tools        []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		s.t.Errorf("responses request is not JSON: %v", err)
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	turn := Turn{Model: req.Model, System: req.Instructions}
	var prompt []string
	for _, item := range req.Input {
		switch item["type"] {
		case "message", nil:
			if item["role"] == "user" {
				prompt = append(prompt, text(item["content"]))
			}
		case "function_call_output", "custom_tool_call_output":
			out := item["output"]
			if str, ok := out.(string); ok {
				turn.Results = append(turn.Results, str)
			} else {
				turn.Results = append(turn.Results, text(out))
			}
		}
	}
	turn.Prompt = strings.Join(prompt, "\n")
	for _, t := range req.Tools {
		name, _ := t["name"].(string)
		if name == "" {
			if fn, ok := t["function"].(map[string]any); ok {
				name, _ = fn["name"].(string)
			}
		}
		if name == "" {
			name, _ = t["type"].(string)
		}
		turn.Tools = append(turn.Tools, name)
	}
	act := s.next(turn, r.Header.Get("Authorization"))
	if act.Status != 0 {
		s.apiError(w, act.Status, act.Text)
		return
	}

	n := len(s.Turns())
	respID := fmt.Sprintf("resp_%d", n)
	var item map[string]any
	switch input := act.Input.(type) {
	case string:
		item = map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_%d", n), "call_id": fmt.Sprintf("call_%d", n),
			"name": act.Tool, "input": input, "status": "completed"}
	default:
		if act.Tool != "" {
			args, _ := json.Marshal(input)
			item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "call_id": fmt.Sprintf("call_%d", n),
				"name": act.Tool, "arguments": string(args), "status": "completed"}
		} else {
			part := map[string]any{"type": "output_text", "text": act.Text, "annotations": []any{}}
			if act.Refuse {
				part = map[string]any{"type": "refusal", "refusal": act.Text}
			}
			item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n), "role": "assistant", "status": "completed",
				"content": []any{part}}
		}
	}
	usage := map[string]any{"input_tokens": s.usage.In, "input_tokens_details": map[string]any{"cached_tokens": s.usage.CacheRead},
		"output_tokens": s.usage.Out, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": s.usage.In + s.usage.Out}
	send := sse(w)
	base := map[string]any{"id": respID, "object": "response", "model": req.Model, "status": "in_progress", "output": []any{}}
	send("response.created", map[string]any{"type": "response.created", "response": base})
	send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	done := map[string]any{"id": respID, "object": "response", "model": req.Model, "status": "completed", "output": []any{item}, "usage": usage}
	send("response.completed", map[string]any{"type": "response.completed", "response": done})
}

// --- Gemini ---

func (s *Server) gemini(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Contents []struct {
			Role  string           `json:"role"`
			Parts []map[string]any `json:"parts"`
		} `json:"contents"`
		SystemInstruction struct {
			Parts []map[string]any `json:"parts"`
		} `json:"systemInstruction"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		s.t.Errorf("gemini request is not JSON: %v", err)
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	// …/models/NAME:method
	model, method, _ := strings.Cut(r.URL.Path[strings.LastIndex(r.URL.Path, "/models/")+len("/models/"):], ":")
	turn := Turn{Model: model}
	var sys []string
	for _, p := range req.SystemInstruction.Parts {
		if t, ok := p["text"].(string); ok {
			sys = append(sys, t)
		}
	}
	turn.System = strings.Join(sys, "\n")
	var prompt []string
	for _, c := range req.Contents {
		if c.Role != "user" {
			continue
		}
		for _, p := range c.Parts {
			if t, ok := p["text"].(string); ok {
				prompt = append(prompt, t)
			}
			if fr, ok := p["functionResponse"].(map[string]any); ok {
				b, _ := json.Marshal(fr["response"])
				turn.Results = append(turn.Results, string(b))
			}
		}
	}
	turn.Prompt = strings.Join(prompt, "\n")
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			turn.Tools = append(turn.Tools, f.Name)
		}
	}
	key := r.Header.Get("X-Goog-Api-Key")
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	if method == "countTokens" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"totalTokens":%d}`, s.usage.In)
		return
	}
	act := s.next(turn, key)
	if act.Status != 0 {
		s.apiError(w, act.Status, act.Text)
		return
	}
	var part map[string]any
	if act.Tool != "" {
		part = map[string]any{"functionCall": map[string]any{"name": act.Tool, "args": act.Input}}
	} else {
		part = map[string]any{"text": act.Text}
	}
	candidate := map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}
	if act.Refuse {
		candidate = map[string]any{"finishReason": "SAFETY", "index": 0,
			"safetyRatings": []any{map[string]any{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": true}}}
	}
	chunk := map[string]any{
		"candidates": []any{candidate},
		"usageMetadata": map[string]any{"promptTokenCount": s.usage.In, "candidatesTokenCount": s.usage.Out,
			"totalTokenCount": s.usage.In + s.usage.Out},
		"modelVersion": model,
	}
	if s.usage.CacheRead > 0 {
		// Part of promptTokenCount; the API leaves zero counts out.
		chunk["usageMetadata"].(map[string]any)["cachedContentTokenCount"] = s.usage.CacheRead
	}
	if method == "streamGenerateContent" {
		sse(w)("", chunk)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(chunk)
}
