package tools

import (
	"encoding/json"
	"fmt"
	"strings"
)

// buildDefs lists the tools of the phase: readers everywhere, writers and
// the shell only in execute, discoveries when the step has a discoveries
// file, and report_result always.
func (s *Set) buildDefs() ([]Def, error) {
	var defs []Def
	var err error
	add := func(name, desc string, input any) {
		if err != nil {
			return
		}
		var schema json.RawMessage
		if schema, err = inputSchema(input); err == nil {
			defs = append(defs, Def{name, desc, schema})
		}
	}
	add(ListFiles, "List files below a directory of the repository (recursive, .gitignore'd files and .git/ left out). "+
		"Optionally filter with a glob such as **/*.go.", listFilesInput{})
	add(ReadFile, fmt.Sprintf("Read a text file. Lines come back numbered as \"N<tab>text\" (the number and tab are not part of the file). "+
		"At most %d lines or %d bytes per call; use start_line/end_line for more.", s.cfg.MaxReadLines, s.cfg.MaxReadBytes), readFileInput{})
	add(Search, fmt.Sprintf("Search file contents with a regular expression (RE2 syntax). Returns path:line: text, at most %d matches; "+
		".gitignore'd and binary files are skipped.", s.cfg.MaxSearchResults), searchInput{})
	if !s.cfg.Phase.ReadOnly() {
		scopeNote := "You may only write inside this task's scope: " + s.cfg.Scope + "."
		if strings.TrimSpace(s.cfg.Scope) == "" {
			scopeNote = "This task has no write scope, so writes are refused."
		}
		add(WriteFile, "Create or overwrite a file with the given content (parent folders are created). "+scopeNote, writeFileInput{})
		add(EditFile, "Replace one exact, unique piece of text in a file. old_text must appear exactly once "+
			"(copy it from read_file output without the line numbers; add surrounding lines to make it unique). "+scopeNote, editFileInput{})
		add(RunCommand, fmt.Sprintf("Run a shell command (sh -c) in the repository root, e.g. to build or run tests. "+
			"Times out after %s by default; output is cut to %d bytes. Secrets are not in its environment. "+
			"Do not use it to change files outside your scope or to commit.", s.cfg.CommandTimeout, s.cfg.MaxOutputBytes), runCommandInput{})
	}
	if s.cfg.DiscoveriesFile != "" {
		add(AppendDiscover, "Share one finding with the other workers of this session (appended to the discovery board). "+
			"Use it for facts others would otherwise rediscover: conventions, test commands, integration points, blockers.", appendDiscoveryInput{})
	}
	if err != nil {
		return nil, err
	}
	defs = append(defs, Def{ReportResult, "Finish the step by reporting its result. The arguments ARE the result object and must match " +
		"the schema exactly. Call it once, at the end; nothing after it is read.", s.schema})
	return defs, nil
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
