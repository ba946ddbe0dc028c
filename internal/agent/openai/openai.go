// Package openai is the built-in agent's provider for the OpenAI Chat
// Completions API. With a base URL it also serves the many servers that
// speak the same protocol: Azure OpenAI, OpenRouter, Gemini's
// OpenAI-compatible endpoint, vLLM and Ollama.
//
// It speaks the one endpoint planex uses over net/http with request and
// response types of its own instead of the official SDK: importing the
// SDK links its whole API (its package initialisers register every type
// of every service), about 18 MB of the release binary (issue #15).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/builtin"
	"github.com/planexhq/planex/internal/backoff"
	"github.com/planexhq/planex/internal/egress"
)

// DefaultModel is used when the caller names none.
const DefaultModel = agent.DefaultOpenAIModel

// DefaultBaseURL is OpenAI's own endpoint.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Config selects the endpoint and credentials.
type Config struct {
	// APIKey is sent as a bearer token; it may be empty for local servers
	// (Ollama, vLLM) that do not check it. Nothing is read from the
	// environment (OPENAI_API_KEY, OPENAI_BASE_URL, …): only Config counts.
	APIKey  string
	BaseURL string
	Model   string
	// MaxTokensField picks how the reply limit is sent:
	// "max_completion_tokens" (OpenAI and Azure; required by reasoning
	// models) or "max_tokens" (what most compatible servers understand).
	// Empty chooses by host.
	MaxTokensField string
	HTTPClient     *http.Client
}

// Provider sends turns to a Chat Completions endpoint.
type Provider struct {
	endpoint      string // base URL + "chat/completions"
	header        http.Header
	client        *http.Client
	model         string
	useCompletion bool
	name          string
}

// New returns a provider. It does not contact the API.
func New(cfg Config) (*Provider, error) {
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("base URL %q is not an absolute URL", base)
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	host := strings.ToLower(u.Hostname())
	official := host == "api.openai.com" || strings.HasSuffix(host, ".openai.azure.com")
	p := &Provider{model: cfg.Model, name: providerName(host)}
	switch cfg.MaxTokensField {
	case "max_completion_tokens":
		p.useCompletion = true
	case "max_tokens":
	case "":
		p.useCompletion = official
	default:
		return nil, fmt.Errorf("unknown max tokens field %q", cfg.MaxTokensField)
	}
	// Only what Config says is sent: no environment lookup, no retries
	// (the agent loop retries with the step's deadline in mind).
	p.endpoint = base + "chat/completions"
	p.header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	if cfg.APIKey != "" {
		p.header.Set("Authorization", "Bearer "+cfg.APIKey)
		if strings.HasSuffix(host, ".openai.azure.com") {
			// Azure's v1 endpoint takes keys in its own header.
			p.header.Set("api-key", cfg.APIKey)
		}
	}
	p.client = cfg.HTTPClient
	if p.client == nil {
		// The key (Authorization, and Azure's api-key, which Go's client
		// carries to any host a redirect names) goes to the base URL's
		// origin alone.
		p.client = &http.Client{CheckRedirect: egress.SameOrigin}
	}
	return p, nil
}

func providerName(host string) string {
	switch {
	case strings.HasSuffix(host, ".openai.azure.com"):
		return "Azure OpenAI"
	case host == "openrouter.ai":
		return "OpenRouter"
	case host == "generativelanguage.googleapis.com":
		return "Gemini (OpenAI-compatible)"
	case host == "api.openai.com":
		return "OpenAI"
	}
	return "OpenAI-compatible (" + host + ")"
}

// Model is the model this provider asks for.
func (p *Provider) Model() string { return p.model }

// The request and reply bodies: the fields of the Chat Completions API
// that planex sends and reads.
type (
	chatRequest struct {
		Model               string        `json:"model"`
		Messages            []chatMessage `json:"messages"`
		MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
		MaxTokens           int           `json:"max_tokens,omitempty"`
		Tools               []chatTool    `json:"tools,omitempty"`
	}
	chatMessage struct {
		Role       string         `json:"role"`
		Content    *string        `json:"content,omitempty"`
		ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	chatToolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	chatTool struct {
		Type     string       `json:"type"`
		Function chatFunction `json:"function"`
	}
	chatFunction struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	}
	chatReply struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content   string         `json:"content"`
				ToolCalls []chatToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
			// cached_tokens are part of prompt_tokens (OpenAI, Gemini's
			// compatible endpoint); servers without caching omit them.
			PromptDetails struct {
				Cached int64 `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
)

// Send implements builtin.Provider.
func (p *Provider) Send(ctx context.Context, req builtin.Request) (builtin.Response, error) {
	body := chatRequest{Model: p.model, Messages: toMessages(req)}
	if req.MaxOutputTokens > 0 {
		if p.useCompletion {
			body.MaxCompletionTokens = req.MaxOutputTokens
		} else {
			body.MaxTokens = req.MaxOutputTokens
		}
	}
	for _, d := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
			return builtin.Response{}, fmt.Errorf("tool %s has an invalid input schema: %w", d.Name, err)
		}
		body.Tools = append(body.Tools, chatTool{Type: "function",
			Function: chatFunction{Name: d.Name, Description: d.Description, Parameters: schema}})
	}
	resp, err := p.post(ctx, body)
	if err != nil {
		return builtin.Response{}, err
	}
	if len(resp.Choices) == 0 {
		return builtin.Response{}, fmt.Errorf("%s returned no choices", p.name)
	}
	ch := resp.Choices[0]
	out := builtin.Response{
		Model: resp.Model,
		Text:  ch.Message.Content,
		Usage: builtin.TokenUsage{InputTokens: resp.Usage.PromptTokens, OutputTokens: resp.Usage.CompletionTokens,
			CacheReadTokens: resp.Usage.PromptDetails.Cached},
	}
	for i, c := range ch.Message.ToolCalls {
		if c.Type != "" && c.Type != "function" {
			continue
		}
		id := c.ID
		if id == "" {
			// Some compatible servers omit ids; the loop needs one to pair results.
			id = fmt.Sprintf("call_%d", i)
		}
		args := json.RawMessage(c.Function.Arguments)
		if !json.Valid(args) {
			// Let the tool report the bad arguments to the model.
			b, _ := json.Marshal(c.Function.Arguments)
			args = b
		}
		out.ToolCalls = append(out.ToolCalls, builtin.ToolCall{ID: id, Name: c.Function.Name, Input: args})
	}
	switch ch.FinishReason {
	case "stop":
		out.Stop = builtin.StopEndTurn
	case "tool_calls", "function_call":
		out.Stop = builtin.StopToolUse
	case "length":
		out.Stop = builtin.StopMaxTokens
	default:
		out.Stop = builtin.StopOther
	}
	return out, nil
}

// maxReplyBytes bounds what is read of one reply.
const maxReplyBytes = 64 << 20

// post sends one completion request and decodes the reply; an HTTP error
// becomes a *builtin.APIError the agent loop can retry or explain.
func (p *Provider) post(ctx context.Context, body chatRequest) (*chatReply, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the %s request: %w", p.name, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("calling the %s API: %w", p.name, err)
	}
	hreq.Header = p.header.Clone()
	hresp, err := p.client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("calling the %s API: %w", p.name, err)
	}
	defer hresp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(hresp.Body, maxReplyBytes))
	if err != nil {
		return nil, fmt.Errorf("calling the %s API: reading the reply: %w", p.name, err)
	}
	if hresp.StatusCode >= 400 {
		wait, _ := backoff.RetryAfter(hresp.Header, time.Now()) // zero: none asked for
		return nil, &builtin.APIError{
			Provider:   p.name,
			StatusCode: hresp.StatusCode,
			Message:    builtin.ErrorMessage(string(raw)),
			RetryAfter: wait,
		}
	}
	var out chatReply
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("calling the %s API: decoding the reply: %w", p.name, err)
	}
	return &out, nil
}

func toMessages(req builtin.Request) []chatMessage {
	out := make([]chatMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, chatMessage{Role: "system", Content: &req.System})
	}
	for _, m := range req.Messages {
		if m.Role == builtin.RoleAssistant {
			a := chatMessage{Role: "assistant"}
			if m.Text != "" {
				a.Content = &m.Text
			}
			for _, c := range m.ToolCalls {
				args := string(c.Input)
				if args == "" {
					args = "{}"
				}
				tc := chatToolCall{ID: c.ID, Type: "function"}
				tc.Function.Name, tc.Function.Arguments = c.Name, args
				a.ToolCalls = append(a.ToolCalls, tc)
			}
			if m.Text == "" && len(m.ToolCalls) == 0 {
				noText := "(no text)"
				a.Content = &noText
			}
			out = append(out, a)
			continue
		}
		for _, r := range m.ToolResults {
			content := r.Content
			if r.IsError && !strings.HasPrefix(content, "error") {
				content = "error: " + content
			}
			out = append(out, chatMessage{Role: "tool", Content: &content, ToolCallID: r.CallID})
		}
		if m.Text != "" {
			out = append(out, chatMessage{Role: "user", Content: &m.Text})
		}
	}
	return out
}
