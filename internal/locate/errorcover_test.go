package locate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planexhq/planex/internal/repomap"
)

// letters spells n in lower-case letters only, as a message's words are.
func letters(n int) string {
	s := ""
	for {
		s += string(rune('a' + n%26))
		n /= 26
		if n == 0 {
			return s
		}
	}
}

// TestRedTeamErrorCoverBounded: an issue's error line strings together
// runs of three words that are each rare in a large code file of the
// (public) repository. Every file holding one of its runs was then
// searched once for each of the line's 256 runs, 256 scans of each of
// up to 600 files read (a whole file each time), where reading them is
// one. Each file read is now scanned once for the runs it holds. The
// query with the error line may take at most a few times the same words
// without it.
func TestRedTeamErrorCoverBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const files = 80
	filler := strings.Repeat("common words fill this module body with text ", 4000) // 180 KiB
	var line []string
	for i := range files {
		run := []string{"qx" + letters(3*i), "qx" + letters(3*i+1), "qx" + letters(3*i+2)}
		line = append(line, run...)
		src := fmt.Sprintf("# %s\n\ndef f():\n    raise ValueError(%q)\n", filler, strings.Join(run, " "))
		if err := os.MkdirAll(filepath.Join(dir, "pkg"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pkg", fmt.Sprintf("mod%03d.py", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := Open(context.Background(), dir, repomap.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	words := strings.Join(line, " ")
	measure := func(q string) time.Duration {
		start := time.Now()
		if _, err := ix.Rank(q, 5, Options{}); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	measure("warm up the index")
	plain := measure("Then the program said " + words)
	flood := measure("ValueError: " + words)
	t.Logf("error line %v, same words without it %v", flood, plain)
	if flood > 5*plain+time.Second {
		t.Errorf("the error line took %v, the same words without it %v", flood, plain)
	}
}

// TestWindowsHeld: the one scan finds exactly the runs a search of the
// text for each finds.
func TestWindowsHeld(t *testing.T) {
	t.Parallel()
	vocab := []string{"aa", "bb", "cc", "dd"}
	for seed := range 200 {
		var ws []string
		for i := range seed % 12 {
			ws = append(ws, vocab[(seed*7+i*i*3+i)%len(vocab)])
		}
		text := " " + strings.Join(ws, " ") + " "
		windows := map[string]bool{}
		for _, a := range vocab {
			for _, b := range vocab {
				for _, c := range vocab {
					windows[a+" "+b+" "+c] = true
				}
			}
		}
		held := windowsHeld(text, windows)
		for w := range windows {
			if want := strings.Contains(text, " "+w+" "); held[w] != want {
				t.Fatalf("%q in %q: held %v, want %v", w, text, held[w], want)
			}
		}
	}
}

// TestRedTeamQuoteSearchBounded: an issue's 128 backtick quotes (the
// most looked up) of words every file of the repository holds, none of
// them a phrase any file holds: each quote searched every file read
// (up to 600) in full, again. The bytes searched per query are bounded
// (quoteSearchMax). The quoted issue may take at most twice the same
// words unquoted, and 0.3 s more.
func TestRedTeamQuoteSearchBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	filler := strings.Repeat("common words fill this module body with text ", 8000) // 360 KiB
	if err := os.MkdirAll(filepath.Join(dir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 80 {
		src := fmt.Sprintf("# %s\n\ndef f%d():\n    pass\n", filler, i)
		if err := os.WriteFile(filepath.Join(dir, "pkg", fmt.Sprintf("mod%03d.py", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := Open(context.Background(), dir, repomap.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ws := strings.Fields("common words fill this module body with text")
	var b strings.Builder
	for i := range maxQuotedPhrases {
		fmt.Fprintf(&b, "`%s %s %s` ", ws[i%8], ws[(i/8)%8], ws[(i/64+3)%8])
	}
	measure := func(q string) time.Duration {
		start := time.Now()
		if _, err := ix.Rank(q, 5, Options{}); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	measure("warm up the index")
	plain := measure(strings.ReplaceAll(b.String(), "`", " "))
	quoted := measure(b.String())
	t.Logf("quoted %v, the same words unquoted %v", quoted, plain)
	if quoted > 2*plain+300*time.Millisecond {
		t.Errorf("the quotes took %v, the same words unquoted %v", quoted, plain)
	}
}
