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
