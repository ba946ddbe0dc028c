// Package anthropic is the built-in agent's provider for the Anthropic
// Messages API, over the official Go SDK.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/agent/builtin"
	"github.com/planexhq/planex/internal/agent/tools"
	"github.com/planexhq/planex/internal/backoff"
	"github.com/planexhq/planex/internal/egress"
)

// DefaultModel is used when the caller names none.
const DefaultModel = agent.DefaultAnthropicModel

// Config selects the endpoint and credentials.
type Config struct {
	// APIKey is sent as x-api-key. The SDK's own lookup of
	// ANTHROPIC_API_KEY and friends is switched off: only this key is used.
	APIKey string
	// BaseURL overrides https://api.anthropic.com (proxies, gateways).
	BaseURL string
	Model   string
	// HTTPClient replaces the default client (tests, proxies).
	HTTPClient *http.Client
}

// Provider sends turns to the Messages API.
type Provider struct {
	client sdk.Client
	model  string
}

// New returns a provider. It does not contact the API.
func New(cfg Config) (*Provider, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("anthropic provider needs an API key")
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(cfg.APIKey),
		// The agent loop retries with the step's deadline in mind.
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = defaultClient()
	}
	opts = append(opts, option.WithHTTPClient(hc))
	return &Provider{client: sdk.NewClient(opts...), model: cfg.Model}, nil
}

// Model is the model this provider asks for.
func (p *Provider) Model() string { return p.model }

// Send implements builtin.Provider.
func (p *Provider) Send(ctx context.Context, req builtin.Request) (builtin.Response, error) {
	params := sdk.MessageNewParams{
		Model:     p.model,
		MaxTokens: int64(req.MaxOutputTokens),
		Messages:  toMessages(req.Messages),
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	for _, d := range req.Tools {
		t, err := toTool(d)
		if err != nil {
			return builtin.Response{}, err
		}
		params.Tools = append(params.Tools, t)
	}
	markCache(&params)
	msg, err := p.client.Messages.New(ctx, params)
	if err != nil {
		return builtin.Response{}, convertError(err)
	}
	return fromMessage(msg), nil
}

// markCache sets prompt-cache breakpoints on what stays the same from
// one turn of a step to the next: the tools, the system prompt, and the
// conversation so far (its last block), so each turn reads the prefix
// the turn before wrote instead of paying for all of it again. The API
// allows four breakpoints; this uses three.
func markCache(p *sdk.MessageNewParams) {
	if n := len(p.Tools); n > 0 && p.Tools[n-1].OfTool != nil {
		p.Tools[n-1].OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	if n := len(p.System); n > 0 {
		p.System[n-1].CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	if n := len(p.Messages); n > 0 {
		if blocks := p.Messages[n-1].Content; len(blocks) > 0 {
			if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
				*cc = sdk.NewCacheControlEphemeralParam()
			}
		}
	}
}

func toMessages(msgs []builtin.Message) []sdk.MessageParam {
	out := make([]sdk.MessageParam, 0, len(msgs))
	for _, m := range msgs {
		var blocks []sdk.ContentBlockParamUnion
		for _, r := range m.ToolResults {
			blocks = append(blocks, sdk.NewToolResultBlock(r.CallID, r.Content, r.IsError))
		}
		if m.Text != "" {
			blocks = append(blocks, sdk.NewTextBlock(m.Text))
		}
		for _, c := range m.ToolCalls {
			input := c.Input
			if len(input) == 0 || !json.Valid(input) {
				input = json.RawMessage(`{}`)
			}
			blocks = append(blocks, sdk.NewToolUseBlock(c.ID, input, c.Name))
		}
		if len(blocks) == 0 {
			// The API refuses empty content; an empty assistant turn
			// still has to be kept to preserve alternation.
			blocks = append(blocks, sdk.NewTextBlock("(no text)"))
		}
		if m.Role == builtin.RoleAssistant {
			out = append(out, sdk.NewAssistantMessage(blocks...))
		} else {
			out = append(out, sdk.NewUserMessage(blocks...))
		}
	}
	return out
}

// toTool splits a JSON Schema into the SDK's input-schema fields.
func toTool(d tools.Def) (sdk.ToolUnionParam, error) {
	var schema map[string]any
	if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
		return sdk.ToolUnionParam{}, fmt.Errorf("tool %s has an invalid input schema: %w", d.Name, err)
	}
	in := sdk.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				in.Required = append(in.Required, s)
			}
		}
	}
	for k, v := range schema {
		switch k {
		case "type", "properties", "required":
		default:
			in.ExtraFields[k] = v
		}
	}
	t := sdk.ToolUnionParamOfTool(in, d.Name)
	t.OfTool.Description = sdk.String(d.Description)
	return t, nil
}

func fromMessage(msg *sdk.Message) builtin.Response {
	r := builtin.Response{
		Model: msg.Model,
		Usage: builtin.TokenUsage{
			// The API's input_tokens leaves out cached prompt tokens;
			// they are input too, priced at their own rates.
			InputTokens:      msg.Usage.InputTokens + msg.Usage.CacheCreationInputTokens + msg.Usage.CacheReadInputTokens,
			OutputTokens:     msg.Usage.OutputTokens,
			CacheReadTokens:  msg.Usage.CacheReadInputTokens,
			CacheWriteTokens: msg.Usage.CacheCreationInputTokens,
		},
	}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			if r.Text != "" {
				r.Text += "\n"
			}
			r.Text += b.Text
		case "tool_use":
			r.ToolCalls = append(r.ToolCalls, builtin.ToolCall{ID: b.ID, Name: b.Name, Input: append(json.RawMessage(nil), b.Input...)})
		}
	}
	switch msg.StopReason {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		r.Stop = builtin.StopEndTurn
	case sdk.StopReasonToolUse:
		r.Stop = builtin.StopToolUse
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		r.Stop = builtin.StopMaxTokens
	default:
		r.Stop = builtin.StopOther
	}
	return r
}

func convertError(err error) error {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("calling the Anthropic API: %w", err)
	}
	status := apiErr.StatusCode
	var header http.Header
	if apiErr.Response != nil {
		status = apiErr.Response.StatusCode
		header = apiErr.Response.Header
	}
	wait, _ := backoff.RetryAfter(header, time.Now()) // zero: none asked for
	return &builtin.APIError{
		Provider:   "Anthropic",
		StatusCode: status,
		Message:    builtin.ErrorMessage(apiErr.RawJSON()),
		RetryAfter: wait,
	}
}

// defaultClient is the SDK's own default (a bound on the wait for an
// answer's header, none on a stream) that follows no redirect to another
// origin: the key travels in x-api-key, a header Go's client carries
// along to any host a redirect names.
func defaultClient() *http.Client {
	c := &http.Client{CheckRedirect: egress.SameOrigin}
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute
		c.Transport = t
	}
	return c
}
