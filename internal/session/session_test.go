package session

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNewID(t *testing.T) {
	day := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cases := map[string]string{
		"Add rate limiting to the public API!": "add-rate-limiting-to-the-public-api-2026-11-22",
		"   ":                                  "run-2026-11-22",
		"A very long requirement that goes on and on past forty chars": "a-very-long-requirement-that-goes-on-and-2026-11-22",
	}
	for in, want := range cases {
		if got := NewID(in, day); got != want {
			t.Errorf("NewID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCreateOpenList(t *testing.T) {
	root := testStore(t)
	now := time.Now().UTC()
	a, err := Create(root, Meta{ID: "x-2026-11-22", Created: now})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Create(root, Meta{ID: "x-2026-11-22", Created: now.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if b.Meta.ID != "x-2026-11-22-2" || b.Meta.Branch != "planex/x-2026-11-22-2" {
		t.Fatalf("second session = %+v", b.Meta)
	}
	newest, err := Open(root, "")
	if err != nil || newest.Meta.ID != b.Meta.ID {
		t.Fatalf("Open newest = %v, %v", newest, err)
	}
	if s, err := Open(root, a.Meta.ID); err != nil || s.Path != a.Path {
		t.Fatalf("Open by id = %v, %v", s, err)
	}
	if _, err := Open(root, "nope"); err == nil || !strings.Contains(err.Error(), `no session "nope"`) {
		t.Fatalf("Open missing = %v", err)
	}
	if _, err := Open(root, "../x"); err == nil {
		t.Fatal("Open accepted a path")
	}
	if _, err := Open(testStore(t), ""); err == nil || !strings.Contains(err.Error(), "no planex session") {
		t.Fatalf("Open in empty repo = %v", err)
	}
}

func TestDiscoveryBoard(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d", DiscoveriesFile)
	ts := time.Now().UTC().Format(time.RFC3339)
	good := Discovery{TS: ts, Worker: "E1", Type: "test_command", Data: json.RawMessage(`{"command":"go test ./..."}`)}
	for i := 0; i < 2; i++ {
		if err := AppendDiscovery(p, good); err != nil {
			t.Fatal(err)
		}
	}
	if err := AppendDiscovery(p, Discovery{TS: ts, Worker: "E1", Type: "gossip", Data: json.RawMessage(`{}`)}); err == nil {
		t.Fatal("accepted an unknown type")
	}
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{broken\n")
	f.Close()
	AppendDiscovery(p, Discovery{TS: ts, Worker: "T1", Type: "convention", Data: json.RawMessage(`{"rule":"tabs"}`)})
	before, _ := os.ReadFile(p)

	var logs bytes.Buffer
	ds, err := ReadDiscoveries(p, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Type != "test_command" || ds[1].Worker != "T1" {
		t.Fatalf("discoveries = %+v", ds)
	}
	if !strings.Contains(logs.String(), "line=3") {
		t.Errorf("no warning for the malformed line: %s", logs.String())
	}
	after, _ := os.ReadFile(p)
	if !bytes.Equal(before, after) {
		t.Error("reading rewrote the board")
	}
}
