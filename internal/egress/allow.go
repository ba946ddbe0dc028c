// Package egress is the only way out of a contained step's network: an
// HTTP proxy planex runs outside the sandbox (CONNECT for TLS, plain HTTP
// forwarding) that lets through only the destinations on the step's
// allow-list and records every refusal, so a maintainer sees where an
// agent tried to go.
package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Rule is one allow-list entry: a host name, a wildcard (*.example.com:
// every name below example.com, not example.com itself) or an IP address,
// with a port or, without one, the web ports 80 and 443.
type Rule struct {
	// Host is the name in lower case without a trailing dot, the
	// wildcard's suffix with its leading dot (".example.com"), or empty
	// for an address rule.
	Host     string
	Wildcard bool
	// Addr is the address of an IP rule.
	Addr netip.Addr
	// Port is 0 for the web ports.
	Port int
}

// String spells the rule as --allow-host takes it.
func (r Rule) String() string {
	h := r.Host
	switch {
	case r.Addr.IsValid():
		h = r.Addr.String()
		if r.Addr.Is6() {
			h = "[" + h + "]"
		}
	case r.Wildcard:
		h = "*" + r.Host
	}
	if r.Port != 0 {
		h += ":" + strconv.Itoa(r.Port)
	}
	return h
}

// ErrBadHost marks a host (in a rule or a request) that is not a plain
// DNS name or IP address.
var ErrBadHost = errors.New("not a host name or IP address")

// ParseRule reads HOST[:PORT], *.DOMAIN[:PORT], an IPv4 address or a
// bracketed IPv6 one, each with an optional port.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	host, port := s, 0
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Rule{}, fmt.Errorf("allowed host %q: port %q is not a number from 1 to 65535", s, p)
		}
		host, port = h, n
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	}
	r := Rule{Port: port}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		name, err := normalName(strings.TrimSuffix(rest, "."))
		if err != nil || !strings.Contains(name, ".") {
			return Rule{}, fmt.Errorf("allowed host %q: a wildcard needs a domain of two labels or more (*.example.com)", s)
		}
		r.Host, r.Wildcard = "."+name, true
		return r, nil
	}
	d, err := ParseDest(host)
	if err != nil {
		return Rule{}, fmt.Errorf("allowed host %q: %w", s, err)
	}
	r.Host, r.Addr = d.Name, d.Addr
	return r, nil
}

// ParseRules reads a list of rules separated by commas, newlines or
// spaces (the allow-hosts input), skipping empty entries.
func ParseRules(list ...string) ([]Rule, error) {
	var rules []Rule
	for _, l := range list {
		for _, f := range strings.FieldsFunc(l, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' || r == ' ' || r == '\t' }) {
			r, err := ParseRule(f)
			if err != nil {
				return nil, err
			}
			rules = append(rules, r)
		}
	}
	return rules, nil
}

// Dest is a destination host as a request names it: a normalised DNS
// name or an IP address, never both.
type Dest struct {
	Name string
	Addr netip.Addr
}

// ParseDest normalises a request's host: lower case, one trailing dot
// dropped (a second one is an empty label, refused), IPv4-mapped IPv6 addresses as IPv4. What only a lenient parser
// takes for an address (2130706433, 0x7f.1, 127.1, 0177.0.0.1) is refused
// rather than sent to DNS, where another resolver might read it as one.
func ParseDest(host string) (Dest, error) {
	h := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(host, "]"), "["), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return Dest{}, fmt.Errorf("%q: %w (zoned address)", host, ErrBadHost)
		}
		return Dest{Addr: a.Unmap()}, nil
	}
	name, err := normalName(h)
	if err != nil {
		return Dest{}, fmt.Errorf("%q: %w", host, err)
	}
	return Dest{Name: name}, nil
}

// errNotASCII marks a name with a byte outside ASCII. Unicode's case
// mapping takes two such letters to ASCII ones (the Kelvin sign K to k,
// a dotted capital I to i), so lower-casing them matched an allowed
// name, while the Host a relayed request carried on still held the
// bytes a front reads its own way.
var errNotASCII = errors.New("not ASCII (write an international name in its xn-- form)")

// normalName checks a DNS name's syntax (given without its trailing dot)
// and lower-cases it; a name whose last label is a number or hex is an
// address in disguise.
func normalName(h string) (string, error) {
	if h == "" || len(h) > 253 {
		return "", ErrBadHost
	}
	for i := 0; i < len(h); i++ {
		if h[i] >= utf8.RuneSelf {
			return "", fmt.Errorf("%w: %w", ErrBadHost, errNotASCII)
		}
	}
	h = strings.ToLower(h)
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", ErrBadHost
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", ErrBadHost
			}
		}
	}
	if numeric(labels[len(labels)-1]) {
		return "", fmt.Errorf("%w (a numeric form of an address)", ErrBadHost)
	}
	return h, nil
}

// numeric says whether a label reads as a number in decimal, octal or hex.
func numeric(l string) bool {
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		_, err := strconv.ParseUint("0"+rest, 16, 64)
		return err == nil
	}
	_, err := strconv.ParseUint(l, 10, 64)
	return err == nil
}

// Match says which rule let a destination through.
type Match struct {
	Rule Rule
	OK   bool
}

// Allowed finds the rule that lets d:port through.
func Allowed(rules []Rule, d Dest, port int) Match {
	for _, r := range rules {
		if r.Port == 0 && port != 80 && port != 443 || r.Port != 0 && r.Port != port {
			continue
		}
		switch {
		case r.Addr.IsValid():
			if d.Addr == r.Addr {
				return Match{r, true}
			}
		case r.Wildcard:
			if d.Name != "" && strings.HasSuffix(d.Name, r.Host) {
				return Match{r, true}
			}
		case d.Name != "" && d.Name == r.Host:
			return Match{r, true}
		}
	}
	return Match{}
}

// isMetadata reports the addresses outside link-local where clouds
// answer a machine about itself, its credentials included: Azure's
// WireServer (GitHub's hosted runners are Azure machines), Alibaba
// Cloud's metadata service, and AWS's over IPv6.
func isMetadata(a netip.Addr) bool {
	switch a {
	case netip.AddrFrom4([4]byte{168, 63, 129, 16}), netip.AddrFrom4([4]byte{100, 100, 100, 200}),
		netip.AddrFrom16([16]byte{0xfd, 0x00, 0x0e, 0xc2, 14: 0x02, 15: 0x54}):
		return true
	}
	return false
}

// embeddedIPv4 is the IPv4 address an IPv6 one carries in its last 32
// bits where a translator on the path, or the kernel, may deliver it
// there: NAT64's well-known and local-use prefixes (64:ff9b::/96,
// 64:ff9b:1::/48) and the old IPv4-compatible form (::a.b.c.d). A name
// that resolves to 64:ff9b::a9fe:a9fe asks a NAT64 gateway for the
// metadata service.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() || a.Is4In6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	for _, p := range []string{"64:ff9b::/96", "64:ff9b:1::/48", "::/96"} {
		if netip.MustParsePrefix(p).Contains(a) {
			if p == "::/96" && (a.IsUnspecified() || a.IsLoopback()) {
				return netip.Addr{}, false // ::, ::1: themselves
			}
			return v4, true
		}
	}
	return netip.Addr{}, false
}

// forbidden says why a name's address may not be connected to: the
// machine itself (loopback, its own addresses), link-local (the cloud
// metadata service at 169.254.169.254), unspecified and multicast, and
// for a wildcard's names also private networks; and the cloud services
// that answer a machine at addresses of their own (metadataAddrs). An
// address rule lets any address through; a name never reaches one of
// these.
func forbidden(a netip.Addr, wildcard bool, own []netip.Addr) string {
	a = a.Unmap()
	if v4, ok := embeddedIPv4(a); ok {
		if why := forbidden(v4, wildcard, own); why != "" {
			return why + " (embedded in " + a.String() + ")"
		}
	}
	switch {
	case isMetadata(a):
		return "a cloud metadata service"
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() ||
		netip.MustParsePrefix("0.0.0.0/8").Contains(a):
		return "not a host address"
	case wildcard && (a.IsPrivate() || netip.MustParsePrefix("100.64.0.0/10").Contains(a)):
		return "private"
	}
	for _, o := range own {
		if o == a {
			return "this machine's own"
		}
	}
	return ""
}
