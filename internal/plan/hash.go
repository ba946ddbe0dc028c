package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Hash is the sha256 of a plan's inputs: every task's planned columns, in
// id order. Outputs (status, findings, …) do not change it, so a plan keeps
// its hash while it runs; any edit to what will be done does.
func Hash(tasks []Task) string {
	sorted := append([]Task(nil), tasks...)
	SortByID(sorted)
	type in struct {
		ID, Title, Description, Test, Acceptance, Scope, Hints, Directives string
		Deps, ContextFrom                                                  []string
	}
	rows := make([]in, len(sorted))
	for i, t := range sorted {
		rows[i] = in{t.ID, t.Title, t.Description, t.Test, t.AcceptanceCriteria, t.Scope, t.Hints.String(), t.ExecutionDirectives, t.Deps, t.ContextFrom}
	}
	b, _ := json.Marshal(rows) // plain structs of strings cannot fail to marshal
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// InputsHash is the sha256 of what a plan's tasks are told besides their
// own rows: the requirement and the exploration (each row's id, angle,
// status, findings and key files), which the tasks' prompts quote
// (PrevContext). A plan comment carries it, so that what runs is told
// what the approver's plan was made from.
func InputsHash(requirement string, explore []ExploreRow) string {
	type row struct {
		ID, Angle, Status, Findings string
		KeyFiles                    []string
	}
	in := struct {
		Requirement string
		Explore     []row
	}{Requirement: requirement, Explore: make([]row, len(explore))}
	for i, e := range explore {
		in.Explore[i] = row{e.ID, e.Angle, string(e.Status), e.Findings, e.KeyFiles}
	}
	b, _ := json.Marshal(in) // plain structs of strings cannot fail to marshal
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ID is the short plan id users type: the first 10 hex digits of the hash.
func ID(hash string) string {
	if len(hash) < 10 {
		return hash
	}
	return hash[:10]
}
