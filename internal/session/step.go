package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/planexhq/planex/internal/safefile"
)

// Limits on what one step may add to the discovery board.
const (
	// MaxStepDiscoveries is the number of lines taken from one step.
	MaxStepDiscoveries = 100
	// MaxDiscoveryLine is the longest line taken, in bytes.
	MaxDiscoveryLine = 8 << 10
	// MaxDiscoveryData is the largest data object taken, in bytes.
	MaxDiscoveryData = 4000
	// maxStepDiscoveryBytes is how much of a step's file is read.
	maxStepDiscoveryBytes = MaxStepDiscoveries * MaxDiscoveryLine
)

// MergeDiscoveries appends the valid lines of a step's discoveries file to
// board and returns how many it added. Every line is checked: a JSON
// object of a known type with a data object, within the size limits; bad
// lines are skipped and logged. The worker is always the step's own
// (a step cannot speak for another), and a missing ts is stamped with now.
// The lines are appended in one write, so steps finishing at the same
// time never lose or interleave lines.
func MergeDiscoveries(board, from, worker string, now time.Time, log *slog.Logger) (int, error) {
	// The step may have replaced its file: never through a link, never
	// waiting on a FIFO or reading a device.
	f, err := os.OpenFile(from, os.O_RDONLY|safefile.NoFollow|syscall.O_NONBLOCK, 0)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the step's discoveries: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return 0, fmt.Errorf("reading the step's discoveries: %s is not a regular file", filepath.Base(from))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStepDiscoveryBytes+1))
	if err != nil {
		return 0, fmt.Errorf("reading the step's discoveries: %w", err)
	}
	if len(data) > maxStepDiscoveryBytes {
		log.Warn("step wrote too many discoveries; reading only the start", "worker", worker, "limit_bytes", maxStepDiscoveryBytes)
		data = data[:maxStepDiscoveryBytes]
	}
	var out bytes.Buffer
	added := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxStepDiscoveryBytes+1)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if added == MaxStepDiscoveries {
			log.Warn("step wrote more discoveries than are kept", "worker", worker, "limit", MaxStepDiscoveries)
			break
		}
		d, err := parseStepDiscovery(line, worker, now)
		if err != nil {
			log.Warn("skipping a discovery", "worker", worker, "line", n, "err", err)
			continue
		}
		b, err := json.Marshal(d)
		if err != nil {
			log.Warn("skipping a discovery", "worker", worker, "line", n, "err", err)
			continue
		}
		out.Write(b)
		out.WriteByte('\n')
		added++
	}
	if added == 0 {
		return 0, nil
	}
	if err := os.MkdirAll(filepath.Dir(board), 0o755); err != nil {
		return 0, fmt.Errorf("creating %s: %w", filepath.Dir(board), err)
	}
	// Never through a link in the board's place, nor into a FIFO.
	bf, err := safefile.OpenAppend(board, 0o644)
	if err != nil {
		return 0, fmt.Errorf("opening discovery board: %w", err)
	}
	// One write of whole lines: O_APPEND places it after every other.
	if _, err := bf.Write(out.Bytes()); err != nil {
		bf.Close()
		return 0, fmt.Errorf("appending discoveries: %w", err)
	}
	if err := bf.Close(); err != nil {
		return 0, fmt.Errorf("appending discoveries: %w", err)
	}
	return added, nil
}

// parseStepDiscovery checks one line a step wrote.
func parseStepDiscovery(line []byte, worker string, now time.Time) (Discovery, error) {
	if len(line) > MaxDiscoveryLine {
		return Discovery{}, fmt.Errorf("line is %d bytes; the limit is %d", len(line), MaxDiscoveryLine)
	}
	var d Discovery
	if err := json.Unmarshal(line, &d); err != nil {
		return Discovery{}, fmt.Errorf("not a JSON object: %v", err)
	}
	if len(d.Data) > MaxDiscoveryData {
		return Discovery{}, fmt.Errorf("data is %d bytes; the limit is %d", len(d.Data), MaxDiscoveryData)
	}
	d.Worker = worker
	if d.TS == "" {
		d.TS = now.UTC().Format(time.RFC3339)
	}
	if err := d.Validate(); err != nil {
		return Discovery{}, err
	}
	var canon bytes.Buffer
	if err := json.Compact(&canon, d.Data); err != nil {
		return Discovery{}, fmt.Errorf("discovery data: %v", err)
	}
	d.Data = canon.Bytes()
	return d, nil
}
