package egress

import (
	"net/netip"
	"testing"
)

func TestParseRule(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		"proxy.golang.org":       "proxy.golang.org",
		"Proxy.Golang.ORG.":      "proxy.golang.org",
		"registry.npmjs.org:443": "registry.npmjs.org:443",
		"*.example.com":          "*.example.com",
		"*.Example.com:8443":     "*.example.com:8443",
		"*.example.com.":         "*.example.com",
		"xn--bcher-kva.example":  "xn--bcher-kva.example",
		"127.0.0.1:8080":         "127.0.0.1:8080",
		"[::1]:8080":             "[::1]:8080",
		"[2001:db8::1]":          "[2001:db8::1]",
		"10.1.2.3":               "10.1.2.3",
	}
	for in, want := range good {
		r, err := ParseRule(in)
		if err != nil || r.String() != want {
			t.Errorf("ParseRule(%q) = %v, %v; want %s", in, r, err, want)
		}
	}
	for _, bad := range []string{"", "*", "*.com", "a..b", "host:0", "host:70000", "host:http", "2130706433", "0x7f000001", "127.1",
		"ex ample.com", "evil.com/path", "user@host", "*.*.example.com", "-bad.com", "fe80::1%eth0",
		"\u212aey.example.com", "b\u00fccher.example", "*.example.com..", "example.com.."} {
		if r, err := ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) = %v, want an error", bad, r)
		}
	}
	rules, err := ParseRules("a.com, b.com:8080\n*.c.com\r\n\n", "d.com")
	if err != nil || len(rules) != 4 || rules[1].Port != 8080 || !rules[2].Wildcard {
		t.Errorf("ParseRules = %v, %v", rules, err)
	}
}

// TestAllowed: the matcher against the forms an attacker spells a
// destination in.
func TestAllowed(t *testing.T) {
	t.Parallel()
	rules, err := ParseRules("api.example.com, *.pkg.example.org, 127.0.0.1:8080, [::1]:9000, exact.example.net:8443")
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		host string
		port int
		ok   bool
	}{
		{"api.example.com", 443, true},
		{"API.EXAMPLE.COM.", 443, true},
		{"api.example.com", 80, true},
		{"api.example.com", 22, false},           // an allowed name, another port
		{"api.example.com.evil.com", 443, false}, // suffix tricks
		{"evilapi.example.com", 443, false},
		{"example.com", 443, false},
		{"x.pkg.example.org", 443, true},
		{"a.b.pkg.example.org", 443, true},
		{"pkg.example.org", 443, false}, // a wildcard is not its own apex
		{"xpkg.example.org", 443, false},
		{"127.0.0.1", 8080, true},
		{"127.0.0.1", 8081, false},
		{"::ffff:127.0.0.1", 8080, true}, // the same address, IPv4-mapped
		{"[::1]", 9000, true},
		{"localhost", 8080, false},  // a name for the address is not the address
		{"2130706433", 8080, false}, // 127.0.0.1 in decimal
		{"0x7f000001", 8080, false},
		{"0x7f.0.0.1", 8080, false},
		{"127.1", 8080, false},
		{"0177.0.0.1", 8080, false},
		{"exact.example.net", 8443, true},
		{"exact.example.net", 443, false},
		{"api.example.com%00.evil.com", 443, false},
		// Unicode's case mapping takes a dotted capital I to i and the
		// Kelvin sign to k: lower-cased, these matched the allowed name.
		{"ap\u0130.example.com", 443, false},
		{"AP\u0130.EXAMPLE.COM", 443, false},
		{"x.p\u212ag.example.org", 443, false},
		{"api.example.com..", 443, false}, // one trailing dot is the name; two are not
	}
	for _, r := range rows {
		d, err := ParseDest(r.host)
		got := err == nil && Allowed(rules, d, r.port).OK
		if got != r.ok {
			t.Errorf("%s:%d allowed = %v (parse error %v), want %v", r.host, r.port, got, err, r.ok)
		}
	}
}

func TestForbidden(t *testing.T) {
	t.Parallel()
	own := []netip.Addr{netip.MustParseAddr("192.0.2.2")}
	rows := map[string][2]bool{ // address → {forbidden for an exact name, for a wildcard's}
		"127.0.0.1":        {true, true},
		"127.8.9.10":       {true, true},
		"::1":              {true, true},
		"::ffff:127.0.0.1": {true, true},
		"169.254.169.254":  {true, true}, // cloud metadata
		"fe80::1":          {true, true},
		"0.0.0.0":          {true, true},
		"224.0.0.1":        {true, true},
		"192.0.2.2":        {true, true}, // this machine
		"10.0.0.5":         {false, true},
		"192.168.1.1":      {false, true},
		"100.100.100.200":  {true, true}, // Alibaba Cloud's metadata
		"fd00:ec2::254":    {true, true}, // AWS's metadata over IPv6
		"168.63.129.16":    {true, true}, // Azure's WireServer (GitHub's hosted runners)
		"100.100.100.201":  {false, true},
		"fd00:ec2::255":    {false, true},
		"203.0.113.10":     {false, false},
		// IPv4 carried in IPv6, which a NAT64 gateway (or the kernel,
		// for the IPv4-compatible form) delivers to the IPv4 address.
		"64:ff9b::7f00:1":      {true, true},  // loopback
		"64:ff9b::a9fe:a9fe":   {true, true},  // the metadata service
		"64:ff9b:1::a83f:8110": {true, true},  // Azure's WireServer, local-use prefix
		"64:ff9b::c000:202":    {true, true},  // this machine
		"64:ff9b::a00:5":       {false, true}, // private: a wildcard's only
		"::127.0.0.1":          {true, true},
		"::169.254.169.254":    {true, true},
		"64:ff9b::cb00:710a":   {false, false}, // 203.0.113.10, public
		"2001:db8::a9fe:a9fe":  {false, false}, // no translation prefix
		"0.1.2.3":              {true, true},   // 0.0.0.0/8 is "this network"
	}
	for a, want := range rows {
		addr := netip.MustParseAddr(a)
		if got := forbidden(addr, false, own) != ""; got != want[0] {
			t.Errorf("%s forbidden for a name = %v, want %v", a, got, want[0])
		}
		if got := forbidden(addr, true, own) != ""; got != want[1] {
			t.Errorf("%s forbidden for a wildcard = %v, want %v", a, got, want[1])
		}
	}
}

func TestLogBounded(t *testing.T) {
	t.Parallel()
	var l Log
	for i := 0; i < 3; i++ {
		l.Add("evil.com", 443)
	}
	for i := 0; i < 1000; i++ {
		l.Add("x"+string(rune('a'+i%26))+string(rune('a'+i/26%26)), i)
	}
	got := l.Refusals()
	if len(got) != maxDistinct+1 || got[0] != (Refusal{"evil.com", 443, 3}) || got[len(got)-1].Host != "(others)" {
		t.Fatalf("refusals: %d entries, first %v, last %v", len(got), got[0], got[len(got)-1])
	}
	total := 0
	for _, r := range got {
		total += r.Count
	}
	if total != 1003 {
		t.Errorf("counted %d refusals, want 1003", total)
	}
}
