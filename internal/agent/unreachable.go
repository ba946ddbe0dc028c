package agent

import "errors"

// ErrModelUnreachable marks a step that failed because its model endpoint
// could not be reached at all (connection refused, no such host, no
// route): every later step would fail the same way, so the run stops.
var ErrModelUnreachable = errors.New("the model endpoint cannot be reached")
