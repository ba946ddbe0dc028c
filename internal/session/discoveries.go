package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/planexhq/planex/internal/safefile"
)

// DiscoveryTypes are the kinds of note the board accepts.
func DiscoveryTypes() []string {
	return []string{"code_pattern", "integration_point", "convention", "blocker", "tech_stack", "test_command"}
}

// Discovery is one line of discoveries.ndjson.
type Discovery struct {
	TS     string          `json:"ts"`
	Worker string          `json:"worker"`
	Type   string          `json:"type"`
	Data   json.RawMessage `json:"data"`
}

// Validate checks a discovery before it is appended.
func (d Discovery) Validate() error {
	ok := false
	for _, t := range DiscoveryTypes() {
		if d.Type == t {
			ok = true
		}
	}
	if !ok {
		return fmt.Errorf("discovery type %q is not one of %v", d.Type, DiscoveryTypes())
	}
	if d.Worker == "" {
		return fmt.Errorf("discovery has no worker")
	}
	if _, err := time.Parse(time.RFC3339, d.TS); err != nil {
		return fmt.Errorf("discovery ts %q is not RFC 3339", d.TS)
	}
	var obj map[string]any
	if err := json.Unmarshal(d.Data, &obj); err != nil {
		return fmt.Errorf("discovery data must be a JSON object: %v", err)
	}
	if obj == nil {
		return fmt.Errorf("discovery data must be a JSON object, not null")
	}
	return nil
}

// AppendDiscovery adds one line to a board file. O_APPEND writes of one
// short line do not interleave, so concurrent workers may share the file.
// The board is in a folder the agent can write: a link planted in its
// place is refused, not written through, and so is a FIFO or device.
func AppendDiscovery(path string, d Discovery) error {
	if err := d.Validate(); err != nil {
		return err
	}
	line, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encoding discovery: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	f, err := safefile.OpenAppend(path, 0o644)
	if err != nil {
		return fmt.Errorf("opening discovery board: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("appending discovery: %w", err)
	}
	return nil
}

// MaxDiscoveries bounds the discoveries read from a board: far more than
// a run's agents record, and what its prompts and report can show. A
// state ref (whoever can push) may hold a board of 64 MiB of tiny lines,
// which read whole held 340 MiB of discoveries and went whole into the
// run's report.
const MaxDiscoveries = 1000

// ReadDiscoveries reads a board, skipping malformed lines with a warning
// (never rewriting them) and dropping exact duplicates of type and data.
// Past MaxDiscoveries the rest of the board is left out, with a warning.
func ReadDiscoveries(path string, log *slog.Logger) ([]Discovery, error) {
	b, err := readStateFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading discovery board: %w", err)
	}
	seen := map[string]bool{}
	var out []Discovery
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var d Discovery
		if err := json.Unmarshal(line, &d); err != nil {
			log.Warn("skipping malformed discovery", "file", path, "line", n, "err", err)
			continue
		}
		if err := d.Validate(); err != nil {
			log.Warn("skipping invalid discovery", "file", path, "line", n, "err", err)
			continue
		}
		var canon bytes.Buffer
		json.Compact(&canon, d.Data)
		key := d.Type + "\x00" + canon.String()
		if seen[key] {
			continue
		}
		if len(out) == MaxDiscoveries {
			log.Warn("the discovery board holds more discoveries than planex reads; the rest are left out", "file", path, "line", n, "max", MaxDiscoveries)
			break
		}
		seen[key] = true
		out = append(out, d)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("reading discovery board: %w", err)
	}
	return out, nil
}

// ByType groups discoveries, types in a stable order.
func ByType(ds []Discovery) (types []string, groups map[string][]Discovery) {
	groups = map[string][]Discovery{}
	for _, d := range ds {
		if _, ok := groups[d.Type]; !ok {
			types = append(types, d.Type)
		}
		groups[d.Type] = append(groups[d.Type], d)
	}
	sort.Strings(types)
	return types, groups
}
