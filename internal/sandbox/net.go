package sandbox

import (
	"errors"
	"fmt"
	"strings"
)

// Network is what a contained process may reach over the network.
type Network string

const (
	// NetworkContained gives the process a network namespace of its own
	// with only loopback: no route leaves it, and the host's abstract
	// Unix sockets are out of reach. The Forward ports are its only way
	// out. The zero value means the same: anything but NetworkOpen is
	// contained.
	NetworkContained Network = "contained"
	// NetworkOpen leaves the process on the host's network.
	NetworkOpen Network = "open"
)

// Open reports whether n leaves the host's network to the process.
func (n Network) Open() bool { return n == NetworkOpen }

// ParseNetwork reads a --network flag or `network` input value:
// contained (the default) or open.
func ParseNetwork(s string) (Network, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "contained":
		return NetworkContained, nil
	case "open":
		return NetworkOpen, nil
	}
	return "", fmt.Errorf("network: %q is not one of contained, open", s)
}

// String is the value's name as the flag spells it.
func (n Network) String() string {
	if n.Open() {
		return string(NetworkOpen)
	}
	return string(NetworkContained)
}

// Forward relays each TCP connection made to 127.0.0.1:Port inside a
// contained network to the host's Unix socket Socket. The socket's
// directory is bound read-only into the sandbox so the relay, which
// dials it once the sandbox's root is in place, finds it.
type Forward struct {
	Port   int
	Socket string
}

// ErrNoNetworkNamespace means the machine can contain a process's files
// and processes but cannot give it a network of its own (a kernel or
// container that forbids network namespaces). Callers decide whether to
// run with the host's network (NetworkOpen) or not at all.
var ErrNoNetworkNamespace = errors.New("the agent sandbox cannot contain the network on this machine")
