package review

import (
	"fmt"
	"strings"
)

// Mode says whether a run is reviewed: the Action's review input and the
// command line's --review.
type Mode string

// The review modes.
const (
	// ModeAgent: after the last wave the agent reads each completed
	// task's commit, read-only (the default).
	ModeAgent Mode = "agent"
	// ModeSkip: nothing is reviewed.
	ModeSkip Mode = "skip"
)

// UnknownModeError is a review value that is not a mode.
type UnknownModeError struct{ Value string }

func (e *UnknownModeError) Error() string {
	return fmt.Sprintf("review must be agent or skip, got %q", e.Value)
}

// ParseMode reads a review value, ignoring case and surrounding space:
// empty means ModeAgent, and none, off and false are accepted for skip.
// Anything else is an *UnknownModeError.
func ParseMode(v string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(v))); m {
	case "", ModeAgent:
		return ModeAgent, nil
	case ModeSkip, "none", "off", "false":
		return ModeSkip, nil
	default:
		return "", &UnknownModeError{Value: v}
	}
}
