// Command netprobe is what the network tests' malicious programs use to
// reach out: it dials a TCP address, a Unix socket (an abstract one when
// the name starts with @) or fetches a URL through the proxy the
// environment names, sends a UDP datagram (udp ADDR MSG), opens a vsock connection (vsock CID:PORT MSG) or an
// io_uring (uring), requests a dns_resolver key (requestkey NAME), lowers its core size
// limit to 0 (corelimit x), opens a perf event (perf x), holds up to N
// connections for S seconds (hold ADDR N S), or
// opens a CONNECT tunnel through the proxy and sends a plain-HTTP request
// in it with a Host header of its choosing (front ADDR HOST PATH), or
// lists the socket families and types it can make (families x), and prints "ok: <reply>" or "fail: <error>", one
// line, always exiting 0 so a script goes on to its next attempt.
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: netprobe tcp ADDR MSG | unix PATH|@NAME MSG | get URL | udp ADDR MSG | vsock CID:PORT MSG | uring x | compat x | requestkey NAME | corelimit x | perf x | hold ADDR N S | front ADDR HOST PATH | families x")
		os.Exit(2)
	}
	reply, err := probe(os.Args[1], os.Args[2], strings.Join(os.Args[3:], " "))
	if err != nil {
		fmt.Printf("fail: %v\n", err)
		return
	}
	fmt.Printf("ok: %s\n", strings.ReplaceAll(reply, "\n", " "))
}

func probe(kind, target, msg string) (string, error) {
	switch kind {
	case "tcp", "unix":
		if kind == "unix" && strings.HasPrefix(target, "@") {
			target = "\x00" + target[1:]
		}
		c, err := net.DialTimeout(kind, target, 5*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, msg+"\n"); err != nil {
			return "", err
		}
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		b, err := io.ReadAll(io.LimitReader(c, 4096))
		return string(b), err
	case "udp":
		return udp(target, msg)
	case "vsock":
		return vsock(target, msg)
	case "uring":
		return uring()
	case "compat":
		return compat()
	case "requestkey":
		return requestKey(target)
	case "corelimit":
		return coreLimit()
	case "perf":
		return perfEvent()
	case "families":
		return families()
	case "hold":
		var n, secs int
		fmt.Sscan(msg, &n, &secs)
		return hold(target, n, secs)
	case "front":
		host, path, _ := strings.Cut(msg, " ")
		return front(target, host, path)
	case "get":
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
		resp, err := client.Get(target)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Sprintf("%d %s", resp.StatusCode, b), nil
	}
	return "", fmt.Errorf("unknown probe %q", kind)
}

// udp sends msg in one datagram to addr (a DNS server's place) and waits
// a second for the answer.
func udp(addr, msg string) (string, error) {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := io.WriteString(c, msg); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// front opens a CONNECT tunnel to addr through the proxy the environment
// names and sends a GET of path in it whose Host header names host: how
// a client reaches another site of a shared front (domain fronting).
func front(addr, host, path string) (string, error) {
	proxy, err := http.ProxyFromEnvironment(&http.Request{URL: &url.URL{Scheme: "http", Host: addr}})
	if err != nil || proxy == nil {
		return "", fmt.Errorf("no proxy for %s (%v)", addr, err)
	}
	c, err := net.DialTimeout("tcp", proxy.Host, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("CONNECT %d", resp.StatusCode), nil
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return fmt.Sprintf("%d %s", resp.StatusCode, b), nil
}
