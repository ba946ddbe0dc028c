package review

import (
	"errors"
	"testing"
)

func TestParseMode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in      string
		want    Mode
		unknown bool
	}{
		{in: "", want: ModeAgent},
		{in: "agent", want: ModeAgent},
		{in: " Agent\n", want: ModeAgent},
		{in: "skip", want: ModeSkip},
		{in: "SKIP", want: ModeSkip},
		{in: "none", want: ModeSkip},
		{in: "off", want: ModeSkip},
		{in: "false", want: ModeSkip},
		{in: "maybe", unknown: true},
		{in: "agents", unknown: true},
		{in: "true", unknown: true},
	} {
		got, err := ParseMode(c.in)
		var bad *UnknownModeError
		switch {
		case c.unknown && !errors.As(err, &bad):
			t.Errorf("ParseMode(%q) = %q, %v; want an *UnknownModeError", c.in, got, err)
		case c.unknown && (bad.Value != c.in || err.Error() != `review must be agent or skip, got "`+c.in+`"`):
			t.Errorf("ParseMode(%q): error %q (value %q) does not name the input and the value", c.in, err, bad.Value)
		case !c.unknown && (err != nil || got != c.want):
			t.Errorf("ParseMode(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
