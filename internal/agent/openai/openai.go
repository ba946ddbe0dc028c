// Package openai is the built-in agent's provider for the OpenAI Chat
// Completions API, over the official Go SDK. With a base URL it also
// serves the many servers that speak the same protocol: Azure OpenAI,
// OpenRouter, Gemini's OpenAI-compatible endpoint, vLLM and Ollama.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/builtin"
)

// DefaultModel is used when the caller names none.
const DefaultModel = agent.DefaultOpenAIModel

// DefaultBaseURL is OpenAI's own endpoint.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Config selects the endpoint and credentials.
type Config struct {
	// APIKey is sent as a bearer token; it may be empty for local servers
	// (Ollama, vLLM) that do not check it. The SDK's environment lookup
	// (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, …) is bypassed.
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
	chat          sdk.ChatCompletionService
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
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		// The agent loop retries with the step's deadline in mind.
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
		if strings.HasSuffix(host, ".openai.azure.com") {
			// Azure's v1 endpoint takes keys in its own header.
			opts = append(opts, option.WithHeader("api-key", cfg.APIKey))
		}
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	} else {
		opts = append(opts, option.WithHTTPClient(&http.Client{}))
	}
	// The chat service alone, built from explicit options, never reads
	// the environment the way sdk.NewClient does.
	p.chat = sdk.NewChatCompletionService(opts...)
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

// Send implements builtin.Provider.
func (p *Provider) Send(ctx context.Context, req builtin.Request) (builtin.Response, error) {
	params := sdk.ChatCompletionNewParams{
		Model:    shared.ChatModel(p.model),
		Messages: toMessages(req),
	}
	if req.MaxOutputTokens > 0 {
		if p.useCompletion {
			params.MaxCompletionTokens = sdk.Int(int64(req.MaxOutputTokens))
		} else {
			params.MaxTokens = sdk.Int(int64(req.MaxOutputTokens))
		}
	}
	for _, d := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
			return builtin.Response{}, fmt.Errorf("tool %s has an invalid input schema: %w", d.Name, err)
		}
		params.Tools = append(params.Tools, sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        d.Name,
			Description: sdk.String(d.Description),
			Parameters:  shared.FunctionParameters(schema),
		}))
	}
	resp, err := p.chat.New(ctx, params)
	if err != nil {
		return builtin.Response{}, p.convertError(err)
	}
	if len(resp.Choices) == 0 {
		return builtin.Response{}, fmt.Errorf("%s returned no choices", p.name)
	}
	ch := resp.Choices[0]
	out := builtin.Response{
		Model: resp.Model,
		Text:  ch.Message.Content,
		Usage: builtin.TokenUsage{InputTokens: resp.Usage.PromptTokens, OutputTokens: resp.Usage.CompletionTokens},
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

func toMessages(req builtin.Request) []sdk.ChatCompletionMessageParamUnion {
	out := make([]sdk.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, sdk.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		if m.Role == builtin.RoleAssistant {
			a := sdk.ChatCompletionAssistantMessageParam{}
			if m.Text != "" {
				a.Content.OfString = sdk.String(m.Text)
			}
			for _, c := range m.ToolCalls {
				args := string(c.Input)
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
					},
				})
			}
			if m.Text == "" && len(m.ToolCalls) == 0 {
				a.Content.OfString = sdk.String("(no text)")
			}
			out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
			continue
		}
		for _, r := range m.ToolResults {
			content := r.Content
			if r.IsError && !strings.HasPrefix(content, "error") {
				content = "error: " + content
			}
			out = append(out, sdk.ToolMessage(content, r.CallID))
		}
		if m.Text != "" {
			out = append(out, sdk.UserMessage(m.Text))
		}
	}
	return out
}

func (p *Provider) convertError(err error) error {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("calling the %s API: %w", p.name, err)
	}
	status := apiErr.StatusCode
	var header http.Header
	if apiErr.Response != nil {
		status = apiErr.Response.StatusCode
		header = apiErr.Response.Header
	}
	msg := apiErr.Message
	if msg == "" {
		msg = builtin.ErrorMessage(apiErr.RawJSON())
	}
	return &builtin.APIError{
		Provider:   p.name,
		StatusCode: status,
		Message:    msg,
		RetryAfter: builtin.ParseRetryAfter(header, time.Now()),
	}
}
