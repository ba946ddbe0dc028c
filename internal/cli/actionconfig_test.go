package cli

import (
	"errors"
	"testing"

	"github.com/sethvargo/go-githubactions"

	"github.com/planexhq/planex/internal/review"
)

// TestActionConfigReview: the review input becomes a review.Mode, and a
// value that is not one is a usage error naming the input and the value.
func TestActionConfigReview(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		input, want, err string
	}{
		{input: "", want: "agent"},
		{input: "agent", want: "agent"},
		{input: "skip", want: "skip"},
		{input: "off", want: "skip"},
		{input: "maybe", err: `input review must be agent or skip, got "maybe"`},
	} {
		env := map[string]string{"INPUT_REVIEW": c.input}
		getenv := func(k string) string { return env[k] }
		in := actionInputs{gha: githubactions.New(githubactions.WithGetenv(getenv)), getenv: getenv}
		cfg, err := actionConfig(in, getenv, "octo", "demo", "main", "https://github.com", "")
		if c.err != "" {
			var exit *exitError
			if !errors.As(err, &exit) || exit.code != exitUsage || exit.msg != c.err {
				t.Errorf("review %q: error %v; want the usage error %q", c.input, err, c.err)
			}
			continue
		}
		if err != nil || cfg.Review != review.Mode(c.want) {
			t.Errorf("review %q: Review = %q, %v; want %q", c.input, cfg.Review, err, c.want)
		}
	}
}
