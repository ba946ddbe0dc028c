package locate

import (
	"reflect"
	"testing"
)

// TestStackFramesOfEveryLanguage checks that the frames of Go, JavaScript,
// TypeScript, Rust and JVM stack traces are read as traceback frames,
// numbered so that the innermost, which these languages print first, has
// the highest number, as a Python traceback's last frame does.
func TestStackFramesOfEveryLanguage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, issue string
		want        []pathMention
	}{
		{"go panic", "panic: boom\n\ngoroutine 1 [running]:\nexample.com/svc/lease.(*Token).Refresh(0x0)\n\t/build/svc/lease/token.go:31 +0x1d\nmain.main()\n\t/build/svc/main.go:12 +0x8a\r\n",
			[]pathMention{{"build/svc/lease/token.go", 2}, {"build/svc/main.go", 1}}},
		{"typescript behind webpack", "Uncaught TypeError: x is undefined\n    at Panel.render (webpack:///./src/panel/Panel.ts:9:51)\n    at run (webpack:///./src/app.ts:30:7)\n",
			[]pathMention{{"src/panel/Panel.ts", 2}, {"src/app.ts", 1}}},
		{"node frame without a function", "Error: nope\n    at /srv/app/lib/queue.js:14:3\n    at processTicksAndRejections (node:internal/process/task_queues:95:5)\n",
			[]pathMention{{"srv/app/lib/queue.js", 1}}},
		{"rust backtrace", "thread 'main' panicked at src/merge.rs:4:5:\noverflow\nstack backtrace:\n   0: search::merge\n             at ./crates/search/src/merge.rs:22:9\n   1: main\n             at ./src/main.rs:3:5\n",
			[]pathMention{{"crates/search/src/merge.rs", 2}, {"src/main.rs", 1}, {"src/merge.rs", 0}}},
		{"jvm frames name their package's directory", "Exception in thread \"main\" java.lang.NullPointerException\n\tat com.acme.audit.EventClient$Inner.replay(EventClient.java:21)\n\tat Main.main(Main.java:9)\n",
			[]pathMention{{"com/acme/audit/EventClient.java", 2}, {"Main.java", 1}}},
		{"python frames come first, the others after them", "Traceback (most recent call last):\n  File \"/app/run.py\", line 3, in <module>\n    go()\nthen\n\t/build/bridge.go:5 +0x1\n",
			[]pathMention{{"app/run.py", 1}, {"build/bridge.go", 2}}},
		{"a path in prose is no frame", "the bug is in src/app.ts:30 when the list is empty",
			[]pathMention{{"src/app.ts", 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, _ := mentionedPaths(c.issue)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("mentionedPaths = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestInnermostFrameOfAGoPanic checks that the innermost frame of a Go
// panic in the repository's own code, not the caller below it, is the one
// the innermost-frame signal marks.
func TestInnermostFrameOfAGoPanic(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"go.mod":               "module example.com/svc\n\ngo 1.22\n",
		"svc/lease/token.go":   "package lease\n\ntype Token struct{ n *int }\n\nfunc (t *Token) Refresh() int { return *t.n }\n",
		"svc/lease/handler.go": "package lease\n\nfunc Handle(t *Token) int { return t.Refresh() }\n",
		"svc/other.go":         "package svc\n\nfunc Other() {}\n",
	}
	root, m := mapTree(t, files)
	ix := NewIndex(m)
	issue := "crash\n```\npanic: runtime error: invalid memory address or nil pointer dereference\n\ngoroutine 7 [running]:\n" +
		"runtime.panicmem()\n\t/usr/local/go/src/runtime/panic.go:262 +0x2e\n" +
		"example.com/svc/lease.(*Token).Refresh(...)\n\t/home/ci/svc/svc/lease/token.go:5 +0x1d\n" +
		"example.com/svc/lease.Handle(0x0)\n\t/home/ci/svc/svc/lease/handler.go:3 +0x8a\n```\n"
	ev := ix.evidence(issue, root)
	for p, want := range map[string]bool{"svc/lease/token.go": true, "svc/lease/handler.go": false} {
		i, ok := ix.byPath(p)
		if !ok {
			t.Fatalf("%s is not in the index", p)
		}
		if got := ev.feats.at(fInnermost, i) > 0; got != want {
			t.Errorf("%s: innermost_frame %v, want %v", p, ev.feats.at(fInnermost, i), want)
		}
		if ev.feats.at(fFrame, i) <= 0 {
			t.Errorf("%s: no traceback_frame credit", p)
		}
	}
}

// TestShortTracebackFrames checks that the frames of IPython's and
// pytest's traceback formats are read in the order printed, outermost
// first, and that lines that only look like them are not.
func TestShortTracebackFrames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, issue string
		want        []string
	}{
		{"ipython 8", "Cell In[3], line 1\n----> 1 t.write('x.fits')\nFile ~/env/lib/python3.10/site-packages/astro/io/registry/base.py:212, in UnifiedWrite.__call__(self)\nFile ~/env/lib/python3.10/site-packages/astro/io/fits/connect.py:72, in is_fits(origin, *args)\n",
			[]string{"astro/io/registry/base.py", "astro/io/fits/connect.py"}},
		{"ipython before 8", "<ipython-input-2-1b2> in <module>()\n/Users/me/env/lib/python3.6/site-packages/astro/units/core.py in __eq__(self, other)\n   1700 \n",
			[]string{"astro/units/core.py"}},
		{"pytest", "src/_pytest/runner.py:255: in from_call\n    result = func()\n.venv/lib/python3.8/site-packages/pluggy/manager.py:84: in <lambda>\nsrc/_pytest/setuponly.py:69: in _show_fixture_action\n    tw.write(\"[{}]\".format(fixturedef.cached_param))\nE   BytesWarning: str() on a bytes instance\n",
			[]string{"src/_pytest/runner.py", "pluggy/manager.py", "src/_pytest/setuponly.py"}},
		{"windows pytest", "..\\lib\\site-packages\\astro\\units\\quantity.py:617: in __array_ufunc__\n",
			[]string{"astro/units/quantity.py"}},
		{"a full python traceback is read elsewhere", "  File \"/app/pkg/mod.py\", line 3, in f\n", nil},
		{"prose naming a file is no frame", "the bug in pkg/mod.py in my opinion (see pkg/other.py:12: in short) is old\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := shortFrames(c.issue); !reflect.DeepEqual(got, c.want) {
				t.Errorf("shortFrames = %q, want %q", got, c.want)
			}
		})
	}
}

// TestInnermostShortFrame checks that the innermost frame of an IPython
// or pytest traceback that lands in one non-test file of the repository is
// the one the innermost-frame signal marks: not a frame in an installed
// library, not a test, not its caller; and that a full Python traceback's
// innermost frame still wins over a short one.
func TestInnermostShortFrame(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"pkg/__init__.py":       "",
		"pkg/io/registry.py":    "def write(obj, fmt):\n    return lookup(fmt)(obj)\n",
		"pkg/io/connect.py":     "def is_fits(origin, *args):\n    return args[0].endswith('.fits')\n",
		"pkg/core.py":           "def run():\n    pass\n",
		"tests/test_connect.py": "from pkg.io.connect import is_fits\n\ndef test_is_fits():\n    assert is_fits('w', 'x')\n",
	}
	root, m := mapTree(t, files)
	ix := NewIndex(m)
	cases := []struct{ name, issue, want string }{
		{"ipython 8", "write fails\n```\nFile ~/env/site-packages/pkg/io/registry.py:2, in write(obj, fmt)\nFile ~/env/site-packages/pkg/io/connect.py:2, in is_fits(origin, *args)\nIndexError: tuple index out of range\n```\n", "pkg/io/connect.py"},
		{"a library frame innermost", "```\n~/env/site-packages/pkg/io/registry.py in write(obj, fmt)\n~/env/lib/python3.9/posixpath.py in splitext(p)\n```\n", "pkg/io/registry.py"},
		{"a test frame innermost", "```\npkg/io/connect.py:2: in is_fits\ntests/test_connect.py:4: in test_is_fits\n```\n", "pkg/io/connect.py"},
		{"a full traceback wins", "```\nTraceback (most recent call last):\n  File \"/src/pkg/core.py\", line 2, in run\nValueError\n```\nand in the notebook\n```\nFile ~/env/site-packages/pkg/io/connect.py:2, in is_fits(origin)\n```\n", "pkg/core.py"},
		{"no frame resolves", "```\n~/env/lib/python3.9/posixpath.py in splitext(p)\n```\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ev := ix.evidence(c.issue, root)
			var got []string
			for p := range files {
				if i, ok := ix.byPath(p); ok && ev.feats.at(fInnermost, i) > 0 {
					got = append(got, p)
				}
			}
			want := []string{}
			if c.want != "" {
				want = []string{c.want}
			}
			if len(got) != len(want) || (len(got) == 1 && got[0] != want[0]) {
				t.Errorf("innermost_frame on %q, want %q", got, want)
			}
		})
	}
}
