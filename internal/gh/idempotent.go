package gh

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// GitHub does not deduplicate creates: a comment, an issue, a review or
// a reply sent twice exists twice. When the answer to one is lost (a 5xx
// from a proxy, a reset connection, a timeout) it may have been applied
// all the same. So every such create carries a hidden marker of its own,
// and after a lost answer the client looks for that marker before it
// sends the create again.

// markerPrefix starts the hidden marker a create carries.
const markerPrefix = "<!-- planex:req "

// maxBody is GitHub's limit on comment, issue and review bodies.
const maxBody = 65536

// lookback is how far before the first attempt a lookup searches, for
// clocks that disagree.
const lookback = 10 * time.Minute

// withMarker appends a fresh hidden marker to body and returns both. A
// body with no room left for it (or an empty one, which must stay empty)
// goes without; lookups then compare the whole body.
func withMarker(body string) (string, string) {
	if body == "" {
		return body, ""
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return body, ""
	}
	m := markerPrefix + hex.EncodeToString(b[:]) + " -->"
	out := body + "\n\n" + m
	if len(out) > maxBody {
		return body, ""
	}
	return out, m
}

// sent reports whether got is the body a create sent: it holds the
// create's marker, or (without one) it is the body itself.
func sent(got, body, marker string) bool {
	if marker != "" {
		return strings.Contains(got, marker)
	}
	return got == body
}

// isAmbiguous says whether err leaves unknown whether a write was
// applied: a lost answer or a server error.
func isAmbiguous(err error) bool {
	if errors.Is(err, ErrAmbiguous) {
		return true
	}
	var er *github.ErrorResponse
	return errors.As(err, &er) && er.Response != nil &&
		er.Response.StatusCode >= 500 && er.Response.StatusCode != http.StatusNotImplemented
}

// createOnce sends a create, and after an ambiguous failure looks with
// find for what it would have made before sending it again. find reports
// whether the create is there (and keeps what it found).
func (c *Client) createOnce(ctx context.Context, what string, send func() error, find func() (bool, error)) error {
	var err error
	for attempt := 1; ; attempt++ {
		err = c.write(send)
		if err == nil || !isAmbiguous(err) || attempt >= c.policy.MaxAttempts {
			return err
		}
		c.log.WarnContext(ctx, "github: a create may have been applied; looking for it before sending it again", "what", what, "attempt", attempt, "err", err)
		if serr := c.sleep(ctx, c.policy.backoff(attempt)); serr != nil {
			return err
		}
		found, ferr := find()
		if ferr != nil {
			c.log.WarnContext(ctx, "github: looking for a create whose answer was lost", "what", what, "err", ferr)
			// Unknown whether it exists: sending again could duplicate it.
			return err
		}
		if found {
			c.log.InfoContext(ctx, "github: the create had been applied; not sending it again", "what", what)
			return nil
		}
	}
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.retry != nil && c.retry.sleep != nil {
		return c.retry.sleep(ctx, d)
	}
	return sleepCtx(ctx, d)
}
