package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/planexhq/planex/internal/agent/tools"
)

// Provider sends one conversation turn to a model API. Implementations
// translate between these neutral types and their wire format and must
// not retry on their own: the loop retries with the step's deadline in
// mind. An HTTP failure should come back as an *APIError.
type Provider interface {
	Send(ctx context.Context, req Request) (Response, error)
}

// Request is one call: the whole conversation so far and the tools.
type Request struct {
	System          string
	Messages        []Message
	Tools           []tools.Def
	MaxOutputTokens int
}

// Role is who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one conversation entry. An assistant message may carry tool
// calls; the user message after it carries their results (and possibly
// a text nudge).
type Message struct {
	Role        Role
	Text        string
	ToolCalls   []ToolCall
	ToolResults []ToolResult
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID    string
	Name  string
	Input json.RawMessage
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID  string
	Name    string
	Content string
	IsError bool
}

// StopReason says why the model stopped producing output.
type StopReason string

const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopOther     StopReason = "other"
)

// Response is the model's reply to one Request.
type Response struct {
	Text      string
	ToolCalls []ToolCall
	Stop      StopReason
	Usage     TokenUsage
	// Model is the model that answered, when the API says so.
	Model string
}

// TokenUsage counts the tokens of one call. InputTokens counts the whole
// prompt; CacheReadTokens and CacheWriteTokens are the parts of it read
// from and written to the provider's prompt cache.
type TokenUsage struct {
	InputTokens      int64
	OutputTokens     int64
	CacheReadTokens  int64
	CacheWriteTokens int64
}

func (u TokenUsage) add(o TokenUsage) TokenUsage {
	return TokenUsage{u.InputTokens + o.InputTokens, u.OutputTokens + o.OutputTokens,
		u.CacheReadTokens + o.CacheReadTokens, u.CacheWriteTokens + o.CacheWriteTokens}
}

// APIError is an HTTP error from a model API.
type APIError struct {
	Provider   string
	StatusCode int
	// Message is the provider's own explanation, when it gave one.
	Message string
	// RetryAfter is what the Retry-After (or retry-after-ms) header asked
	// for; zero when absent.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s API returned HTTP %d", e.Provider, e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		fmt.Fprintf(&b, " %s", t)
	}
	switch e.StatusCode {
	case http.StatusUnauthorized:
		b.WriteString(" (the API key was rejected: check that it is valid and belongs to this endpoint)")
	case http.StatusForbidden:
		b.WriteString(" (the API key may not use this model or endpoint)")
	case http.StatusNotFound:
		b.WriteString(" (check the model name and the base URL)")
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

// Retryable reports whether the request may succeed if sent again later.
func (e *APIError) Retryable() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusRequestTimeout ||
		e.StatusCode == 529 || e.StatusCode >= 500
}

// ErrorMessage digs the human-readable message out of an API error body
// ({"error":{"message":…}}, {"message":…}, or a list of those), falling
// back to the trimmed body.
func ErrorMessage(body string) string {
	body = strings.TrimSpace(body)
	if body == "" {
		return ""
	}
	try := func(b []byte) string {
		var one struct {
			Message string          `json:"message"`
			Error   json.RawMessage `json:"error"`
		}
		if json.Unmarshal(b, &one) != nil {
			return ""
		}
		if one.Message != "" {
			return one.Message
		}
		var inner struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(one.Error, &inner) == nil && inner.Message != "" {
			return inner.Message
		}
		var s string
		if json.Unmarshal(one.Error, &s) == nil {
			return s
		}
		return ""
	}
	if m := try([]byte(body)); m != "" {
		return m
	}
	var list []json.RawMessage
	if json.Unmarshal([]byte(body), &list) == nil && len(list) > 0 {
		if m := try(list[0]); m != "" {
			return m
		}
	}
	if len(body) > 500 {
		body = body[:500] + "…"
	}
	return body
}

// ProviderFunc adapts a function to the Provider interface.
type ProviderFunc func(ctx context.Context, req Request) (Response, error)

// Send calls f.
func (f ProviderFunc) Send(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }
