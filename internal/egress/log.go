package egress

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Refusal is one destination the proxy refused, and how many times.
type Refusal struct {
	Host  string `json:"host"`
	Port  int    `json:"port"`
	Count int    `json:"count"`
}

// String is "host:port" with the count when above one.
func (r Refusal) String() string {
	s := r.Host
	if r.Port != 0 {
		s += ":" + strconv.Itoa(r.Port)
	}
	if r.Count > 1 {
		s += fmt.Sprintf(" (%d times)", r.Count)
	}
	return s
}

// Format lists refusals for a report: "host:port (N times), …", cut
// to 500 bytes.
func Format(rs []Refusal) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, r.String())
	}
	s := strings.Join(parts, ", ")
	if len(s) > 500 {
		cut := strings.LastIndex(s[:500], ", ")
		if cut < 0 {
			cut = 0
		}
		s = s[:cut] + ", …"
	}
	return s
}

// maxDistinct bounds the destinations a Log keeps by name; refusals of
// more are counted together.
const maxDistinct = 64

// Log records a step's refusals; safe for concurrent use. The zero value
// is ready.
type Log struct {
	mu     sync.Mutex
	counts map[Refusal]int
	others int
}

// Add records one refusal of host:port and reports whether it is the
// first of that destination (or the first beyond the kept ones), so a
// caller logs each destination once however often an agent retries. The
// host is kept as the request spelled it, cut to 255 bytes.
func (l *Log) Add(host string, port int) (first bool) {
	if len(host) > 255 {
		host = host[:255]
	}
	if strings.Trim(strings.ToLower(host), "abcdefghijklmnopqrstuvwxyz0123456789.-_:[]") != "" {
		host = strconv.QuoteToASCII(host) // a malformed host, shown as the agent sent it, escaped
	}
	k := Refusal{Host: host, Port: port}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.counts == nil {
		l.counts = map[Refusal]int{}
	}
	if _, ok := l.counts[k]; !ok && len(l.counts) >= maxDistinct {
		l.others++
		return l.others == 1
	}
	l.counts[k]++
	return l.counts[k] == 1
}

// Refusals lists the refused destinations, most refused first; refusals
// of destinations beyond the kept ones come last as host "(others)".
func (l *Log) Refusals() []Refusal {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Refusal, 0, len(l.counts)+1)
	for k, n := range l.counts {
		k.Count = n
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Refusal) int {
		return cmp.Or(b.Count-a.Count, cmp.Compare(a.Host, b.Host), a.Port-b.Port)
	})
	if l.others > 0 {
		out = append(out, Refusal{Host: "(others)", Count: l.others})
	}
	return out
}
