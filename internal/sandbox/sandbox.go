// Package sandbox contains the processes planex starts for a step: an
// agent, the CLIs it drives, a command a model asked for, a task's
// execution directives. The process is untrusted: it may be an agent that
// misbehaves or one steered by a prompt injection.
//
// On Linux a contained process runs in its own user, PID, mount and IPC
// namespaces: it sees only its own processes (a fresh /proc), the whole
// file system read-only except the directories its step may write, an
// empty /tmp, an empty directory where the real home was, and a /dev of
// a few harmless devices. It has only loopback of a network of its own
// unless its policy opens the network (Policy.Network), and then sees an
// empty /run too (runFolders), where host services bind their sockets.
// It runs as an ordinary user (never as host root: see ids_linux.go),
// with no descriptor but its standard streams and under resource limits
// (limits.go). When the step's first process ends, every process it left
// behind is killed with it.
package sandbox

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Mode is the user's choice: contain when possible, always, or never.
type Mode string

const (
	// ModeAuto contains processes when the machine allows it.
	ModeAuto Mode = "auto"
	// ModeOn refuses to run a step that cannot be contained.
	ModeOn Mode = "on"
	// ModeOff runs steps as plain child processes.
	ModeOff Mode = "off"
)

// ParseMode reads a --sandbox flag or `sandbox` input value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return ModeAuto, nil
	case ModeAuto, ModeOn, ModeOff:
		return m, nil
	}
	return "", fmt.Errorf("sandbox: %q is not one of auto, on, off", s)
}

// ErrUnavailable means this machine cannot create the namespaces a
// sandbox needs (another OS, a kernel or policy that forbids
// unprivileged user namespaces, a container without the rights).
var ErrUnavailable = errors.New("the agent sandbox is not available on this machine")

// Policy says what one contained process may touch besides reading the
// file system.
type Policy struct {
	// Writable directories are bound read-write at their own paths (the
	// task's worktree, the step's private folder).
	Writable []string
	// ReadOnly directories stay visible, read-only, even where a fresh
	// /tmp or a hidden directory would cover them (a repository in /tmp).
	ReadOnly []string
	// Hide lists directories replaced by an empty tmpfs (the real home,
	// which holds credentials of every kind).
	Hide []string
	// Mask lists files replaced by an empty one (sockets that lead out of
	// the sandbox, such as the Docker daemon's or an ssh agent's).
	Mask []string
	// Overlay lists files shown, read-only, in place of others: a file
	// planex wrote over one the process may read only in part (the
	// repository's git config without its credentials).
	Overlay []Overlay
	// Limits bound what the step may use (limits.go); zero fields take
	// the defaults.
	Limits Limits
	// Network is what the process may reach; the zero value contains it
	// (see net.go).
	Network Network
	// Forward lists the ports inside a contained network that lead to
	// sockets of planex outside (its egress proxy, its model gateway).
	Forward []Forward
}

// Overlay shows the file Source at Path, read-only. A Path that does not
// exist, or is not a regular file, is left as it is.
type Overlay struct {
	Path   string `json:"path"`
	Source string `json:"source"`
}

// DefaultMasks are sockets whose owner would act for a contained
// process with more rights than it has, and files and folders that hold
// what other processes of the machine hold.
var defaultMasks = []string{
	"/var/run/docker.sock", "/run/docker.sock",
	"/run/containerd/containerd.sock", "/run/podman/podman.sock",
	"/run/user", "/var/run/dbus/system_bus_socket", "/run/dbus/system_bus_socket",
	// LXD (the snap Ubuntu installs, whose first user is in the lxd
	// group that a non-root planex's program keeps; and the deb) and
	// Incus: a container with the host's / mounted is root on the host.
	// Their user daemons' sockets are open to every user and make
	// containers with a network of their own.
	"/var/snap/lxd/common/lxd/unix.socket", "/var/snap/lxd/common/lxd-user/unix.socket",
	"/var/lib/lxd/unix.socket", "/var/lib/incus/unix.socket", "/var/lib/incus/unix.socket.user",
	// libvirt's daemons (the libvirt group's: a VM with the host's disk)
	// and MicroK8s's containerd (the microk8s group's).
	"/run/libvirt", "/var/run/libvirt", "/var/snap/microk8s/common/run",
	// GNU screen's sessions (Debian's and Ubuntu's build keeps them
	// here): whoever of the user's uid connects types into a session's
	// shell, outside the sandbox, also with the network open.
	"/run/screen", "/var/run/screen",
	// WSLg (Windows' Linux GUI support): its X server, Wayland and
	// PulseAudio sockets, X's "localuser" rule letting the user's
	// programs type into any window.
	"/mnt/wslg",
	// WSL's interop sockets: whoever connects starts Windows programs,
	// outside every Linux namespace.
	"/run/WSL", "/var/run/WSL",
	// Files, not sockets: a Kubernetes pod's service account token
	// (kubernetes.io/serviceaccount/token, readable by every uid: an
	// Actions Runner Controller runner's account may create pods) and
	// Docker's and Compose's secrets.
	"/run/secrets", "/var/run/secrets",
	// Crash reports (apport) and core files (systemd-coredump, with an
	// ACL for the process's user): the memory of crashed processes,
	// tokens they held included.
	"/var/crash", "/var/lib/systemd/coredump",
	// The system's logs and journal, which the adm and systemd-journal
	// groups read (the runner user of GitHub's hosted runners is in
	// both, and a non-root planex's program keeps its groups): sudo
	// logs every command line an earlier step ran with it, a password
	// or token among its arguments, and services log what they log.
	"/var/log", "/run/log",
	// Users' mail spools (a user's own is the user's to read): what cron
	// mails a user, its jobs' output, secrets they print among it.
	"/var/mail", "/var/spool/mail",
	// The Kerberos credential cache daemon (sssd-kcm, Heimdal's kcm),
	// the default cache of Fedora and RHEL (KRB5CCNAME=KCM:): it hands
	// whoever connects the tickets of the caller's uid, an ordinary
	// user's login ticket among them, and a program with the host's
	// network (--network open) could then act as that user on every
	// service of the realm.
	"/run/.heim_org.h5l.kcm-socket", "/var/run/.heim_org.h5l.kcm-socket",
	// Tailscale's daemon, open to every uid: it tells anyone the
	// tailnet's peers, and takes changes from the user named its
	// operator (tailscale up --operator=$USER, as desktops set so the
	// user needs no sudo): a Funnel or a serve that publishes a port or
	// a folder of this machine, a file sent to a peer, another exit node.
	"/run/tailscale", "/var/run/tailscale",
	// Multipass (Canonical's VM manager, a snap): its socket lets the
	// sudo group (a desktop's first user) make VMs and mount the host's
	// folders in them, as LXD's does.
	"/var/snap/multipass/common/multipass_socket",
	// The smart card daemon (pcscd): polkit lets the desktop's user use
	// every card and token it holds (a YubiKey's PIV and OpenPGP
	// applets: keys, certificates, signing where no PIN is asked).
	"/run/pcscd", "/var/run/pcscd",
	// systemd's units made at run time, readable by every uid: a
	// transient unit's (systemd-run --setenv=TOKEN=…), a runtime unit's
	// or drop-in's, and the mount units the fstab generator writes from
	// /etc/fstab with their Options= (a CIFS share's password=, which
	// the filtered /etc/fstab leaves out); and the credentials systemd
	// gives a service (LoadCredential=), its user's to read. No build
	// reads them; /run/systemd/system stays a folder, so a program
	// still tells that systemd runs. Only reachable with the network
	// open (a contained network's /run is empty).
	"/run/systemd/transient", "/run/systemd/system", "/run/systemd/generator",
	"/run/systemd/generator.early", "/run/systemd/generator.late", "/run/credentials",
	// Other CI systems' runner configurations, each holding the token
	// the runner authenticates with (whoever holds it takes the
	// organisation's jobs, with their secrets), kept outside every home
	// and readable by the user the jobs run as: CircleCI's machine
	// runner (its folder is that user's) and its older launch agent,
	// Buildkite's agent (its whole folder: the hooks beside the
	// configuration are where Buildkite's documentation has an admin
	// export every build's secrets, hooks/environment), GitLab Runner's
	// system configuration.
	"/etc/circleci-runner", "/opt/circleci/launch-agent-config.yaml",
	"/etc/buildkite-agent", "/etc/gitlab-runner",
	// A Kubernetes node's admin credentials: k3s's and RKE2's
	// configuration folders (the kubeconfig, which k3s's documentation
	// has made readable by every uid with --write-kubeconfig-mode 644
	// for kubectl without sudo, the cluster's join token in config.yaml,
	// registry passwords in registries.yaml), kubeadm's (admin.conf, the
	// control plane's keys) and MicroK8s's credentials (its group's, in
	// which a desktop's first user is).
	"/etc/rancher", "/etc/kubernetes", "/var/snap/microk8s/current/credentials",
	// containerd's and Docker's runtime state, beside their sockets: each
	// running container's bundle (config.json, with the environment a
	// token was passed in) and the shims' sockets. Only reachable with
	// the network open.
	"/run/containerd", "/var/run/containerd", "/run/docker", "/var/run/docker",
	// A VM's provisioning data, where an image's build left it
	// readable by all: cloud-init's state (the user data a self-hosted
	// runner's VM was started with, which registers it with a
	// registration token or a personal access token; a NoCloud seed's
	// user-data, written by whoever built the image; cloud-init keeps
	// its own copies root's), what it gathered at boot and the Azure
	// agent's (ovf-env.xml, its custom data). No build reads them.
	"/var/lib/cloud", "/run/cloud-init", "/var/run/cloud-init", "/var/lib/waagent",
}

// DefaultMasks returns the sockets hidden from every contained process.
func DefaultMasks() []string { return append([]string(nil), defaultMasks...) }

// sortedCopy returns a sorted copy of s.
func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
