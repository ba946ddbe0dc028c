package locate

import (
	"strings"
	"testing"
)

// An environment report (runs of "name: value" lines) is left out of the
// issue, but a stack trace, whose frames read as such lines in several
// languages, is kept whole.
func TestDropEnvironmentKeepsStackFrames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		kept       []string
		dropped    []string
	}{
		{"an environment report", "Breaks on save\nOS: Ubuntu 22.04\nPython: 3.11\nVersion: 2.3.1\nBrowser: Firefox 120\n",
			[]string{"Breaks on save"}, []string{"Ubuntu", "Firefox"}},
		{"a TypeScript stack", "Replay throws\nTypeError: bad id\n    at send (web/wire.ts:1:40)\n    at replay (web/client.ts:2:50)\n    at main (scripts/try.ts:3:1)\n",
			[]string{"web/wire.ts:1:40", "web/client.ts:2:50", "scripts/try.ts:3:1"}, nil},
		{"a JVM stack", "Replay fails\njava.lang.IllegalStateException: closed\n\tat com.acme.audit.EventClient.replay(EventClient.java:21)\n\tat com.acme.audit.Replayer.run(Replayer.java:9)\n\tat com.acme.Main.main(Main.java:4)\n",
			[]string{"EventClient.java:21", "Replayer.java:9", "Main.java:4"}, nil},
		{"a Python traceback", "Fails\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n  File \"pkg/b.py\", line 2, in f\n  File \"pkg/c.py\", line 3, in g\nValueError: x\n",
			[]string{"pkg/b.py", "pkg/c.py"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := dropEnvironment(c.text)
			for _, s := range c.kept {
				if !strings.Contains(got, s) {
					t.Errorf("dropped %q; left %q", s, got)
				}
			}
			for _, s := range c.dropped {
				if strings.Contains(got, s) {
					t.Errorf("kept %q; left %q", s, got)
				}
			}
		})
	}
}
