package agent

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/language"
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
//
// planex checks results itself rather than with a general JSON Schema
// library: the result schemas use a handful of keywords (rule lists
// them), and such a library compiled every draft's metaschema when each
// planex process started, sandbox helpers included (about 5 ms each).
// schema_test.go holds the results to the general library's verdicts.
func Validate(p Phase, raw []byte) error {
	sch, err := compile(p)
	if err != nil {
		return err
	}
	inst, err := decodeInstance(raw)
	if err != nil {
		return fmt.Errorf("result is not valid JSON: %w", err)
	}
	var probs []string
	sch.check(inst, "", &probs)
	if len(probs) > 0 {
		return fmt.Errorf("result does not match the %s schema: %s", p, strings.Join(probs, "; "))
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

// errTrailing: a value followed by more than white space.
var errTrailing = errors.New("invalid character after top-level value")

// decodeInstance reads exactly one JSON value, numbers kept exact.
func decodeInstance(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return v, nil
}

// rule is one (sub)schema, as far as the result schemas use JSON Schema:
// these keywords and no others (compile refuses any other, so a schema
// that starts using one fails its tests rather than going unchecked).
type rule struct {
	Schema      string           `json:"$schema"`
	Title       string           `json:"title"`
	Description string           `json:"description"`
	Type        string           `json:"type"`
	Required    []string         `json:"required"`
	Properties  map[string]*rule `json:"properties"`
	Items       *rule            `json:"items"`
	Enum        []string         `json:"enum"`
	Pattern     string           `json:"pattern"`
	MinLength   *int             `json:"minLength"`
	MaxLength   *int             `json:"maxLength"`
	MinItems    *int             `json:"minItems"`
	MaxItems    *int             `json:"maxItems"`
	Minimum     *json.Number     `json:"minimum"`

	pattern *regexp.Regexp
	minimum *big.Rat
}

func compile(p Phase) (*rule, error) {
	b, err := Schema(p)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var r rule
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("parsing %s schema: %w", p, err)
	}
	if err := r.prepare(""); err != nil {
		return nil, fmt.Errorf("loading %s schema: %w", p, err)
	}
	return &r, nil
}

// prepare compiles the patterns and bounds of r and its subschemas.
func (r *rule) prepare(at string) error {
	switch r.Type {
	case "object", "array", "string", "integer", "number", "boolean":
	default:
		return fmt.Errorf("at %q: type %q is not one planex checks", at+"/", r.Type)
	}
	if r.Pattern != "" {
		re, err := regexp.Compile(r.Pattern)
		if err != nil {
			return fmt.Errorf("at %q: pattern: %w", at+"/", err)
		}
		r.pattern = re
	}
	if r.Minimum != nil {
		m, ok := new(big.Rat).SetString(r.Minimum.String())
		if !ok {
			return fmt.Errorf("at %q: minimum %s is not a number", at+"/", r.Minimum)
		}
		r.minimum = m
	}
	for name, sub := range r.Properties {
		if err := sub.prepare(at + "/properties/" + name); err != nil {
			return err
		}
	}
	if r.Items != nil {
		return r.Items.prepare(at + "/items")
	}
	return nil
}

// check appends to probs one "at <location>: <problem>" for each way v
// breaks r. A value of the wrong type, or outside an enum, is not
// checked further.
func (r *rule) check(v any, at string, probs *[]string) {
	where := at
	if where == "" {
		where = "/"
	}
	add := func(format string, args ...any) {
		// English, as models read it: numbers grouped (4,001).
		*probs = append(*probs, "at "+where+": "+message.NewPrinter(language.English).Sprintf(format, args...))
	}
	if got := typeName(v); !r.typeMatches(v, got) {
		add("got %s, want %s", got, r.Type)
		return
	}
	if r.Enum != nil {
		if s, ok := v.(string); !ok || !slices.Contains(r.Enum, s) {
			add("%s", enumWant(r.Enum))
			return
		}
	}
	switch v := v.(type) {
	case map[string]any:
		r.checkObject(v, at, probs, add)
	case []any:
		r.checkArray(v, at, probs, add)
	case string:
		r.checkString(v, add)
	case json.Number:
		if n, ok := new(big.Rat).SetString(v.String()); ok && r.minimum != nil && n.Cmp(r.minimum) < 0 {
			got, _ := n.Float64()
			want, _ := r.minimum.Float64()
			add("minimum: got %v, want %v", got, want)
		}
	}
}

func (r *rule) checkObject(obj map[string]any, at string, probs *[]string, add func(string, ...any)) {
	var missing []string
	for _, name := range r.Required {
		if _, ok := obj[name]; !ok {
			missing = append(missing, quote(name))
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		add("missing property %s", missing[0])
	default:
		add("missing properties %s", strings.Join(missing, ", "))
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		if r.Properties[name] != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		r.Properties[name].check(obj[name], at+"/"+name, probs)
	}
}

func (r *rule) checkArray(arr []any, at string, probs *[]string, add func(string, ...any)) {
	if r.MinItems != nil && len(arr) < *r.MinItems {
		add("minItems: got %d, want %d", len(arr), *r.MinItems)
	}
	if r.MaxItems != nil && len(arr) > *r.MaxItems {
		add("maxItems: got %d, want %d", len(arr), *r.MaxItems)
	}
	if r.Items != nil {
		for i, item := range arr {
			r.Items.check(item, at+"/"+strconv.Itoa(i), probs)
		}
	}
}

func (r *rule) checkString(s string, add func(string, ...any)) {
	n := utf8.RuneCountInString(s)
	if r.MinLength != nil && n < *r.MinLength {
		add("minLength: got %d, want %d", n, *r.MinLength)
	}
	if r.MaxLength != nil && n > *r.MaxLength {
		add("maxLength: got %d, want %d", n, *r.MaxLength)
	}
	if r.pattern != nil && !r.pattern.MatchString(s) {
		add("%s does not match pattern %s", quote(s), quote(r.Pattern))
	}
}

// typeMatches: JSON Schema's integer is any number with no fraction
// (2.0 is one).
func (r *rule) typeMatches(v any, got string) bool {
	if r.Type == "integer" && got == "number" {
		n, ok := new(big.Rat).SetString(v.(json.Number).String())
		return ok && n.IsInt()
	}
	return got == r.Type
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}

func enumWant(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = quote(v)
	}
	if len(quoted) == 1 {
		return "value must be " + quoted[0]
	}
	return "value must be one of " + strings.Join(quoted, ", ")
}

// quote puts s in single quotes, escaped as Go would but for double
// quotes, and with its own single quotes escaped.
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, `'`, `\'`) + "'"
}
