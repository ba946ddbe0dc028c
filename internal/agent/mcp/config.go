// Package mcp connects planex's agents to the Model Context Protocol
// servers a user configures (--mcp-config, the Action's mcp-config input),
// in the `.mcp.json` shape Claude Code and others read. For the built-in
// agents planex is the MCP client (Start): it runs stdio servers contained
// like any agent process, lists their tools, forwards the model's calls
// and stops the servers when the step ends. The CLI agents get the same
// servers written into their own configuration (package clis).
package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/safefile"
)

// Server types.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
)

// Server is one configured MCP server, its ${VAR}s already expanded.
type Server struct {
	Name string
	// Type is TypeStdio (Command, Args, Env) or TypeHTTP (URL, Headers).
	Type    string
	Command string
	Args    []string
	// Env is added to the server's environment, after planex removed its
	// own secrets from it; it reaches this server only.
	Env     map[string]string
	URL     string
	Headers map[string]string
}

// Config is the set of servers, sorted by name.
type Config struct {
	Servers []Server
}

// Empty reports whether no server is configured.
func (c Config) Empty() bool { return len(c.Servers) == 0 }

// serverName is what a server may be called: it becomes part of tool
// names (mcp__NAME__TOOL), which model APIs limit to these characters.
var serverName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)

// maxConfigFile bounds a configuration file: servers take a few hundred
// bytes each.
const maxConfigFile = 1 << 20

// Load reads a configuration given as inline JSON (starting with "{") or
// as the path of a file, relative to dir when not absolute. lookup reads
// the variables ${VAR} names.
func Load(arg, dir string, lookup func(string) (string, bool)) (Config, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return Config{}, nil
	}
	if strings.HasPrefix(arg, "{") {
		return Parse([]byte(arg), "inline MCP configuration", lookup)
	}
	path := arg
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	// Only a regular file, read up to maxConfigFile: a configuration
	// linked to /dev/zero or a FIFO (a repository can commit either
	// where the Action's mcp-config input points) neither fills memory
	// nor blocks.
	data, err := safefile.ReadRegular(path, maxConfigFile)
	if err != nil {
		return Config{}, fmt.Errorf("reading the MCP configuration: %w", err)
	}
	return Parse(data, arg, lookup)
}

// rawServer is one entry of mcpServers as written. Fields other tools
// read (timeouts, descriptions) are ignored.
type rawServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// Parse reads a configuration; source names it in errors. A nil lookup
// finds no variable set.
func Parse(data []byte, source string, lookup func(string) (string, bool)) (Config, error) {
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	var doc struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return Config{}, fmt.Errorf("%s: %s", source, jsonError(data, err))
	}
	if doc.Servers == nil {
		return Config{}, fmt.Errorf("%s: no \"mcpServers\" object", source)
	}
	var c Config
	for name, raw := range doc.Servers {
		where := fmt.Sprintf("%s: server %q", source, name)
		if !serverName.MatchString(name) || strings.Contains(name, "__") {
			return Config{}, fmt.Errorf("%s: the name may hold only letters, digits, '-' and single '_' (at most 40), as it becomes part of tool names", where)
		}
		var r rawServer
		if err := json.Unmarshal(raw, &r); err != nil {
			return Config{}, fmt.Errorf("%s: %v", where, err)
		}
		s, err := r.server(name, lookup)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", where, err)
		}
		c.Servers = append(c.Servers, s)
	}
	sort.Slice(c.Servers, func(i, j int) bool { return c.Servers[i].Name < c.Servers[j].Name })
	return c, nil
}

func (r rawServer) server(name string, lookup func(string) (string, bool)) (Server, error) {
	s := Server{Name: name, Type: r.Type}
	if s.Type == "" {
		s.Type = TypeStdio
		if r.Command == "" && r.URL != "" {
			s.Type = TypeHTTP
		}
	}
	var err error
	switch s.Type {
	case TypeStdio:
		if strings.TrimSpace(r.Command) == "" {
			return s, errors.New("a stdio server needs a \"command\"")
		}
		if r.URL != "" || len(r.Headers) > 0 {
			return s, errors.New("a stdio server takes no \"url\" or \"headers\" (set \"type\": \"http\" for an HTTP server)")
		}
		s.Command, s.Args = r.Command, r.Args
		if s.Env, err = expandAll(r.Env, "env", lookup); err != nil {
			return s, err
		}
	case TypeHTTP, "streamable-http", "streamableHttp":
		s.Type = TypeHTTP
		if r.URL == "" {
			return s, errors.New("an HTTP server needs a \"url\"")
		}
		if !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://") {
			return s, fmt.Errorf("url %q is not an http:// or https:// address", r.URL)
		}
		if r.Command != "" || len(r.Env) > 0 {
			return s, errors.New("an HTTP server takes no \"command\" or \"env\"")
		}
		s.URL = r.URL
		if s.Headers, err = expandAll(r.Headers, "headers", lookup); err != nil {
			return s, err
		}
	case "sse":
		return s, errors.New("type \"sse\" (the deprecated HTTP+SSE transport) is not supported; use \"http\" (streamable HTTP)")
	default:
		return s, fmt.Errorf("unknown type %q (use \"stdio\" or \"http\")", r.Type)
	}
	return s, nil
}

// varRef is ${NAME} or ${NAME:-default}.
var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

func expandAll(in map[string]string, field string, lookup func(string) (string, bool)) (map[string]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		var missing []string
		var guarded string
		out[k] = varRef.ReplaceAllStringFunc(v, func(ref string) string {
			m := varRef.FindStringSubmatch(ref)
			if agent.IsPlanexCredential(m[1]) {
				guarded = m[1]
				return ""
			}
			if val, ok := lookup(m[1]); ok && val != "" {
				return val
			}
			if strings.Contains(ref, ":-") {
				return m[2]
			}
			missing = append(missing, m[1])
			return ""
		})
		if guarded != "" {
			// With a CLI agent the expanded value lands in a file the
			// agent's shell can read: planex's own token never goes there.
			return nil, fmt.Errorf("%s.%s: ${%s} is planex's own GitHub credential, which no MCP server gets; give the server a token of its own under another name", field, k, guarded)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s.%s: ${%s} is not set in planex's environment", field, k, missing[0])
		}
	}
	return out, nil
}

// jsonError says where in data a JSON error is, by line and column.
func jsonError(data []byte, err error) string {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err.Error()
	}
	before := data[:off]
	line := 1 + strings.Count(string(before), "\n")
	col := int(off) - strings.LastIndex(string(before), "\n")
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}
