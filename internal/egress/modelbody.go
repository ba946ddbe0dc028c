package egress

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxModelBody bounds the body of one model call the gateway reads
// before passing it on (the providers' own limits are about 32 MiB).
const maxModelBody = 64 << 20

// ErrServerFetch marks a model call that asks the provider to reach a
// place of the request's choosing (a remote MCP server, a URL fetch tool):
// the provider's servers would carry what the agent put in the request
// past the step's allow-list.
var ErrServerFetch = errors.New("the model call asks the provider to connect to a place of the request's choosing")

// errBody marks a body the gateway cannot read as one JSON object.
var errBody = errors.New("the body of a model call must be one JSON object, without content encoding, of at most 64 MiB")

// spoolBody reads r's body, up to maxModelBody, into an unlinked
// temporary file (not memory: a call may carry megabytes of images)
// and returns it rewound, with its size.
func spoolBody(body io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "planex-gateway-body-")
	if err != nil {
		return nil, 0, fmt.Errorf("spooling a model call: %w", err)
	}
	os.Remove(f.Name())
	n, err := io.Copy(f, io.LimitReader(body, maxModelBody+1))
	if err == nil && n > maxModelBody {
		err = errBody
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("reading a model call's body: %w", err)
	}
	return f, n, nil
}

// fold spells a JSON member name the way lenient readers match it: lower
// case, without underscores (Gemini's API reads url_context and
// urlContext alike).
func fold(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "_", "")
}

// checkModelBody reads a model call's JSON body and refuses, with
// ErrServerFetch, the parts that make the provider connect somewhere the
// request names: Anthropic's mcp_servers and its MCP and web fetch tools,
// OpenAI's MCP tool, Gemini's URL context tool. Web search tools pass
// (Codex sends one by default): docs/security.md counts them with the
// model provider as a way out. An empty body passes (a GET).
func checkModelBody(p Provider, body io.Reader) error {
	dec := json.NewDecoder(bufio.NewReaderSize(body, 32<<10))
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return errBody
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errBody
		}
		key := fold(tok.(string))
		switch {
		case key == "mcpservers":
			return fmt.Errorf("%w (%q)", ErrServerFetch, tok)
		case key == "tools":
			if err := checkTools(p, dec); err != nil {
				return err
			}
		default:
			if err := skipValue(dec); err != nil {
				return errBody
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return errBody
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errBody
	}
	return nil
}

// checkTools reads a tools array and refuses the tools that fetch from
// the network on the provider's side. Every member is looked at as it
// comes, so a name given twice cannot hide one of its values.
func checkTools(p Provider, dec *json.Decoder) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return errBody
	}
	for dec.More() {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return errBody
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return errBody
			}
			name := tok.(string)
			n := fold(name)
			if p == ProviderGemini && n == "urlcontext" {
				return fmt.Errorf("%w (the %q tool)", ErrServerFetch, name)
			}
			if n != "type" {
				if err := skipValue(dec); err != nil {
					return errBody
				}
				continue
			}
			v, err := dec.Token()
			if err != nil {
				return errBody
			}
			typ, ok := v.(string)
			if !ok {
				return errBody
			}
			if err := checkToolType(typ); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return errBody
		}
	}
	if _, err := dec.Token(); err != nil {
		return errBody
	}
	return nil
}

// checkToolType refuses a tool type that connects to an address the
// request gives: MCP (Anthropic's toolset, OpenAI's remote server) and
// URL fetch.
func checkToolType(typ string) error {
	t := fold(typ)
	if strings.HasPrefix(t, "mcp") || strings.HasPrefix(t, "webfetch") {
		return fmt.Errorf("%w (a tool of type %q)", ErrServerFetch, typ)
	}
	return nil
}

// skipValue reads past one JSON value token by token, so a large value
// is never held whole (only its largest string is).
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}
