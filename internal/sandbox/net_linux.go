//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// netProbe holds ProbeNetwork's answer, which Probe finds.
type netProbe struct {
	probed error
}

// netConfig is the network part of the init's configuration.
type netConfig struct {
	Contained bool      `json:"contained"`
	Forward   []Forward `json:"forward,omitempty"`
	// Bound are the Unix sockets bound in planex's network namespace
	// (boundSockets), covered in the step's.
	Bound []string `json:"bound,omitempty"`
}

// setNetwork adds the network part of p to the init's configuration and
// the clone flags: a network namespace of its own unless p opens the
// network, and each forwarded socket's directory visible read-only.
// It returns the clone flags to add.
func setNetwork(c *config, p Policy) (uintptr, error) {
	if p.Network.Open() {
		if len(p.Forward) > 0 {
			return 0, errors.New("sandbox: forwarded ports need a contained network")
		}
		return 0, nil
	}
	c.Net.Contained = true
	c.Net.Bound = boundSockets(procNetUnix)
	seen := map[int]bool{}
	for _, f := range p.Forward {
		if f.Port < 1 || f.Port > 65535 || seen[f.Port] {
			return 0, fmt.Errorf("sandbox: forwarded port %d is not a free port number", f.Port)
		}
		seen[f.Port] = true
		sock, err := canonical(f.Socket)
		if err != nil {
			return 0, fmt.Errorf("sandbox: forwarded socket: %w", err)
		}
		c.Net.Forward = append(c.Net.Forward, Forward{Port: f.Port, Socket: sock})
		c.ReadOnly = append(c.ReadOnly, filepath.Dir(sock))
	}
	return syscall.CLONE_NEWNET, nil
}

// startNetwork runs in the init, inside the new network namespace: it
// brings loopback up and starts relaying the forwarded ports, before the
// program starts, so the program finds them listening.
func startNetwork(n netConfig) error {
	if !n.Contained {
		return nil
	}
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("bringing loopback up: %w", err)
	}
	for _, f := range n.Forward {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(f.Port)))
		if err != nil {
			return fmt.Errorf("listening on forwarded port %d: %w", f.Port, err)
		}
		go relayAll(ln, f.Socket)
	}
	return nil
}

// loopbackUp sets the IFF_UP flag of lo, as `ip link set lo up` would.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// maxRelays bounds the connections one forwarded port relays at once.
// Each costs the init (outside every limit the program has) two
// descriptors, a goroutine and buffers; planex's proxy serves 64 at once,
// so a program that opened thousands only piled them up here, until the
// init ran out of descriptors and relayed nothing more.
const maxRelays = 256

// relayAll relays every connection ln accepts to the Unix socket sock
// until the init ends; one beyond maxRelays at once is closed at once.
func relayAll(ln net.Listener, sock string) {
	slots := make(chan struct{}, maxRelays)
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		select {
		case slots <- struct{}{}:
			go func() {
				defer func() { <-slots }()
				relay(c, sock)
			}()
		default:
			c.Close()
		}
	}
}

// relay copies both ways between c and a new connection to sock, each
// direction closing its write side when the other ends.
func relay(c net.Conn, sock string) {
	defer c.Close()
	u, err := net.DialTimeout("unix", sock, 10*time.Second)
	if err != nil {
		return
	}
	defer u.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(u, c)
	go pipe(c, u)
	<-done
	<-done
}

// ProbeNetwork reports whether contained processes can get a network of
// their own: nil, or an error wrapping ErrNoNetworkNamespace (the rest of
// the sandbox works) or the sandbox's own failure. Probe finds it out.
func (s *Sandbox) ProbeNetwork(ctx context.Context) error {
	if s == nil {
		return ErrUnavailable
	}
	if err := s.Probe(ctx); err != nil {
		return err
	}
	return s.net.probed
}
