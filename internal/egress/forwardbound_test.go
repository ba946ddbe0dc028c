package egress

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestProxyForwardAnswerHeaderBounded: a plain request forwarded (not
// tunnelled) to an allowed host whose server answers with a header of
// several MiB, alone or after interim 1xx answers. A tunnel's relay
// reads at most 1 MiB of an answer's header; the forwarding transport
// took Go's default of 10 MiB, which the step's 64 connections made
// 640 MiB of planex's memory held by one agent's chosen server. The
// header is refused past the tunnel's bound, with the proxy's 502.
func TestProxyForwardAnswerHeaderBounded(t *testing.T) {
	t.Parallel()
	const pad = 3 << 20 // beyond the tunnel's bound, within Go's default
	for _, first := range []string{"", "HTTP/1.1 103 Early Hints\r\nX-Pad: " + strings.Repeat("a", pad/2) + "\r\n\r\n"} {
		sock, _ := newFrontProxy(t, func(c net.Conn) {
			defer c.Close()
			if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
				return
			}
			size := pad
			if first != "" {
				size = pad / 2
			}
			io.WriteString(c, first+"HTTP/1.1 200 OK\r\nX-Pad: "+strings.Repeat("a", size)+"\r\nContent-Length: 2\r\n\r\nok")
		})
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		io.WriteString(c, "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReaderSize(c, 64<<10), nil)
		if err != nil {
			t.Fatalf("interim %v: reading the proxy's answer: %v", first != "", err)
		}
		resp.Body.Close()
		c.Close()
		if resp.StatusCode != http.StatusBadGateway || len(resp.Header.Get("X-Pad")) > 0 {
			t.Errorf("interim %v: the client got %d with a %d-byte header from the server, want the proxy's 502",
				first != "", resp.StatusCode, len(resp.Header.Get("X-Pad")))
		}
	}
}
