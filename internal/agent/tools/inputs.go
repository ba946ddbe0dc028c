package tools

import (
	"encoding/json"
	"fmt"

	"github.com/invopop/jsonschema"

	"github.com/planexhq/planex/internal/session"
)

// The arguments of each tool. The handlers decode into these types, and
// the input schemas offered to the model are generated from them
// (inputSchema), so the two cannot drift apart. Tags: `json` names the
// argument, `jsonschema` says whether it is required and its bounds,
// `jsonschema_description` what the model reads about it.

type listFilesInput struct {
	Path string `json:"path,omitempty" jsonschema_description:"Directory relative to the repository root; default \".\""`
	Glob string `json:"glob,omitempty" jsonschema_description:"Optional doublestar glob on the repository-relative path, e.g. src/**/*.ts"`
}

type readFileInput struct {
	Path      string `json:"path" jsonschema:"required" jsonschema_description:"File path relative to the repository root"`
	StartLine int    `json:"start_line,omitempty" jsonschema:"minimum=1" jsonschema_description:"First line to return (1-based); default 1"`
	EndLine   int    `json:"end_line,omitempty" jsonschema:"minimum=1" jsonschema_description:"Last line to return (inclusive); default end of file"`
}

type searchInput struct {
	Pattern    string `json:"pattern" jsonschema:"required" jsonschema_description:"RE2 regular expression"`
	Path       string `json:"path,omitempty" jsonschema_description:"Directory or file to search, relative to the repository root; default \".\""`
	Glob       string `json:"glob,omitempty" jsonschema_description:"Optional doublestar glob restricting which files are searched, e.g. **/*.go"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
}

// writeFileInput's fields are pointers so that a missing argument is told
// apart from an empty one.
type writeFileInput struct {
	Path    *string `json:"path" jsonschema:"required" jsonschema_description:"File path relative to the repository root"`
	Content *string `json:"content" jsonschema:"required" jsonschema_description:"The complete new content of the file"`
}

type editFileInput struct {
	Path    string  `json:"path" jsonschema:"required" jsonschema_description:"File path relative to the repository root"`
	OldText *string `json:"old_text" jsonschema:"required" jsonschema_description:"Exact text to replace; must occur exactly once"`
	NewText *string `json:"new_text" jsonschema:"required" jsonschema_description:"Replacement text"`
}

type runCommandInput struct {
	Command        string `json:"command" jsonschema:"required" jsonschema_description:"Shell command line"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"minimum=1" jsonschema_description:"Optional shorter or longer limit, capped by the step's own time limit"`
}

type appendDiscoveryInput struct {
	// Type's enum is the board's list of types, filled in by inputSchema.
	Type string          `json:"type" jsonschema:"required"`
	Data json.RawMessage `json:"data" jsonschema:"required" jsonschema_extras:"type=object" jsonschema_description:"The finding as a small JSON object, e.g. {\"command\":\"go test ./...\"}"`
}

// inputSchema generates the JSON Schema of a tool's arguments from their
// Go type: an object schema with no $schema or $id, which some model APIs
// refuse.
func inputSchema(v any) (json.RawMessage, error) {
	r := jsonschema.Reflector{
		RequiredFromJSONSchemaTags: true,
		DoNotReference:             true,
		ExpandedStruct:             true,
		Anonymous:                  true,
		// Unknown arguments are reported by the handlers, in words the
		// model can act on.
		AllowAdditionalProperties: true,
	}
	s := r.Reflect(v)
	s.Version = ""
	if _, ok := v.(appendDiscoveryInput); ok {
		if p, ok := s.Properties.Get("type"); ok {
			for _, t := range session.DiscoveryTypes() {
				p.Enum = append(p.Enum, t)
			}
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("generating the input schema of %T: %w", v, err)
	}
	return b, nil
}
