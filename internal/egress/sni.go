package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// A CONNECT tunnel's destination is checked, but a TLS client names the
// site it wants again, in its ClientHello's server name (SNI), and a CDN
// or any shared front routes by that name: CONNECT to an allowed host
// behind a CDN (a package registry), then a handshake naming another
// site of the same CDN, reaches that site (domain fronting). A
// ClientHello with Encrypted Client Hello is refused whatever its outer
// name: the CDN routes by the encrypted inner one. So the
// first bytes of every tunnel are read before any is sent on: when they
// open a TLS handshake, its server name must itself be on the step's
// allow-list for the tunnel's port, and a handshake the proxy cannot
// read is not sent on; a server's HelloRetryRequest, which would have the
// client send a second ClientHello unread, ends the tunnel (answerHello).
// What the client sends after the handshake (an
// HTTP Host header inside TLS) stays out of the proxy's sight. First
// bytes that open no handshake are plain HTTP, whose Host is checked
// request by request (httptunnel.go).

// recordHandshake is the first byte of a TLS handshake record.
const recordHandshake = 0x16

// errHelloSeen stops the TLS server once the ClientHello is read.
var errHelloSeen = errors.New("client hello read")

// errEncryptedHello marks a ClientHello whose real server name is
// encrypted. Its outer name is whatever the client chose: a CDN holding
// the key routes by the inner name, so a client naming an allowed host
// outside reached any other site of that CDN inside.
var errEncryptedHello = errors.New("its TLS handshake encrypts the server name (Encrypted Client Hello), so the name the server routes by cannot be checked")

// TLS extensions that carry an encrypted server name: Encrypted Client
// Hello, and the ESNI drafts before it.
const (
	extEncryptedClientHello = 0xfe0d
	extEncryptedServerName  = 0xffce
)

// flight is what a tunnel's first bytes turned out to be.
type flight int

const (
	flightNone  flight = iota // the client sent nothing before it was done
	flightTLS                 // a ClientHello, checked
	flightPlain               // no TLS handshake: plain HTTP, relayed request by request
)

// firstFlight returns the reader the tunnel sends on: the client's first
// bytes checked, then the rest, and what they are. A refusal is recorded.
func (h *handler) firstFlight(client net.Conn, br *bufio.Reader, port int) (io.Reader, flight, error) {
	// However late the first byte comes (the server may speak first), it
	// is checked: a client that waits out a deadline sends nothing
	// unchecked.
	_ = client.SetReadDeadline(time.Now().Add(h.p.IdleTimeout))
	defer client.SetReadDeadline(time.Time{})
	b, err := br.Peek(1)
	switch {
	case errors.Is(err, io.EOF):
		return br, flightNone, nil // the client is done sending; the answer may still flow
	case err != nil:
		return nil, flightNone, err // silent until the tunnel idled, or gone
	case b[0] != recordHandshake:
		return br, flightPlain, nil
	}
	_ = client.SetReadDeadline(time.Now().Add(h.p.HeaderTimeout))
	var seen bytes.Buffer
	name, err := serverName(h.ctx, client, io.TeeReader(br, &seen))
	if errors.Is(err, errEncryptedHello) {
		ref := &refusal{host: "(encrypted client hello)", port: port, why: err.Error()}
		h.p.record(ref)
		return nil, flightNone, ref
	}
	if err != nil {
		h.p.record(&refusal{host: "(unreadable TLS handshake)", port: port, why: err.Error()})
		return nil, flightNone, err
	}
	if name != "" {
		d, err := ParseDest(name)
		if err != nil {
			ref := &refusal{host: name, port: port, why: "its TLS server name is " + err.Error()}
			h.p.record(ref)
			return nil, flightNone, ref
		}
		if !Allowed(h.p.Rules, d, port).OK {
			shown := d.Name
			if d.Addr.IsValid() {
				shown = d.Addr.String()
			}
			ref := &refusal{host: shown, port: port, why: "a TLS handshake in a tunnel named it, and it is not on this step's allow-list"}
			h.p.record(ref)
			return nil, flightNone, ref
		}
	}
	return io.MultiReader(&seen, br), flightTLS, nil
}

// serverName reads a ClientHello from r and returns the server name it
// asks for ("" when it names none); errEncryptedHello when it encrypts
// the name.
func serverName(ctx context.Context, client net.Conn, r io.Reader) (string, error) {
	var name string
	var seen, encrypted bool
	srv := tls.Server(helloConn{Conn: client, r: r}, &tls.Config{
		GetConfigForClient: func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
			name, seen = hi.ServerName, true
			for _, e := range hi.Extensions {
				encrypted = encrypted || e == extEncryptedClientHello || e == extEncryptedServerName
			}
			return nil, errHelloSeen
		},
	})
	err := srv.HandshakeContext(ctx)
	switch {
	case !seen:
		return "", fmt.Errorf("reading the TLS ClientHello: %w", err)
	case encrypted:
		return "", errEncryptedHello
	}
	return name, nil
}

// helloRetryRandom is the random of a TLS 1.3 HelloRetryRequest (RFC
// 8446, 4.1.3): the server's answer asking the client for a second
// ClientHello.
var helloRetryRandom = sha256.Sum256([]byte("HelloRetryRequest"))

// serverHelloHead is how much of a server's first flight holds its
// ServerHello's random: the record header (5), the handshake header (4)
// and the version (2) before it.
const serverHelloHead = 5 + 4 + 2 + len(helloRetryRandom)

// errHelloRetry marks a server's HelloRetryRequest in a tunnel.
var errHelloRetry = errors.New("the server asked for a second TLS ClientHello (HelloRetryRequest), which would pass unread and may name another host")

// answerHello passes a TLS tunnel's answer from up to the client, its
// first bytes read whole first: a HelloRetryRequest would have the
// client send a second ClientHello, which the proxy does not read and a
// front may route by, so it ends the tunnel, recorded, instead.
func (h *handler) answerHello(client, up net.Conn, idle time.Duration, last *atomic.Int64, port int) {
	_ = up.SetReadDeadline(time.Now().Add(idle))
	head := make([]byte, serverHelloHead)
	n, _ := io.ReadFull(up, head)
	if n == len(head) && head[0] == recordHandshake && head[5] == handshakeServerHello && bytes.Equal(head[11:], helloRetryRandom[:]) {
		h.p.record(&refusal{host: "(TLS hello retry)", port: port, why: errHelloRetry.Error()})
		client.Close()
		up.Close()
		return
	}
	if n > 0 {
		last.Store(time.Now().UnixNano())
		_ = client.SetWriteDeadline(time.Now().Add(idle))
		if _, err := client.Write(head[:n]); err != nil {
			client.Close()
			up.Close()
			return
		}
	}
	pipe(client, up, up, idle, last, nil)
}

// handshakeServerHello is a ServerHello's (and a HelloRetryRequest's)
// handshake message type.
const handshakeServerHello = 2

// helloConn lets a TLS server read a client's handshake through r and
// sends nothing back (no alert reaches the client).
type helloConn struct {
	net.Conn
	r io.Reader
}

func (c helloConn) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c helloConn) Write(b []byte) (int, error) { return len(b), nil }
func (c helloConn) Close() error                { return nil }
