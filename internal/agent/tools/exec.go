package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/planexhq/planex/internal/agent"
	"github.com/planexhq/planex/internal/proc"
	"github.com/planexhq/planex/internal/session"
)

// capBuffer keeps the first and last bytes of a stream and counts what it
// dropped in between, so a long build log still shows how it ended.
type capBuffer struct {
	mu      sync.Mutex
	limit   int
	head    []byte
	tail    []byte
	dropped int
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	half := c.limit / 2
	if room := half - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	c.tail = append(c.tail, p...)
	if over := len(c.tail) - (c.limit - half); over > 0 {
		c.dropped += over
		c.tail = append(c.tail[:0], c.tail[over:]...)
	}
	return n, nil
}

func (c *capBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped == 0 {
		return string(c.head) + string(c.tail)
	}
	return fmt.Sprintf("%s\n… [%d bytes of output left out] …\n%s", c.head, c.dropped, c.tail)
}

func (s *Set) runCommand(ctx context.Context, input json.RawMessage) (Output, error) {
	var in runCommandInput
	if err := decode(input, &in); err != nil {
		return fail("%v", err), nil
	}
	if strings.TrimSpace(in.Command) == "" {
		return fail("command is empty"), nil
	}
	timeout := s.cfg.CommandTimeout
	if in.TimeoutSeconds > 0 {
		timeout = time.Duration(in.TimeoutSeconds) * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.Command("sh", "-c", in.Command)
	cmd.Dir = s.dir
	var writable []string
	if s.cfg.Phase == agent.PhaseExecute || s.cfg.Phase == agent.PhaseReview {
		writable = []string{s.dir}
	}
	cleanup, err := s.cfg.Contain.PrepareContext(ctx, cmd, s.cfg.Env, writable, []string{s.dir})
	if err != nil {
		return fail("%v", err), nil
	}
	defer cleanup()
	cmd.Stdin = nil
	out := &capBuffer{limit: s.cfg.MaxOutputBytes}
	cmd.Stdout = out
	cmd.Stderr = out
	started := time.Now()
	err = proc.Run(cctx, cmd)
	if cctx.Err() != nil {
		if ctx.Err() != nil {
			// The step itself ended; that is not the model's problem to fix.
			return Output{}, ctx.Err()
		}
		return fail("command timed out after %s and was killed; output so far:\n%s", timeout, out.String()), nil
	}
	s.cfg.Logger.Debug("run_command", "command", in.Command, "took", time.Since(started).Round(time.Millisecond), "err", err)
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return fail("running command: %v", err), nil
		}
		code = ee.ExitCode()
	}
	text := out.String()
	if text == "" {
		text = "(no output)"
	}
	return Output{Text: fmt.Sprintf("exit code %d\n%s", code, text), IsError: code != 0}, nil
}

func (s *Set) appendDiscovery(input json.RawMessage) Output {
	var in appendDiscoveryInput
	if err := decode(input, &in); err != nil {
		return fail("%v", err)
	}
	if len(in.Data) > 4000 {
		return fail("data is %d bytes; keep a discovery under 4000 bytes", len(in.Data))
	}
	var obj map[string]any
	if json.Unmarshal(in.Data, &obj) != nil || len(obj) == 0 {
		return fail("data must be a non-empty JSON object")
	}
	compact, _ := json.Marshal(obj)
	d := session.Discovery{
		TS:     s.cfg.Now().UTC().Format(time.RFC3339),
		Worker: s.cfg.Worker,
		Type:   in.Type,
		Data:   compact,
	}
	if err := session.AppendDiscovery(s.cfg.DiscoveriesFile, d); err != nil {
		return fail("%v", err)
	}
	return ok("discovery recorded")
}

// reportResult validates the phase result. The first invalid result is
// sent back with the validation error; a second one ends the step.
func (s *Set) reportResult(input json.RawMessage) (Output, error) {
	if s.result != nil {
		return ok("a result was already accepted; stop now"), nil
	}
	raw := []byte(input)
	// Some models wrap the object in a string or under "result".
	var str string
	if json.Unmarshal(raw, &str) == nil {
		raw = []byte(str)
	}
	var wrap map[string]json.RawMessage
	if json.Unmarshal(raw, &wrap) == nil && len(wrap) == 1 && wrap["result"] != nil {
		raw = wrap["result"]
	}
	if err := agent.Validate(s.cfg.Phase, raw); err != nil {
		s.invalid++
		if s.invalid >= 2 {
			return Output{}, fmt.Errorf("%w: %v", ErrResultRejected, err)
		}
		return fail("%v. Fix the result and call report_result again; a second invalid result fails the step", err), nil
	}
	s.result = append(json.RawMessage(nil), raw...)
	return ok("result accepted"), nil
}
