package agent

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/message"
)

//go:embed schemas/*.json
var schemaFS embed.FS

// Schema returns the JSON Schema (draft 2020-12) of a phase's result.
func Schema(p Phase) ([]byte, error) {
	b, err := schemaFS.ReadFile("schemas/" + string(p) + ".json")
	if err != nil {
		return nil, fmt.Errorf("no result schema for phase %q", p)
	}
	return b, nil
}

// Validate checks raw against the phase's schema and returns an error
// that names the offending field, suitable for showing to a model.
func Validate(p Phase, raw []byte) error {
	sch, err := compile(p)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("result is not valid JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("result does not match the %s schema: %s", p, flatten(err))
	}
	return nil
}

// Decode validates raw and unmarshals it into v.
func Decode(p Phase, raw []byte, v any) error {
	if err := Validate(p, raw); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decoding %s result: %w", p, err)
	}
	return nil
}

func compile(p Phase) (*jsonschema.Schema, error) {
	b, err := Schema(p)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("parsing %s schema: %w", p, err)
	}
	c := jsonschema.NewCompiler()
	url := "planex://schemas/" + string(p) + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("loading %s schema: %w", p, err)
	}
	return c.Compile(url)
}

// flatten turns the library's nested error tree into one line per leaf.
func flatten(err error) string {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err.Error()
	}
	printer := message.NewPrinter(message.MatchLanguage("en"))
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			out = append(out, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(out, "; ")
}
