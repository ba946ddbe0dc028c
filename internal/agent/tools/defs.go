package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/planexhq/planex/internal/session"
)

// buildDefs lists the tools of the phase: readers everywhere, writers and
// the shell only in execute, discoveries when the step has a discoveries
// file, and report_result always.
func (s *Set) buildDefs() []Def {
	defs := []Def{
		{ListFiles, "List files below a directory of the repository (recursive, .gitignore'd files and .git/ left out). " +
			"Optionally filter with a glob such as **/*.go.", json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory relative to the repository root; default \".\""},
    "glob": {"type": "string", "description": "Optional doublestar glob on the repository-relative path, e.g. src/**/*.ts"}
  }
}`)},
		{ReadFile, fmt.Sprintf("Read a text file. Lines come back numbered as \"N<tab>text\" (the number and tab are not part of the file). "+
			"At most %d lines or %d bytes per call; use start_line/end_line for more.", s.cfg.MaxReadLines, s.cfg.MaxReadBytes), json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the repository root"},
    "start_line": {"type": "integer", "minimum": 1, "description": "First line to return (1-based); default 1"},
    "end_line": {"type": "integer", "minimum": 1, "description": "Last line to return (inclusive); default end of file"}
  },
  "required": ["path"]
}`)},
		{Search, fmt.Sprintf("Search file contents with a regular expression (RE2 syntax). Returns path:line: text, at most %d matches; "+
			".gitignore'd and binary files are skipped.", s.cfg.MaxSearchResults), json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "RE2 regular expression"},
    "path": {"type": "string", "description": "Directory or file to search, relative to the repository root; default \".\""},
    "glob": {"type": "string", "description": "Optional doublestar glob restricting which files are searched, e.g. **/*.go"},
    "ignore_case": {"type": "boolean"}
  },
  "required": ["pattern"]
}`)},
	}
	if !s.cfg.Phase.ReadOnly() {
		scopeNote := "You may only write inside this task's scope: " + s.cfg.Scope + "."
		if strings.TrimSpace(s.cfg.Scope) == "" {
			scopeNote = "This task has no write scope, so writes are refused."
		}
		defs = append(defs,
			Def{WriteFile, "Create or overwrite a file with the given content (parent folders are created). " + scopeNote, json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the repository root"},
    "content": {"type": "string", "description": "The complete new content of the file"}
  },
  "required": ["path", "content"]
}`)},
			Def{EditFile, "Replace one exact, unique piece of text in a file. old_text must appear exactly once " +
				"(copy it from read_file output without the line numbers; add surrounding lines to make it unique). " + scopeNote, json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the repository root"},
    "old_text": {"type": "string", "description": "Exact text to replace; must occur exactly once"},
    "new_text": {"type": "string", "description": "Replacement text"}
  },
  "required": ["path", "old_text", "new_text"]
}`)},
			Def{RunCommand, fmt.Sprintf("Run a shell command (sh -c) in the repository root, e.g. to build or run tests. "+
				"Times out after %s by default; output is cut to %d bytes. Secrets are not in its environment. "+
				"Do not use it to change files outside your scope or to commit.", s.cfg.CommandTimeout, s.cfg.MaxOutputBytes), json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "Shell command line"},
    "timeout_seconds": {"type": "integer", "minimum": 1, "description": "Optional shorter or longer limit, capped by the step's own time limit"}
  },
  "required": ["command"]
}`)},
		)
	}
	if s.cfg.DiscoveriesFile != "" {
		types, _ := json.Marshal(session.DiscoveryTypes())
		defs = append(defs, Def{AppendDiscover, "Share one finding with the other workers of this session (appended to the discovery board). " +
			"Use it for facts others would otherwise rediscover: conventions, test commands, integration points, blockers.", json.RawMessage(`{
  "type": "object",
  "properties": {
    "type": {"type": "string", "enum": ` + string(types) + `},
    "data": {"type": "object", "description": "The finding as a small JSON object, e.g. {\"command\":\"go test ./...\"}"}
  },
  "required": ["type", "data"]
}`)})
	}
	defs = append(defs, Def{ReportResult, "Finish the step by reporting its result. The arguments ARE the result object and must match " +
		"the schema exactly. Call it once, at the end; nothing after it is read.", s.schema})
	return defs
}

// resultInputSchema adapts a phase's result schema for use as tool input:
// the meta keywords some providers reject are dropped.
func resultInputSchema(schema []byte) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(schema, &m); err != nil {
		return nil, fmt.Errorf("parsing result schema: %w", err)
	}
	delete(m, "$schema")
	delete(m, "$id")
	delete(m, "title")
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding result schema: %w", err)
	}
	return b, nil
}
