package locate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
// one. Each file read is now scanned once for the runs it holds.
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
	// The signal as Rank calls it, with a reader counting its calls: the
	// ranking's readers keep what they read, so each call is one search
	// of a file's text, the cost that grew with the runs.
	read, calls, _ := countingReader(dir, ix, true)
	ev := &evidence{feats: newFeatureColumns(len(ix.files))}
	ix.messageSignal(boundWindows(errorPhrases("ValueError: "+strings.Join(line, " "))), func(int) bool { return true }, read, ev)
	t.Logf("%d searches of %d files for an error line of %d runs", *calls, files, len(line)/3)
	if *calls > files || *calls == 0 {
		t.Errorf("the error line searched the %d files %d times, want each once at most (and some)", files, *calls)
	}
}

// countingReader reads dir's files by their number in ix as the ranking
// does (lower case, white space folded; as words alone when words is
// true), keeping each file's text, and counts the calls and the bytes it
// hands out.
func countingReader(dir string, ix *Index, words bool) (read func(int) (string, bool), calls, handed *int) {
	calls, handed = new(int), new(int)
	texts := map[int]string{}
	read = func(f int) (string, bool) {
		*calls++
		t, ok := texts[f]
		if !ok {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(ix.files[f].path)))
			if err != nil {
				return "", false
			}
			t = strings.Join(strings.Fields(strings.ToLower(string(data))), " ")
			if words {
				t = " " + messageWords(t) + " "
			}
			texts[f] = t
		}
		*handed += len(t)
		return t, true
	}
	return read, calls, handed
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
// (quoteSearchMax): 128 quotes of 80 files of 360 KiB were 3.6 GB.
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
	read, _, searched := countingReader(dir, ix, false)
	ev := &evidence{feats: newFeatureColumns(len(ix.files))}
	ix.phraseSignal(quotedPhrases(b.String()), fQuotedText, "holds words the issue quotes", func(int) bool { return true }, read, ev)
	// Each quote may read one more file than it searches (the read is
	// kept, the search not made) once the budget is spent.
	bound := quoteSearchMax + maxQuotedPhrases*len(filler)*2
	t.Logf("the quotes were handed %d MiB of text", *searched>>20)
	if *searched > bound {
		t.Errorf("the quotes were handed %d MiB of text to search, want at most %d MiB", *searched>>20, bound>>20)
	}
}
