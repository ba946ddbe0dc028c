package egress

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"
)

// selfSigned is a certificate for allowed.test, made for one test.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"allowed.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// clientHellos counts the plaintext ClientHello records in a client's
// byte stream to a TLS server.
func clientHellos(stream []byte) int {
	n := 0
	for len(stream) >= 5 {
		size := int(stream[3])<<8 | int(stream[4])
		if len(stream) < 5+size {
			break
		}
		if stream[0] == recordHandshake && size > 0 && stream[5] == 1 {
			n++
		}
		stream = stream[5+size:]
	}
	return n
}

// TestProxyTunnelHelloRetry: an agent's TLS client offers a key share the
// server behind an allowed host does not take, so the server answers
// with a HelloRetryRequest and the client sends a second ClientHello,
// which the proxy never read and which could name any site of the
// front. The proxy ends such a tunnel, records it, and the server never
// gets a second ClientHello; a handshake without a retry completes.
func TestProxyTunnelHelloRetry(t *testing.T) {
	t.Parallel()
	cert := selfSigned(t)
	var mu sync.Mutex
	var streams [][]byte
	sock, log := newFrontProxy(t, func(c net.Conn) {
		defer c.Close()
		var got bytes.Buffer
		tc := tls.Server(teeConn{Conn: c, r: io.TeeReader(c, &got)}, &tls.Config{Certificates: []tls.Certificate{cert},
			CurvePreferences: []tls.CurveID{tls.CurveP256}, MinVersion: tls.VersionTLS13})
		if tc.Handshake() == nil {
			io.WriteString(tc, "hello from allowed.test\n")
			io.Copy(io.Discard, tc)
		}
		mu.Lock()
		streams = append(streams, got.Bytes())
		mu.Unlock()
	})
	for _, r := range []struct {
		name   string
		curves []tls.CurveID
		retry  bool
	}{
		{"a key share the server takes", []tls.CurveID{tls.CurveP256}, false},
		{"a key share that draws a HelloRetryRequest", []tls.CurveID{tls.X25519, tls.CurveP256}, true},
	} {
		mu.Lock()
		streams = nil
		mu.Unlock()
		c, _ := openTunnel(t, sock)
		tc := tls.Client(c, &tls.Config{ServerName: "allowed.test", InsecureSkipVerify: true, CurvePreferences: r.curves, MinVersion: tls.VersionTLS13})
		err := tc.Handshake()
		var line []byte
		if err == nil {
			line = make([]byte, 24)
			_, err = io.ReadFull(tc, line)
		}
		c.Close()
		refused := hasRefusal(log.Refusals(), `"(TLS hello retry)":80`)
		switch {
		case r.retry && (err == nil || !refused):
			t.Errorf("%s: handshake %v, answer %q, refusal recorded %v; want the tunnel ended and recorded", r.name, err, line, refused)
		case !r.retry && (err != nil || string(line) != "hello from allowed.test\n" || refused):
			t.Errorf("%s: handshake %v, answer %q, refusal recorded %v", r.name, err, line, refused)
		}
		// The server's side of the tunnel ends once the proxy closes it.
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			done := len(streams) == 1
			mu.Unlock()
			if done || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		if len(streams) != 1 {
			t.Errorf("%s: the server saw %d connections, want 1", r.name, len(streams))
		} else if n := clientHellos(streams[0]); n != 1 {
			t.Errorf("%s: the server got %d ClientHellos, want 1", r.name, n)
		}
		mu.Unlock()
	}
}

// teeConn reads through r.
type teeConn struct {
	net.Conn
	r io.Reader
}

func (c teeConn) Read(p []byte) (int, error) { return c.r.Read(p) }
